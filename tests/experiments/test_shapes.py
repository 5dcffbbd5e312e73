"""The shape comparison: one command writes the table with its baselines, the paper's row and the normal maps;
the baselines read their grids and points exactly; its rows are the registry's methods, the overlays' settings;
sizes beyond memory are one line naming this command's flags; a signal keeps the finished rows."""

import importlib
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import trimesh
import yaml

from inr.data.mesh import MeshDataModule
from inr.experiments.comparison import Context, Member, context, parse
from inr.experiments.shapes import Shapes, main, nearest_point_field, voxel_grid_field
from inr.geometry.procedural import torus_mesh
from inr.methods.protocols import MAPPINGS, PROTOCOLS

PAPER_IOU = PROTOCOLS["shape"].test_iou
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


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
    field, count = nearest_point_field(dm, steps=3, batch_size=64)
    assert count == 192  # 3 steps of 64 points: two epochs' draws, the second cut short
    dm.prepare_training_points(0, 0)
    points, labels = dm._train[1], dm._train[2][:, 0]
    assert torch.equal(field(points), labels)


@pytest.mark.slow
def test_one_command_writes_the_table_the_papers_row_and_normal_maps(torus_file, tmp_path, capsys):
    main(
        ["--mesh", str(torus_file), "--steps", "30", "--methods", "none,gaussian", "--seeds", "2", "--batch-size", "1024",
         "--test-points", "8192", "--geometry-resolution", "32", "--out", str(tmp_path)]
    )  # fmt: skip
    text = (tmp_path / "results.md").read_text()
    assert text.strip() == capsys.readouterr().out.strip()  # printed as written
    assert "| method | IoU uniform | IoU near-surface | Chamfer-L1 | normal consistency | seconds |" in text
    for row in ("| none |", "| gaussian |", "| voxel grid ", "| nearest of 30,720 training points |"):
        assert row in text
    assert f"python -m inr.experiments.shapes --mesh {torus_file} --steps 30" in text
    assert "Table 1" in text and f"gaussian {PAPER_IOU['gaussian']:.3f}" in text
    assert " ± " in text  # two seeds: mean ± std
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    params = {r["method"]: r["params"] for r in rows if r["kind"] == "model"}
    assert len([r for r in rows if r["method"] == "gaussian"]) == 2 and params["gaussian"] > params["none"]
    voxel = next(r for r in rows if r["method"].startswith("voxel grid"))
    assert voxel["iou"] > 0.8  # a torus is smooth: labels on a grid of the network's size read it well
    for name in ("mesh", "voxel_grid", "nearest_point"):
        assert (tmp_path / f"normals_{name}.png").exists()


def test_a_missing_mesh_is_one_line_and_exit_2_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "results"
    with pytest.raises(SystemExit) as exc:
        main(["--mesh", str(tmp_path / "missing.obj"), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and err[0].startswith("error:") and "missing.obj" in err[0]
    assert not out.exists()


def build(spec):
    """A config's ``class_path``/``init_args`` as an object, nested specs first (as jsonargparse builds them)."""
    module, name = spec["class_path"].rsplit(".", 1)
    args = {k: build(v) if isinstance(v, dict) and "class_path" in v else v for k, v in spec.get("init_args", {}).items()}
    return getattr(importlib.import_module(module), name)(**args)


def notebook_features(mapping: str, v: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The shape notebook's ``input_encoder`` in float64: 2v − 1 without a mapping, else
    [cos 2πvBᵀ, sin 2πvBᵀ] / ‖a‖, a = 1 per frequency (‖a‖ = √m)."""
    v = v.double()
    if mapping == "none":
        return 2 * v - 1
    proj = 2 * math.pi * v @ b.double().T
    return torch.cat([torch.cos(proj), torch.sin(proj)], -1) / math.sqrt(len(b))


@pytest.mark.parametrize("kind", ["shape", "shape_cpu"])
@pytest.mark.parametrize("mapping", MAPPINGS)
def test_the_shape_overlays_build_the_notebooks_features_and_the_experiments_encoders(kind, mapping):
    """configs/methods/<kind>/<mapping>.yaml gives the notebook's features (none: 2v − 1; basic: B = I;
    positional: 2^linspace(0, 6, 85) − 1 per axis; Gaussian: 256 × N(0, 12²); ÷ √m), as the experiment's rows do."""
    overlay = build(yaml.safe_load((CONFIGS / "methods" / kind / f"{mapping}.yaml").read_text())["model"]["init_args"]["encoder"])
    shapes = Shapes()
    p = shapes.protocol(parse(shapes, ["--mesh", "unused.obj", *(["--paper"] if kind == "shape" else [])]))
    seeded = SimpleNamespace(seed=0)
    experiment = shapes.model(context(shapes, p, mapping, Member(None, 0), seeded)).encoder
    per_axis = 2.0 ** torch.linspace(0, 6, 85, dtype=torch.float64) - 1
    b = {
        "none": torch.zeros(0, 3),
        "basic": torch.eye(3),
        "positional": torch.block_diag(*[per_axis[:, None]] * 3),  # (255, 3): axis by axis
        "gaussian": getattr(overlay.encoder, "b", None),
    }[mapping]
    if mapping == "gaussian":
        assert b.shape == (256, 3) and abs(float(b.std()) - 12.0) < 1.0  # σ = 12 (256·3 draws: std within 1)
    v = torch.rand(100, 3, generator=torch.Generator().manual_seed(0))
    expected = notebook_features(mapping, v, b)
    torch.testing.assert_close(overlay(v).double(), expected, rtol=0, atol=1e-5)  # float32 features of |·| ≤ 1
    assert experiment.out_dim == overlay.out_dim and torch.equal(experiment(v), overlay(v))


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["--geometry-resolution", "100000"],
            "--geometry-resolution 100000: the level-set grid of 100,002³ samples needs an estimated",
        ),
        (["--batch-size", "100000000000"], "choose a smaller --batch-size"),
        (["--resolution", "64"], "--resolution: shapes has no grid"),
    ],
)
def test_sizes_beyond_memory_are_one_line_naming_the_commands_flags(tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        main(["--mesh", "data/trefoil.obj", *argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and words in err[0], err
    assert "data." not in err[0] and not (tmp_path / "out").exists()


def test_a_sigterm_keeps_the_finished_rows_in_results_json(torus_file, tmp_path, monkeypatch, capsys):
    import os
    import signal

    from inr.experiments import comparison
    from inr.experiments.results import load_results

    real = comparison.fit_row

    def fit_then_signal(*args, **kwargs):
        if kwargs["label"].startswith("gaussian"):
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(comparison, "fit_row", fit_then_signal)
    argv = ["--mesh", str(torus_file), "--steps", "2", "--methods", "none,gaussian", "--batch-size", "256"]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--test-points", "512", "--geometry-resolution", "8", "--out", str(tmp_path)])
    assert exc.value.code == 143 and "stopped by SIGTERM" in capsys.readouterr().err
    assert [r["method"] for r in load_results(tmp_path / "results.json").rows] == ["none"]


@pytest.fixture(scope="module")
def sphere_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("mesh") / "sphere.obj"
    trimesh.creation.icosphere(subdivisions=3, radius=0.4).export(path)
    return path


@pytest.mark.slow
def test_several_meshes_are_the_signals_pooled_in_the_table_and_shown_one_by_one(torus_file, sphere_file, tmp_path, capsys):
    rows = main(
        ["--mesh", f"{torus_file},{sphere_file}", "--steps", "4", "--methods", "none", "--batch-size", "256",
         "--test-points", "2048", "--geometry-resolution", "16", "--near-surface", "0.5", "--out", str(tmp_path)]
    )  # fmt: skip
    models = [r for r in rows if r["kind"] == "model"]
    assert [(r["signal"], r["seed"]) for r in models] == [("torus", 0), ("sphere", 0)]
    assert sorted(r["signal"] for r in rows if r["kind"] == "baseline") == ["sphere", "sphere", "torus", "torus"]
    text = (tmp_path / "results.md").read_text()
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]
    none = next(r for r in summary if r["method"] == "none")
    assert none["n"] == 2 and none["iou"] == pytest.approx((models[0]["iou"] + models[1]["iou"]) / 2)
    line = next(ln for ln in text.splitlines() if ln.startswith("| none |") and "/" in ln)  # the per-mesh table
    assert (
        line
        == f"| none | {models[0]['iou']:.4f} / {models[0]['iou_surface']:.4f} | {models[1]['iou']:.4f} / {models[1]['iou_surface']:.4f} |"
    )
    assert "50% of them at surface + N(0, 0.01²)" in text
    for name in ("torus_mesh", "sphere_mesh", "torus_voxel_grid", "sphere_nearest_point", "sphere_voxel_grid"):
        assert (tmp_path / f"normals_{name}.png").exists(), name
    capsys.readouterr()


def test_the_near_surface_share_reaches_the_training_points(torus_file):
    shapes = Shapes()
    p = shapes.protocol(parse(shapes, ["--mesh", str(torus_file), "--batch-size", "1000", "--near-surface", "0.25"]))
    dm = shapes.data(Context(p, Member(None, 0)))
    assert dm.near_surface_fraction == 0.25
    dm.prepare_training_points(0, 0)
    points = dm._train[1][:1000].double().numpy()
    distance = np.abs(dm.queries.signed_distance(points))  # the near quarter of each batch lies within ~3·0.01·√3
    assert (np.sort(distance)[:250] < 0.06).all() and np.median(distance) > 0.02


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--near-surface", "1.5"], "--near-surface must lie in [0, 1], got 1.5"),
        (["--mesh", "data/trefoil.obj,data/trefoil.obj"], "each once"),
    ],
)
def test_bad_mesh_lists_and_shares_are_one_line(tmp_path, capsys, argv, words):
    argv = ["--mesh", "data/trefoil.obj", *argv] if argv[0] != "--mesh" else argv
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and words in err[0], err
    assert not (tmp_path / "out").exists()


def test_the_paired_lines_read_both_iou_sets_per_mesh_to_a_thousandth():
    from inr.experiments.comparison import row_notes

    # three meshes, one seed: the Gaussian row above the positional one by 0.010 / 0.030 on each, the nearest-point
    # baseline (seedless) 0.002 below / 0.004 above the Gaussian row on every mesh
    rows = []
    for k, mesh in enumerate(("armadillo", "dragon", "buddha")):
        for method, iou, near in (("positional", 0.95, 0.88), ("gaussian", 0.96, 0.91), ("nearest", 0.962, 0.914)):
            seed = None if method == "nearest" else 0
            rows.append({"method": method, "signal": mesh, "seed": seed, "iou": iou + k / 100, "iou_surface": near})
    summary = [
        {"method": "positional", "kind": "model", "iou": 0.96},
        {"method": "gaussian", "kind": "model", "iou": 0.97},
        {"method": "nearest", "kind": "baseline", "iou": 0.972},
    ]
    text = row_notes(Shapes(), None, rows, summary)
    uniform, near = text.split("Paired differences of IoU near-surface")
    assert "- gaussian − positional: +0.010 ± 0.000 over 3 pairs from 3 signals (gaussian above in 3;" in uniform
    assert "- gaussian − nearest: -0.002 ± 0.000 over 3 pairs from 3 signals (gaussian above in 0;" in uniform
    assert uniform.strip().endswith("nearest above gaussian")
    assert "- gaussian − positional: +0.030 ± 0.000 over 3 pairs" in near
    assert "- gaussian − nearest: -0.004 ± 0.000 over 3 pairs" in near
