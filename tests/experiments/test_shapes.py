"""The shape comparison: one command writes the table with its baselines, the paper's row and the normal maps;
the baselines read their grids and points exactly."""

import json

import numpy as np
import pytest
import torch
import trimesh

from inr.data.mesh import MeshDataModule
from inr.experiments.shapes import PAPER_IOU, ShapeProtocol, main, nearest_point_field, voxel_grid_field
from inr.geometry.procedural import torus_mesh


@pytest.fixture(scope="module")
def torus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("mesh") / "torus.obj"
    verts, faces = torus_mesh(0.35, 0.12, segments=64, sides=24)
    trimesh.Trimesh(verts, faces, process=False).export(path)
    return path


def test_the_voxel_grid_reads_its_labels_at_the_nodes_and_between_them_trilinearly(torus_file):
    dm = MeshDataModule(
        path=str(torus_file), test_points=1024, resolution=8, surface_samples=1000, batch_size=64, steps_per_epoch=2
    )
    dm.setup("fit")
    field, n = voxel_grid_field(dm, 1000)
    assert n == 10
    axes = [np.linspace(dm.box[0, k], dm.box[1, k], n) for k in range(3)]
    nodes = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    labels = dm.label(nodes)[:, 0]
    assert torch.allclose(field(torch.from_numpy(nodes).float()), torch.from_numpy(labels), atol=1e-5)
    # halfway between two nodes along z: the mean of their labels
    mid = (nodes[:1] + nodes[1:2]) / 2
    assert float(field(torch.from_numpy(mid).float())) == pytest.approx(labels[:2].mean(), abs=1e-5)


def test_the_nearest_point_baseline_returns_its_training_labels(torus_file):
    dm = MeshDataModule(
        path=str(torus_file), test_points=1024, resolution=8, surface_samples=1000, batch_size=64, steps_per_epoch=2
    )
    dm.setup("fit")
    field, count = nearest_point_field(dm, ShapeProtocol(batch_size=64, steps=3))
    assert count == 192  # 3 steps of 64 points: two epochs' draws, the second cut short
    dm.prepare_training_points(0, 0)
    points, labels = dm._train[1], dm._train[2][:, 0]
    assert torch.equal(field(points), labels)


@pytest.mark.slow
def test_one_command_writes_the_table_the_papers_row_and_normal_maps(torus_file, tmp_path, capsys):
    out = main(
        ["--mesh", str(torus_file), "--steps", "30", "--rows", "none", "gaussian", "--seeds", "2", "--batch-size", "1024",
         "--test-points", "8192", "--geometry-resolution", "32", "--out", str(tmp_path)]
    )  # fmt: skip
    text = out.read_text()
    assert "| method | IoU uniform | IoU near-surface | Chamfer-L1 | normal consistency | seconds |" in text
    for row in ("| none |", "| gaussian |", "| voxel grid ", "| nearest of 30,720 training points |"):
        assert row in text
    assert f"python -m inr.experiments.shapes --mesh {torus_file} --steps 30" in text
    assert "Table 1" in text and f"gaussian {PAPER_IOU['gaussian']:.3f}" in text
    assert " ± " in text  # two seeds: mean ± std
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results["rows"]["gaussian"]) == 2 and results["params"]["gaussian"] > results["params"]["none"]
    voxel = next(v for k, v in results["rows"].items() if k.startswith("voxel grid"))[0]
    assert voxel["iou_easy"] > 0.8  # a torus is smooth: labels on a grid of the network's size read it well
    for name in ("mesh", "voxel_grid", "nearest_point"):
        assert (tmp_path / f"normals_{name}.png").exists()


@pytest.mark.parametrize("mapping", list(PAPER_IOU))
def test_the_shape_overlays_build_the_experiments_encoders(mapping):
    """configs/encoders/shape/<mapping>.yaml and the experiment's ``paper_encoder`` give the same features."""
    import importlib
    from pathlib import Path

    import yaml

    from inr.experiments.shapes import paper_encoder

    def build(spec):
        module, name = spec["class_path"].rsplit(".", 1)
        args = {k: build(v) if isinstance(v, dict) and "class_path" in v else v for k, v in spec.get("init_args", {}).items()}
        return getattr(importlib.import_module(module), name)(**args)

    path = Path(__file__).resolve().parents[2] / "configs" / "encoders" / "shape" / f"{mapping}.yaml"
    overlay = build(yaml.safe_load(path.read_text())["model"]["init_args"]["encoder"])
    reference = paper_encoder(mapping, ShapeProtocol())
    v = torch.rand(100, 3, generator=torch.Generator().manual_seed(0))
    assert overlay.out_dim == reference.out_dim and torch.allclose(overlay(v), reference(v), atol=1e-6)
