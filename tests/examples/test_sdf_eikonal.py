"""The "write your own task" example: its eikonal term on an exact distance, a training through the CLI
whose zero level set is the sphere, and the example run as a script."""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from inr.data.sdf import SPHERE_CENTER, SPHERE_RADIUS
from inr.encoders import IdentityEncoding
from inr.export.mesh import extract_mesh
from inr.run.cli import cli_main

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "examples" / "sdf_eikonal.yaml")
TINY = [
    "--config",
    CONFIG,
    "--data.init_args.resolution",
    "16",
    "--data.init_args.batch_size",
    "1024",
    "--data.init_args.steps_per_epoch",
    "25",
    "--trainer.max_steps",
    "150",
    "--trainer.enable_progress_bar",
    "false",
]


@pytest.fixture()
def example(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # the config names classes as examples.sdf_eikonal.*
    import examples.sdf_eikonal as module

    return module


class SphereDistance(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()

    def forward(self, v):
        return (v - v.new_tensor(SPHERE_CENTER)).norm(dim=-1, keepdim=True) - SPHERE_RADIUS


def test_exact_distance_has_zero_eikonal_residual_and_loss(example):
    task = example.SDFFitting(encoder=IdentityEncoding(3), network=SphereDistance)
    coords = torch.rand(500, 3, generator=torch.Generator().manual_seed(0))
    raw, norm = task.gradient_norm(coords)
    torch.testing.assert_close(norm, torch.ones(500), atol=1e-5, rtol=0)
    batch = {"coords": coords, "values": raw.detach(), "full_batch": False}
    assert float(task.training_step(batch, 0)) < 1e-9
    batch["values"] = raw.detach() + 0.1  # off by 0.1 everywhere: the L1 term alone, 0.1
    assert float(task.training_step(batch, 0)) == pytest.approx(0.1, abs=1e-5)


@pytest.mark.slow
def test_sdf_task_trains_through_the_cli_and_its_zero_set_is_the_sphere(example, tmp_path):
    cli = cli_main(TINY + ["--trainer.logger.init_args.save_dir", str(tmp_path)])
    results = cli.model.evaluate()
    assert results["test/mae"] < 0.5 / 16, results  # below half a voxel of the 16³ grid on held-out voxels
    verts, _ = extract_mesh(cli.model, resolution=32, level=0.0)
    radius = np.linalg.norm(verts - np.asarray(SPHERE_CENTER), axis=1)
    assert np.abs(radius - SPHERE_RADIUS).max() < 1 / 16
    coords = torch.rand(400, 3, generator=torch.Generator().manual_seed(1)) * 0.6 + 0.2
    _, norm = cli.model.gradient_norm(coords)
    assert float((norm - 1).abs().mean()) < 0.1  # the eikonal term made it close to a distance


def test_example_runs_as_a_script(tmp_path, monkeypatch, capsys):
    # `python examples/sdf_eikonal.py ...`, executed in this process to spare an interpreter start
    argv = [
        "sdf_eikonal.py",
        "--trainer.max_steps",
        "3",
        "--data.init_args.resolution",
        "8",
        "--trainer.enable_progress_bar",
        "false",
        "--trainer.logger.init_args.save_dir",
        str(tmp_path),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script prepends the repository root
    runpy.run_path(str(ROOT / "examples" / "sdf_eikonal.py"), run_name="__main__")
    assert "summary: test/mae" in capsys.readouterr().out
    assert list(tmp_path.glob("sdf/version_0/checkpoints/last.ckpt"))
