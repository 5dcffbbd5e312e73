"""The paper's 3D shape occupancy comparison on one mesh, with SIREN, a hash grid and two baselines that train nothing.

    python -m inr.experiments.shapes --mesh data/trefoil.obj                      # CPU size: 4 × 128, 4,096 points, 400 steps
    python -m inr.experiments.shapes --mesh dragon.obj --paper --seeds 3 --out runs/shapes_dragon   # the paper's sizes (GPU)

Every network row trains ``ShapeFitting`` on ``MeshDataModule`` (occupancy, fresh points uniform in the box every
step, BCE on logits) in a quiet Lightning Trainer and is scored on the same two held-out sets (``test_seed`` 0):
IoU on 2^18 uniform points and on 2^18 points near the surface, and the Chamfer-L1 and normal consistency of its
level-set mesh against 100,000 surface samples of the mesh (``inr.geometry.surface_metrics``). Rows:
- ``none``, ``basic``, ``positional``, ``gaussian``: the paper's mappings as its notebook builds them
  (``configs/encoders/shape/``: 2v − 1; B = I; 2^linspace(0, 6, 85) − 1 per axis; 256 × N(0, 12²); features ÷ ‖a‖),
  stax-initialised ReLU MLP; Adam 5e-4 decayed ×0.1 per half run with ``--paper`` (the notebook: per 5,000 of
  10,000 steps), at CPU size a constant 1e-3: in a few hundred steps 5e-4, or any decay, leaves every row at its
  all-outside start (measured: IoU 0 for none, basic and positional after 400 steps of 1e-3 decayed);
- ``siren``: a SIREN of the same width and depth (ω₀ = 30, Sitzmann et al. 2020), Adam 1e-4 (its paper's rate);
- ``hashgrid``: a multiresolution hash encoding (16 levels, 2 features, N 16 → 512, T = 2^log2_hashmap) and a
  2 × 64 ReLU MLP, Adam 1e-2, β = (0.9, 0.99), ε = 1e-15 (Müller et al. 2022);
- ``voxel grid``: the occupancy labels on a regular grid over the box with as many values as the Gaussian row has
  parameters, read by trilinear interpolation (σ > ½ inside);
- ``nearest point``: the label of the nearest training point (the first 2^22 points the network rows saw).
Seconds: a network row's fit; a baseline's construction. With ``--seeds S`` the networks train S times (seed s
draws the network, the features and the training points; the held-out sets stay), and the table shows mean ± std.
Writes ``results.md`` (the table, the command, the paper's row), ``results.json`` and one normal map per row
(``normals_<row>.png``, ``normals_mesh.png`` for the ground truth) into ``--out``. ``fit_row`` is the one place a
row is trained.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
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
from inr.encoders import AffineEncoding, BasicEncoding, GaussianEncoding, HashGridEncoding, IdentityEncoding, PositionalEncoding
from inr.errors import EXIT_INPUT, InputError
from inr.export.normal_map import normal_map
from inr.geometry.level_set import level_set_mesh
from inr.geometry.sampling import sample_surface
from inr.geometry.surface_metrics import iou, surface_distances
from inr.io.allocator import retain_freed_memory
from inr.networks import MLP, SIREN
from inr.tasks.shape import SURFACE_SAMPLE_SEED, ShapeFitting

# Tancik et al. 2020, Table 1, "3D Shape (IoU)": mean over the Stanford dragon, buddha, armadillo and lucy
PAPER_IOU = {"none": 0.864, "basic": 0.892, "positional": 0.960, "gaussian": 0.973}
# the nearest-point baseline's k-d tree holds at most this many training points (the paper's run sees 327 M)
NEAREST_POINTS = 2**22


@dataclass(frozen=True)
class ShapeProtocol:
    """The sizes of one comparison. Defaults: CPU size; ``paper()``: the notebook's (3d_shape_occupancy.ipynb)."""

    width: int = 128
    depth: int = 4  # hidden layers (the notebook's make_network(8, 256) is 7 hidden + the output layer)
    batch_size: int = 4096
    steps: int = 400
    lr: float = 1e-3  # the notebook's 5e-4 (paper()) barely leaves the all-outside start in a few hundred steps
    decay: bool = False  # the notebook's ×0.1 per half run (paper()); at CPU size it stops the rows before they start
    num_features: int = 256
    gaussian_sigma: float = 12.0
    positional_scale: float = 6.0
    test_points: int = 2**18
    surface_samples: int = 100_000
    geometry_resolution: int = 128
    log2_hashmap: int = 17
    render_size: int = 256
    seed: int = 0

    @staticmethod
    def paper() -> ShapeProtocol:
        return ShapeProtocol(
            width=256, depth=7, batch_size=32768, steps=10_000, lr=5e-4, geometry_resolution=256, log2_hashmap=19
        )

    @property
    def steps_per_epoch(self) -> int:
        return min(self.steps, 100)


def paper_encoder(mapping: str, p: ShapeProtocol):
    """The notebook's ``input_encoder`` for a mapping: features ÷ ‖a‖ = √(number of frequencies); none: 2v − 1."""
    if mapping == "none":
        return AffineEncoding(IdentityEncoding(3), scale=2.0, shift=-1.0)
    if mapping == "basic":
        return AffineEncoding(BasicEncoding(3), scale=1 / math.sqrt(3))
    if mapping == "positional":
        per_axis = p.num_features // 3  # the notebook's embedding_size // 3 = 85
        enc = PositionalEncoding(3, per_axis, sigma=2.0**p.positional_scale, endpoint=True, minus_one=True)
        return AffineEncoding(enc, scale=1 / math.sqrt(3 * per_axis))
    enc = GaussianEncoding(3, p.num_features, p.gaussian_sigma, seed=p.seed)
    return AffineEncoding(enc, scale=1 / math.sqrt(p.num_features))


def halving_decay(p: ShapeProtocol) -> Callable:
    """lr·0.1^(step / (steps/2)): the notebook's ×0.1 per 5,000 of its 10,000 steps, stretched to the run."""
    return partial(torch.optim.lr_scheduler.ExponentialLR, gamma=0.1 ** (1 / max(1, p.steps // 2)))


def build_model(row: str, p: ShapeProtocol) -> ShapeFitting:
    common = {"mode": "occupancy", "geometry_resolution": p.geometry_resolution}
    if row in PAPER_IOU:
        network = partial(MLP, width=p.width, depth=p.depth, activation="relu", output_activation="none", init="paper")
        optimizer = partial(torch.optim.Adam, lr=p.lr)
        scheduler = halving_decay(p) if p.decay else None
        return ShapeFitting(paper_encoder(row, p), network, optimizer=optimizer, scheduler=scheduler, **common)
    if row == "siren":
        network = partial(SIREN, width=p.width, depth=p.depth, first_omega_0=30.0, hidden_omega_0=30.0, output_activation="none")
        return ShapeFitting(IdentityEncoding(3), network, optimizer=partial(torch.optim.Adam, lr=1e-4), **common)
    if row == "hashgrid":
        enc = HashGridEncoding(
            3, n_levels=16, n_features_per_level=2, log2_hashmap_size=p.log2_hashmap, base_resolution=16, finest_resolution=512
        )
        network = partial(MLP, width=64, depth=2, activation="relu", output_activation="none")
        optimizer = partial(torch.optim.Adam, lr=1e-2, betas=(0.9, 0.99), eps=1e-15)
        return ShapeFitting(enc, network, optimizer=optimizer, **common)
    raise ValueError(f"unknown row {row!r}")


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


def fit_row(model: ShapeFitting, dm: MeshDataModule, steps: int) -> float:
    """Train one row in a quiet Lightning Trainer (no logger, checkpoints or validation); its wall seconds."""
    trainer = L.Trainer(
        max_steps=steps,
        logger=False,
        limit_val_batches=0,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        devices=1,
    )
    start = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    seconds = time.perf_counter() - start
    model.eval()
    return seconds


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


# --- the table ------------------------------------------------------------------------------------
COLUMNS = (
    ("iou_easy", "IoU uniform"),
    ("iou_hard", "IoU near-surface"),
    ("chamfer_l1", "Chamfer-L1"),
    ("normal_consistency", "normal consistency"),
    ("seconds", "seconds"),
)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean and standard deviation (over seeds) of each column."""
    out = {}
    for key, _ in COLUMNS:
        values = np.array([r[key] for r in runs], dtype=np.float64)
        out[key] = (float(values.mean()), float(values.std()) if len(values) > 1 else None)
    return out


def markdown_table(rows: dict[str, dict[str, Any]]) -> str:
    lines = ["| method | " + " | ".join(title for _, title in COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
    for name, stats in rows.items():
        cells = []
        for key, _ in COLUMNS:
            mean, std = stats[key]
            digits = 1 if key == "seconds" else 4
            cells.append("—" if math.isnan(mean) else f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if std else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paper_line() -> str:
    numbers = ", ".join(f"{k} {v:.3f}" for k, v in PAPER_IOU.items())
    return f"The paper (Tancik et al. 2020, Table 1, 3D shape occupancy, mean IoU over four Stanford meshes at 10,000 steps): {numbers}."


def run(args: argparse.Namespace) -> Path:
    p = ShapeProtocol.paper() if args.paper else ShapeProtocol()
    sizes = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "test_points": args.test_points,
        "geometry_resolution": args.geometry_resolution,
    }
    p = replace(p, **{k: v for k, v in sizes.items() if v is not None})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict[str, Any]]] = {}
    params: dict[str, int] = {}
    meshes: dict[str, tuple] = {}
    for seed in range(args.seeds):
        ps = replace(p, seed=seed)
        for row in args.rows:
            L.seed_everything(seed, verbose=False)
            dm = make_data(args.mesh, ps)
            dm.setup("fit")  # the held-out labels and the grid before the clock starts: seconds are the training's
            model = build_model(row, ps)
            seconds = fit_row(model, dm, ps.steps)
            scores = score_field(lambda x, m=model: m.predict(x)[:, 0], dm, ps.geometry_resolution)
            meshes.setdefault(row, scores.pop("mesh"))
            rows.setdefault(row, []).append({**scores, "seconds": seconds})
            params[row] = sum(t.numel() for t in model.parameters())
            print(f"{row} seed {seed}: " + ", ".join(f"{k} {v:.4g}" for k, v in rows[row][-1].items()), flush=True)
    dm = make_data(args.mesh, p)  # seed 0: the training points of the seed-0 rows
    dm.setup("fit")
    budget = params.get("gaussian", sum(t.numel() for t in build_model("gaussian", p).parameters()))
    start = time.perf_counter()
    field, n = voxel_grid_field(dm, budget)
    built = time.perf_counter() - start
    voxel = score_field(field, dm, p.geometry_resolution)
    meshes["voxel grid"] = voxel.pop("mesh")
    rows[f"voxel grid {n}³ (trilinear)"] = [{**voxel, "seconds": built}]
    start = time.perf_counter()
    field, count = nearest_point_field(dm, p)
    built = time.perf_counter() - start
    nearest = score_field(field, dm, p.geometry_resolution)
    meshes["nearest point"] = nearest.pop("mesh")
    rows[f"nearest of {count:,} training points"] = [{**nearest, "seconds": built}]

    table = markdown_table({name: summarise(runs) for name, runs in rows.items()})
    command = "python -m inr.experiments.shapes " + " ".join(args.argv)
    text = (
        f"# 3D shape occupancy: {args.mesh}\n\n    {command}\n\n{table}\n\n"
        f"Sizes: {p.depth} × {p.width} MLPs, {p.batch_size:,} fresh points per step, {p.steps:,} steps, seeds 0–{args.seeds - 1}; "
        f"held-out sets of {p.test_points:,} points each (test seed 0); Chamfer and normals from {p.surface_samples:,} surface "
        f"samples of each mesh, the field meshed at {p.geometry_resolution}³ over the box. Parameters: "
        + ", ".join(f"{k} {v:,}" for k, v in params.items())
        + f".\n\n{paper_line()}\n"
    )
    (out / "results.md").write_text(text)
    (out / "results.json").write_text(
        json.dumps({"protocol": p.__dict__, "mesh": args.mesh, "rows": rows, "params": params}, indent=1)
    )
    iio.imwrite(out / "normals_mesh.png", normal_map(dm.normalised, dm.faces, dm.box, p.render_size))
    for name, (verts, faces) in meshes.items():
        if verts is not None:
            iio.imwrite(out / f"normals_{name.replace(' ', '_')}.png", normal_map(verts, faces, dm.box, p.render_size))
    print(text)
    return out / "results.md"


ROWS = ("none", "basic", "positional", "gaussian", "siren", "hashgrid")


def parse(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m inr.experiments.shapes", description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", required=True, help="OBJ, PLY, STL, OFF or GLB file (watertight)")
    parser.add_argument("--steps", type=int, default=None, help="training steps per row (default 400; --paper 10,000)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per network row (mean ± std)")
    parser.add_argument("--batch-size", type=int, default=None, help="training points per step (default 4,096; --paper 32,768)")
    parser.add_argument("--test-points", type=int, default=None, help="points per held-out set (default 2^18, the paper's)")
    parser.add_argument(
        "--geometry-resolution", type=int, default=None, help="samples per axis of the meshed fields (default 128)"
    )
    parser.add_argument("--out", default="runs/shapes", help="folder of results.md, results.json and the normal maps")
    parser.add_argument("--paper", action="store_true", help="the paper's sizes: 8 × 256, 32,768 points, 10,000 steps (a GPU)")
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS, help="network rows (default all)")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the command line printed with the table
    counts = (args.steps, args.batch_size, args.test_points)
    if args.seeds < 1 or any(c is not None and c < 1 for c in counts) or (args.geometry_resolution or 2) < 2:
        parser.error("--seeds, --steps, --batch-size and --test-points must be ≥ 1, --geometry-resolution ≥ 2")
    return args


def main(argv: Optional[list[str]] = None) -> Path:
    args = parse(argv)
    retain_freed_memory()
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")
    try:
        return run(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None


if __name__ == "__main__":
    main()
