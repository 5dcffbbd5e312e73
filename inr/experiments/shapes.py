"""The paper's 3D shape occupancy comparison on one mesh, with SIREN, a hash grid and two baselines that train nothing.

    python -m inr.experiments.shapes --mesh data/trefoil.obj                      # CPU size: 4 × 128, 4,096 points, 400 steps
    python -m inr.experiments.shapes --mesh dragon.obj --paper --seeds 3 --out runs/shapes_dragon   # the paper's sizes (GPU)

Every network row trains ``ShapeFitting`` on ``MeshDataModule`` (occupancy, fresh points uniform in the box every
step, BCE on logits) through the runner's quiet Trainer (``runner.fit_row``) and is scored on the same two held-out
sets (``test_seed`` 0): IoU on 2^18 uniform points and on 2^18 points near the surface, and the Chamfer-L1 and
normal consistency of its level-set mesh against 100,000 surface samples of the mesh
(``inr.geometry.surface_metrics``). The rows are methods of the registry (``methods.METHODS``) resolved for the
shape protocol (``protocols.PROTOCOLS["shape_cpu"]``, with ``--paper`` ``["shape"]``; ``methods.SHAPE_SETTINGS``),
the same settings as the overlays ``configs/methods/shape_cpu/`` (for shape.yaml) and ``configs/methods/shape/``
(for shape_paper.yaml):
- ``none``, ``basic``, ``positional``, ``gaussian``: the paper's mappings as its notebook builds them (2v − 1;
  B = I; 2^linspace(0, 6, 85) − 1 per axis; 256 × N(0, 12²); features ÷ ‖a‖ = √m), stax-initialised ReLU MLP;
  Adam 5e-4 decayed ×0.1 per half run with ``--paper`` (the notebook: per 5,000 of 10,000 steps), at CPU size a
  constant 1e-3: in a few hundred steps 5e-4, or any decay, leaves every row at its all-outside start (measured:
  IoU 0 for none, basic and positional after 400 steps of 1e-3 decayed);
- ``siren``: a SIREN of the same width and depth (ω₀ = 30, Sitzmann et al. 2020), Adam 1e-4 (its shape script's rate);
- ``hashgrid``: a multiresolution hash encoding (16 levels, 2 features, N 16 → 512, T = 2^17, with ``--paper``
  2^19) and a 2 × 64 ReLU MLP, Adam 1e-2, β = (0.9, 0.99), ε = 1e-15 (Müller et al. 2022);
- ``voxel grid``: the occupancy labels on a regular grid over the box with as many values as the Gaussian row has
  parameters, read by trilinear interpolation (σ > ½ inside);
- ``nearest point``: the label of the nearest training point (the first 2^22 points the network rows saw).
Seconds: a network row's fit; a baseline's construction. With ``--seeds S`` the networks train S times (seed s
draws the network, the features and the training points; the held-out sets stay), and the table shows mean ±
sample standard deviation. Writes ``results.md`` (the table, the command, the paper's row), ``results.json`` and one
normal map per row (``normals_<row>.png``, ``normals_mesh.png`` for the ground truth) into ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Optional

import imageio.v3 as iio
import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from scipy.spatial import cKDTree
from torch import Tensor

from inr.data.mesh import MeshDataModule
from inr.experiments.methods import METHODS, SHAPE_ROWS, SHAPE_SETTINGS, Resolved, Setting
from inr.experiments.protocols import PROTOCOLS, MappingSettings, paper_row
from inr.experiments.runner import (
    Column,
    ExperimentParser,
    RowProgress,
    command,
    fit_row,
    markdown_table,
    prepare_out,
    silence_lightning,
    summarise,
    write_results,
)
from inr.export.normal_map import normal_map
from inr.geometry.level_set import level_set_mesh
from inr.geometry.sampling import sample_surface
from inr.geometry.surface_metrics import surface_distances
from inr.io.allocator import retain_freed_memory
from inr.metrics import iou
from inr.tasks.shape import SURFACE_SAMPLE_SEED, ShapeFitting

# the nearest-point baseline's k-d tree holds at most this many training points (the paper's run sees 327 M)
NEAREST_POINTS = 2**22
COLUMNS = (
    Column("method", "method", "s"),
    Column("IoU uniform", "iou_easy", ".4f"),
    Column("IoU near-surface", "iou_hard", ".4f"),
    Column("Chamfer-L1", "chamfer_l1", ".4f"),
    Column("normal consistency", "normal_consistency", ".4f"),
    Column("seconds", "seconds", ".1f"),
)
NUMERIC = tuple(c.key for c in COLUMNS if c.spec != "s")


@dataclass(frozen=True)
class ShapeProtocol:
    """What every row of one comparison shares: the mapping protocol ``PROTOCOLS[kind]`` (the MLP, learning rates
    and mappings) run for ``steps``, and the sizes of the data and the scores. Defaults: CPU size; ``paper()``:
    the notebook's (3d_shape_occupancy.ipynb)."""

    kind: str = "shape_cpu"
    steps: int = PROTOCOLS["shape_cpu"].steps
    batch_size: int = 4096
    test_points: int = 2**18
    surface_samples: int = 100_000
    geometry_resolution: int = 128
    render_size: int = 256
    seed: int = 0

    @staticmethod
    def paper() -> ShapeProtocol:
        return ShapeProtocol(kind="shape", steps=PROTOCOLS["shape"].steps, batch_size=32768, geometry_resolution=256)

    @property
    def mappings(self) -> MappingSettings:
        """The protocol's settings for a run of ``steps`` (a decay spans the run: ×0.1 per half of it)."""
        return replace(PROTOCOLS[self.kind], steps=self.steps)

    def setting(self) -> Setting:
        """Where the registry's methods run: ``SHAPE_SETTINGS`` with this run's steps and seed."""
        return replace(SHAPE_SETTINGS[self.kind], protocol=self.mappings, seed=self.seed)

    @property
    def steps_per_epoch(self) -> int:
        return min(self.steps, 100)


def resolve(name: str, p: ShapeProtocol) -> Resolved:
    """The registry's method ``name`` for the protocol's setting."""
    return METHODS[name].resolve(p.setting())


def build_model(spec: Resolved, p: ShapeProtocol) -> ShapeFitting:
    """A row's ``ShapeFitting``: the method's encoder, network, optimiser and scheduler, occupancy mode."""
    encoder, network, optimizer = spec.build()
    return ShapeFitting(
        encoder,
        network,
        optimizer=optimizer,
        scheduler=spec.build_scheduler(),
        mode="occupancy",
        geometry_resolution=p.geometry_resolution,
    )


def make_data(mesh: str, p: ShapeProtocol) -> MeshDataModule:
    return MeshDataModule(
        path=mesh,
        mode="occupancy",
        batch_size=p.batch_size,
        steps_per_epoch=p.steps_per_epoch,
        test_points=p.test_points,
        surface_samples=p.surface_samples,
        resolution=32,
        seed=p.seed,
    )


def parameter_count(model: torch.nn.Module) -> int:
    return sum(t.numel() for t in model.parameters())


# --- scoring any field (networks and baselines alike) ------------------------------------------------
def score_field(occupancy: Callable[[Tensor], Tensor], dm: MeshDataModule, resolution: int, chunk: int = 65536) -> dict[str, Any]:
    """IoU on both held-out sets, and the level-set mesh (½) over the box with its Chamfer-L1 and normal
    consistency against the data's surface samples; ``occupancy``: points (N, 3) -> probabilities (N,)."""
    out: dict[str, Any] = {}
    with torch.no_grad():
        for name in ("easy", "hard"):
            points, labels = dm.heldout(name)
            pred = torch.cat([occupancy(c) for c in points.split(chunk)])
            out[f"iou_{name}"] = iou(pred.numpy() > 0.5, labels[:, 0].numpy() > 0.5)
        try:
            verts, faces = level_set_mesh(occupancy, dm.box, resolution, 0.5)
        except ValueError:  # no surface: the field is all inside or all outside
            verts = faces = None
    if verts is not None:
        gt_points, gt_normals = dm.surface()
        points, normals = sample_surface(verts, faces, len(gt_points), np.random.default_rng(SURFACE_SAMPLE_SEED))
        distances = surface_distances(points, normals, gt_points.numpy(), gt_normals.numpy())
        out.update(chamfer_l1=distances["chamfer_l1"], normal_consistency=distances["normal_consistency"])
    else:
        out.update(chamfer_l1=float("nan"), normal_consistency=float("nan"))
    out["mesh"] = (verts, faces)
    return out


def voxel_grid_field(dm: MeshDataModule, values: int) -> tuple[Callable[[Tensor], Tensor], int]:
    """Labels on an n³ grid over the box (corners included), n = round(values^(1/3)), read trilinearly."""
    n = max(2, round(values ** (1 / 3)))
    axes = [np.linspace(dm.box[0, k], dm.box[1, k], n) for k in range(3)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)  # (n³, 3), x slowest
    labels = torch.from_numpy(dm.label(grid)[:, 0]).reshape(1, 1, n, n, n)  # (1, 1, X, Y, Z)
    lo, hi = torch.tensor(dm.box[0]).float(), torch.tensor(dm.box[1]).float()

    def field(points: Tensor) -> Tensor:
        unit = 2 * (points - lo) / (hi - lo) - 1  # the box -> [−1, 1]³
        # grid_sample's last coordinate indexes the input's last axis: (x, y, z) -> (z, y, x)
        sample = unit.flip(-1).reshape(1, -1, 1, 1, 3)
        return F.grid_sample(labels, sample, mode="bilinear", align_corners=True, padding_mode="border").reshape(-1)

    return field, n


def nearest_point_field(
    dm: MeshDataModule, p: ShapeProtocol, limit: int = NEAREST_POINTS
) -> tuple[Callable[[Tensor], Tensor], int]:
    """The label of the nearest of the first ``limit`` training points the networks saw (fresh draws, epoch by epoch)."""
    points, labels, epoch = [], [], 0
    total = min(limit, p.steps * p.batch_size)
    while sum(len(x) for x in points) < total:
        dm.prepare_training_points(epoch, 0)
        points.append(dm._train[1].numpy())
        labels.append(dm._train[2][:, 0].numpy())
        epoch += 1
    points, labels = np.concatenate(points)[:total], np.concatenate(labels)[:total]
    tree = cKDTree(points)

    def field(query: Tensor) -> Tensor:
        _, index = tree.query(query.numpy(), k=1, workers=-1)
        return torch.from_numpy(labels[index]).float()

    return field, total


# --- the rows -------------------------------------------------------------------------------------
def network_row(name: str, p: ShapeProtocol, mesh: str) -> tuple[dict[str, Any], tuple]:
    """Train and score one network row (seed ``p.seed``); the row and its level-set mesh (verts, faces)."""
    # resolved before seeding: describing a hash grid builds one, which draws from the global generator
    spec = resolve(name, p)
    L.seed_everything(p.seed, verbose=False)
    dm = make_data(mesh, p)
    dm.setup("fit")  # the held-out labels and the grid before the clock starts: seconds are the training's
    model = build_model(spec, p)
    seconds = fit_row(model, dm, p.steps)
    scores = score_field(lambda x: model.predict(x)[:, 0], dm, p.geometry_resolution)
    level_set = scores.pop("mesh")
    row = {
        "method": name,
        "kind": "model",
        "seed": p.seed,
        "setting": spec.describe,
        "lr": spec.lr,
        **scores,
        "seconds": seconds,
        "steps": p.steps,
        "params": parameter_count(model),
    }
    return row, level_set


def baseline_row(
    label: Callable[[int], str], build: Callable[[], tuple[Callable[[Tensor], Tensor], int]], dm: MeshDataModule, p: ShapeProtocol
) -> tuple[dict[str, Any], tuple]:
    """Build a field that trains nothing (timed: its seconds) and score it; the row, named by ``label(size)``, and
    its level-set mesh."""
    start = time.perf_counter()
    field, size = build()
    built = time.perf_counter() - start
    scores = score_field(field, dm, p.geometry_resolution)
    level_set = scores.pop("mesh")
    return {"method": label(size), "kind": "baseline", "seed": None, **scores, "seconds": built, "steps": 0}, level_set


def compare(args: argparse.Namespace, rows: list[dict[str, Any]]) -> Path:
    p = protocol_from_args(args)
    dm = make_data(args.mesh, p)  # seed 0: the training points of the seed-0 rows, which the baselines read
    dm.setup("fit")  # a bad mesh fails here, before anything is written
    out = prepare_out(args.out)
    progress = RowProgress(args.seeds * len(args.rows) + 2)
    meshes: dict[str, tuple] = {}
    for seed in range(args.seeds):
        for name in args.rows:
            row, level_set = network_row(name, replace(p, seed=seed), args.mesh)
            rows.append(row)
            meshes.setdefault(name, level_set)
            progress.row(f"{name} (seed {seed})", summary_line(row))
    params = {r["method"]: r["params"] for r in rows}
    budget = params.get("gaussian") or parameter_count(build_model(resolve("gaussian", p), p))
    for key, label, build in (
        ("voxel grid", lambda n: f"voxel grid {n}³ (trilinear)", lambda: voxel_grid_field(dm, budget)),
        ("nearest point", lambda n: f"nearest of {n:,} training points", lambda: nearest_point_field(dm, p)),
    ):
        row, meshes[key] = baseline_row(label, build, dm, p)
        rows.append(row)
        progress.row(row["method"], summary_line(row))

    summary = summarise(rows, NUMERIC)
    table = markdown_table(summary, COLUMNS)
    m = p.mappings
    settings = "; ".join(
        f"{r['method']} {r['setting']}, lr {r['lr']:.0e}" for r in rows if r["kind"] == "model" and r["seed"] == 0
    )
    text = (
        f"# 3D shape occupancy: {args.mesh}\n\n    python -m inr.experiments.shapes {' '.join(args.argv)}\n\n{table}\n\n"
        f"Sizes: {m.depth} × {m.width} MLPs, {p.batch_size:,} fresh points per step, {p.steps:,} steps, seeds 0–{args.seeds - 1} "
        f"(mean ± sample standard deviation); held-out sets of {p.test_points:,} points each (test seed 0); Chamfer and "
        f"normals from {p.surface_samples:,} surface samples of each mesh, the field meshed at {p.geometry_resolution}³ over "
        "the box. Parameters: "
        + ", ".join(f"{k} {v:,}" for k, v in params.items())
        + f". Settings: {settings}.\n\n{paper_row('shape')}\n"
    )
    protocol = {**asdict(p), "mappings": asdict(m)}
    write_results(out, text, {"mesh": args.mesh, "protocol": protocol, "rows": rows, "summary": summary})
    iio.imwrite(out / "normals_mesh.png", normal_map(dm.normalised, dm.faces, dm.box, p.render_size))
    for name, (verts, faces) in meshes.items():
        if verts is not None:
            iio.imwrite(out / f"normals_{name.replace(' ', '_')}.png", normal_map(verts, faces, dm.box, p.render_size))
    print(text)
    return out / "results.md"


def summary_line(row: dict[str, Any]) -> str:
    return f"IoU {row['iou_easy']:.4f} uniform, {row['iou_hard']:.4f} near the surface, {row['seconds']:.1f} s"


def protocol_from_args(args: argparse.Namespace) -> ShapeProtocol:
    p = ShapeProtocol.paper() if args.paper else ShapeProtocol()
    sizes = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "test_points": args.test_points,
        "geometry_resolution": args.geometry_resolution,
    }
    return replace(p, **{k: v for k, v in sizes.items() if v is not None})


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--mesh", required=True, help="OBJ, PLY, STL, OFF or GLB file (watertight)")
    parser.add_argument("--steps", type=int, default=None, help="training steps per row (default 400; --paper 10,000)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per network row (mean ± std)")
    parser.add_argument("--batch-size", type=int, default=None, help="training points per step (default 4,096; --paper 32,768)")
    parser.add_argument("--test-points", type=int, default=None, help="points per held-out set (default 2^18, the paper's)")
    parser.add_argument(
        "--geometry-resolution", type=int, default=None, help="samples per axis of the meshed fields (default 128; --paper 256)"
    )
    parser.add_argument("--out", default="runs/shapes", help="folder of results.md, results.json and the normal maps")
    parser.add_argument("--paper", action="store_true", help="the paper's sizes: 8 × 256, 32,768 points, 10,000 steps (a GPU)")
    parser.add_argument("--rows", nargs="+", default=list(SHAPE_ROWS), choices=SHAPE_ROWS, help="network rows (default all)")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the command line printed with the table
    counts = (args.steps, args.batch_size, args.test_points)
    if args.seeds < 1 or any(c is not None and c < 1 for c in counts) or (args.geometry_resolution or 2) < 2:
        parser.error("--seeds, --steps, --batch-size and --test-points must be ≥ 1, --geometry-resolution ≥ 2")
    return args


def main(argv: Optional[list[str]] = None) -> Path:
    """Run the comparison; print and write the table; return the path of ``results.md``."""
    args = parse_args(argv)
    silence_lightning()
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    rows: list[dict[str, Any]] = []
    return command(lambda: compare(args, rows), lambda: markdown_table(summarise(rows, NUMERIC), COLUMNS) if rows else "")


if __name__ == "__main__":
    main()
