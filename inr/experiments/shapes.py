"""The paper's 3D shape occupancy comparison on one mesh, with SIREN, a hash grid and two baselines that train nothing.

    python -m inr.experiments.shapes --mesh data/trefoil.obj                      # CPU size: 4 × 128, 4,096 points, 400 steps
    python -m inr.experiments.shapes --mesh dragon.obj --paper --seeds 3 --out runs/shapes_dragon   # the paper's sizes (GPU)
    python -m inr.experiments.shapes --mesh armadillo.obj,dragon.obj --seeds 2    # several meshes: mean over them

Every network row trains ``ShapeFitting`` on ``MeshDataModule`` (occupancy, fresh points uniform in the box every
step, BCE on logits) and is scored on the same two held-out sets (``test_seed`` 0): IoU on 2^18 uniform points and
on 2^18 points near the surface, and the Chamfer-L1 and normal consistency of its level-set mesh against 100,000
surface samples of the mesh (``inr.geometry.surface_metrics``). The rows are methods of the registry
(``methods.METHODS``) resolved for the shape protocol (``protocols.PROTOCOLS["shape_cpu"]``, with ``--paper``
``["shape"]``; ``methods.SHAPE_SETTINGS``), the same settings as the overlays ``configs/methods/shape_cpu/`` (for
shape.yaml) and ``configs/methods/shape/`` (for shape_paper.yaml):
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
sample standard deviation. Several meshes (``--mesh a.obj,b.obj``) are the comparison's signals: every row is
trained and scored on each, the table's cells are mean ± std over meshes and seeds (the paper's Table 1 row is
the mean over its four statues), and the notes add each mesh's means. ``--near-surface F`` draws that share of
every training batch at surface samples + N(0, 0.01²) instead of uniformly (the paper: 0); the nearest-point
baseline then reads the same points. Writes ``results.md`` (the table, the command, the paper's row), ``results.json`` and one
normal map per row (``normals_<row>.png``, ``normals_mesh.png`` for the ground truth; with several meshes
``normals_<mesh>_<row>.png``) into ``--out``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import imageio.v3 as iio
import numpy as np
from jsonargparse import ArgumentParser

from inr.errors import InputError, check_memory
from inr.experiments import comparison
from inr.experiments.comparison import Baseline, Comparison, Context, Member
from inr.experiments.runner import Column, summarise
from inr.methods.protocols import PROTOCOLS, paper_row
from inr.methods.registry import SHAPE_ROWS, SHAPE_SETTINGS, Setting

if TYPE_CHECKING:  # the mesh, the task, torch and the geometry are imported where a row reads, trains or scores them
    from torch import Tensor

    from inr.data.mesh import MeshDataModule
    from inr.tasks.shape import ShapeFitting

# the nearest-point baseline's k-d tree holds at most this many training points (the paper's run sees 327 M)
NEAREST_POINTS = 2**22
# bytes per sample of the level-set grid: the float32 grid, its padded copy and marching cubes' work on it
LEVEL_SET_BYTES = 3 * 4
# the data's advice in the command's flags
ADVICE = {"data.batch_size or data.steps_per_epoch": "--batch-size", "data.pool_size": "--batch-size"}
COLUMNS = (
    Column("method", "method", "s"),
    Column("IoU uniform", "iou", ".4f"),
    Column("IoU near-surface", "iou_surface", ".4f"),
    Column("Chamfer-L1", "chamfer", ".4f"),
    Column("normal consistency", "normal_consistency", ".4f"),
    Column("seconds", "seconds", ".1f"),
)


@dataclass(frozen=True)
class ShapeProtocol:
    """What every row of one comparison shares: the mapping protocol ``PROTOCOLS[kind]`` (the MLP, learning rates
    and mappings) run for ``steps``, the mesh, and the sizes of the data and the scores. Defaults: CPU size; the
    paper's (3d_shape_occupancy.ipynb) with ``--paper``."""

    seeds: tuple[int, ...]
    mesh: str
    kind: str = "shape_cpu"
    near_surface: float = 0.0
    steps: int = PROTOCOLS["shape_cpu"].steps
    batch_size: int = 4096
    test_points: int = 2**18
    surface_samples: int = 100_000
    geometry_resolution: int = 128
    render_size: int = 256

    @property
    def steps_per_epoch(self) -> int:
        return min(self.steps, 100)

    @property
    def meshes(self) -> tuple[str, ...]:
        """The meshes of ``--mesh`` (comma-separated), in order."""
        return tuple(m.strip() for m in self.mesh.split(",") if m.strip())


class Shapes(Comparison):
    name, doc = "shapes", __doc__
    methods = SHAPE_ROWS
    columns = COLUMNS
    difference_keys = ("iou", "iou_surface")
    headline = ("iou", "iou_surface")

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--mesh", type=str, required=True, help="OBJ, PLY, STL, OFF or GLB file (watertight); several: a.obj,b.obj"
        )
        parser.add_argument(
            "--near-surface",
            type=float,
            default=0.0,
            help="share of each training batch drawn at surface + N(0, 0.01²) instead of uniformly (the paper: 0)",
        )
        parser.add_argument(
            "--batch-size", type=Optional[int], default=None, help="training points per step (null: 4,096; --paper 32,768)"
        )
        parser.add_argument(
            "--test-points", type=Optional[int], default=None, help="points per held-out set (null: 2^18, the paper's)"
        )
        parser.add_argument(
            "--geometry-resolution",
            type=Optional[int],
            default=None,
            help="samples per axis of the meshed fields (null: 128; --paper 256)",
        )

    def protocol(self, args: Any) -> ShapeProtocol:
        if args.resolution is not None:
            raise InputError("--resolution: shapes has no grid; its sizes are --batch-size, --test-points, --geometry-resolution")
        sizes = {"batch_size": args.batch_size, "test_points": args.test_points, "geometry_resolution": args.geometry_resolution}
        if any(v is not None and v < 1 for v in sizes.values()) or (args.geometry_resolution or 2) < 2:
            raise InputError("--batch-size and --test-points must be ≥ 1, --geometry-resolution ≥ 2")
        if not 0.0 <= args.near_surface <= 1.0:
            raise InputError(f"--near-surface must lie in [0, 1], got {args.near_surface}")
        meshes = [m.strip() for m in args.mesh.split(",")]
        if not all(meshes) or len(set(meshes)) != len(meshes):
            raise InputError(f"--mesh: give one file or several, comma-separated and each once, got {args.mesh!r}")
        paper = (
            {"kind": "shape", "steps": PROTOCOLS["shape"].steps, "batch_size": 32768, "geometry_resolution": 256}
            if args.paper
            else {}
        )
        p = ShapeProtocol(args.seed_list, ",".join(meshes), near_surface=args.near_surface, **paper)
        return replace(p, steps=args.steps or p.steps, **{k: v for k, v in sizes.items() if v is not None})

    def check(self, p: ShapeProtocol) -> MeshDataModule:
        """The level-set grid sized before anything is allocated, then the mesh read (a bad one fails here)."""
        side = p.geometry_resolution + 2
        what = f"--geometry-resolution {p.geometry_resolution}: the level-set grid of {side:,}³ samples"
        check_memory(what, LEVEL_SET_BYTES * side**3, advice="choose a smaller --geometry-resolution")
        first = super().check(p)
        for mesh in self.signals(p)[1:]:  # every mesh read before anything is written: a bad one fails here
            self.data(Context(p, Member(mesh, p.seeds[0])))
        return first

    def signals(self, p: ShapeProtocol) -> tuple[Optional[str], ...]:
        """The meshes; one mesh is the comparison's one signal (None: rows without a mesh name, as ever)."""
        return p.meshes if len(p.meshes) > 1 else (None,)

    def label(self, p: ShapeProtocol, signal: Any) -> Optional[str]:
        """A mesh's name in the rows: its file's stem."""
        return None if signal is None else Path(signal).stem

    def data(self, ctx: Context) -> MeshDataModule:
        from inr.data.mesh import MeshDataModule

        p = ctx.p
        sizes = dict(batch_size=p.batch_size, steps_per_epoch=p.steps_per_epoch, test_points=p.test_points)
        try:
            dm = MeshDataModule(
                path=ctx.signal or p.meshes[0],
                mode="occupancy",
                near_surface_fraction=p.near_surface,
                surface_samples=p.surface_samples,
                resolution=32,
                seed=ctx.seed,
                **sizes,
            )
            dm.setup("fit")
        except InputError as exc:  # the data's advice names config keys: name this command's flags instead
            message = str(exc)
            for key, flag in ADVICE.items():
                message = message.replace(key, flag)
            raise InputError(message) from None
        return dm

    def setting(self, ctx: Context) -> Setting:
        """``SHAPE_SETTINGS`` with this run's steps (a decay spans the run: ×0.1 per half of it) and seed."""
        p = ctx.p
        return replace(SHAPE_SETTINGS[p.kind], protocol=replace(PROTOCOLS[p.kind], steps=p.steps), seed=ctx.seed)

    def task(self, ctx: Context) -> tuple[type, dict[str, Any]]:
        from inr.tasks.shape import ShapeFitting

        return ShapeFitting, {"mode": "occupancy", "geometry_resolution": ctx.p.geometry_resolution}

    def model(self, ctx: Context) -> ShapeFitting:
        import lightning as L

        # seeded again after the spec: describing a hash grid builds one, which draws from the global generator
        L.seed_everything(ctx.data.seed, verbose=False)
        return super().model(ctx)

    def predict(self, ctx: Context, model: Any) -> Callable[[Tensor], Tensor]:
        return lambda x: model.predict(x)[:, 0]

    def score(self, ctx: Context, occupancy: Callable[[Tensor], Tensor]) -> dict[str, Any]:
        return score_field(occupancy, ctx.data, ctx.p.geometry_resolution)

    def keep(self, ctx: Context, row: dict[str, Any], prediction: Any, scores: dict[str, Any]) -> None:
        from inr.export.normal_map import normal_map

        p, out = ctx.p, ctx.out
        verts, faces, box = scores["_mesh"]
        if verts is not None and row["seed"] in (None, p.seeds[0]):
            stem = next((k for k in ("voxel grid", "nearest") if row["method"].startswith(k)), row["method"])
            name = {"nearest": "nearest point"}.get(stem, stem).replace(" ", "_")
            mesh = f"{row['signal']}_" if row.get("signal") else ""
            iio.imwrite(out / f"normals_{mesh}{name}.png", normal_map(verts, faces, box, p.render_size))

    def baselines(self, ctx: Context) -> list[Baseline]:
        from inr.methods.training import trained_numbers

        p, data = ctx.p, ctx.data
        gaussian = comparison.context(self, p, "gaussian", Member(None, p.seeds[0]), data)
        budget = trained_numbers(self.model(gaussian))
        n = max(2, round(budget ** (1 / 3)))
        total = min(NEAREST_POINTS, p.steps * p.batch_size)
        return [
            Baseline(f"voxel grid {n}³ (trilinear)", lambda: voxel_grid_field(data, budget)[0]),
            Baseline(f"nearest of {total:,} training points", lambda: nearest_point_field(data, p.steps, p.batch_size)[0]),
        ]

    def summary(self, p: ShapeProtocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return summarise(rows, [*comparison.numeric(self, p), "params", "lr"])

    def title(self, p: ShapeProtocol) -> str:
        if len(p.meshes) > 1:
            return f"# 3D shape occupancy: {', '.join(p.meshes)} (mean ± std over the meshes and seeds)"
        return f"# 3D shape occupancy: {p.mesh}"

    def notes(self, p: ShapeProtocol, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        m = PROTOCOLS[p.kind]
        models = [r for r in summary if r["kind"] == "model"]
        params = ", ".join(f"{r['method']} {r['params']:,.0f}" for r in models)
        settings = "; ".join(f"{r['method']} {r['setting']}, lr {r['lr']:.0e}" for r in models)
        near = f", {p.near_surface:.0%} of them at surface + N(0, 0.01²)" if p.near_surface else ""
        return (
            f"Sizes: {m.depth} × {m.width} MLPs, {p.batch_size:,} fresh points per step{near}, {p.steps:,} steps, seeds "
            f"{p.seeds[0]}–{p.seeds[-1]} (mean ± sample standard deviation); held-out sets of {p.test_points:,} points "
            f"each (test seed 0); Chamfer and normals from {p.surface_samples:,} surface samples of each mesh, the field "
            f"meshed at {p.geometry_resolution}³ over the box. Parameters: {params}. Settings: {settings}."
            f"{per_mesh(rows)}\n\n{paper_row('shape')}"  # a summary row holds only pooled numbers
        )

    def pairs(self, p: ShapeProtocol, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return comparison.neighbours_and_best(summary, "iou")

    def finish(self, p: ShapeProtocol, rows: list[dict[str, Any]], out: Path) -> None:
        from inr.export.normal_map import normal_map

        for mesh in self.signals(p):
            dm = self.data(Context(p, Member(mesh, p.seeds[0])))
            name = f"normals_{self.label(p, mesh)}_mesh.png" if mesh else "normals_mesh.png"
            iio.imwrite(out / name, normal_map(dm.normalised, dm.faces, dm.box, p.render_size))


def per_mesh(rows: list[dict[str, Any]]) -> str:
    """Each mesh's mean IoUs (uniform / near-surface) over its seeds, method by method, as a Markdown table (empty
    for one mesh).

    Example:
        >>> rows = [{"method": "a", "signal": m, "iou": i, "iou_surface": i / 2} for m, i in (("x", 0.8), ("y", 0.6))]
        >>> print(per_mesh(rows))
        <BLANKLINE>
        <BLANKLINE>
        Per mesh, IoU uniform / near-surface (mean over seeds):
        <BLANKLINE>
        | method | x | y |
        |---|---:|---:|
        | a | 0.8000 / 0.4000 | 0.6000 / 0.3000 |
    """
    meshes = list(dict.fromkeys(r.get("signal") for r in rows if r.get("signal")))
    if len(meshes) < 2:
        return ""
    lines = ["| method | " + " | ".join(meshes) + " |", "|---|" + "---:|" * len(meshes)]
    for method in dict.fromkeys(r["method"] for r in rows):
        cells = []
        for mesh in meshes:
            mine = [r for r in rows if r["method"] == method and r.get("signal") == mesh]
            cells.append(" / ".join(f"{np.mean([r[k] for r in mine]):.4f}" for k in ("iou", "iou_surface")) if mine else "—")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n\nPer mesh, IoU uniform / near-surface (mean over seeds):\n\n" + "\n".join(lines)


# --- scoring any field (networks and baselines alike) ------------------------------------------------
def score_field(occupancy: Callable[[Tensor], Tensor], dm: MeshDataModule, resolution: int, chunk: int = 65536) -> dict[str, Any]:
    """IoU on both held-out sets (``iou``: uniform, ``iou_surface``: near the surface), and the level-set mesh (½)
    over the box (``_mesh``: vertices, triangles and the box) with its Chamfer-L1 and normal consistency against the data's surface samples;
    ``occupancy``: points (N, 3) -> probabilities (N,)."""
    import torch

    from inr.geometry.level_set import level_set_mesh
    from inr.geometry.sampling import sample_surface
    from inr.geometry.surface_metrics import surface_distances
    from inr.metrics import iou
    from inr.tasks.shape import SURFACE_SAMPLE_SEED

    out: dict[str, Any] = {}
    with torch.no_grad():
        for name, key in (("easy", "iou"), ("hard", "iou_surface")):
            points, labels = dm.heldout(name)
            pred = torch.cat([occupancy(c) for c in points.split(chunk)])
            out[key] = iou(pred.numpy() > 0.5, labels[:, 0].numpy() > 0.5)
        try:
            verts, faces = level_set_mesh(occupancy, dm.box, resolution, 0.5)
        except ValueError:  # no surface: the field is all inside or all outside
            verts = faces = None
    out.update(chamfer=float("nan"), normal_consistency=float("nan"), _mesh=(verts, faces, dm.box))
    if verts is not None:
        gt_points, gt_normals = dm.surface()
        points, normals = sample_surface(verts, faces, len(gt_points), np.random.default_rng(SURFACE_SAMPLE_SEED))
        distances = surface_distances(points, normals, gt_points.numpy(), gt_normals.numpy())
        out.update(chamfer=distances["chamfer_l1"], normal_consistency=distances["normal_consistency"])
    return out


def voxel_grid_field(dm: MeshDataModule, values: int) -> tuple[Callable[[Tensor], Tensor], int]:
    """Labels on an n³ grid over the box (corners included), n = round(values^(1/3)), read trilinearly."""
    import torch
    import torch.nn.functional as F

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
    dm: MeshDataModule, steps: int, batch_size: int, limit: int = NEAREST_POINTS
) -> tuple[Callable[[Tensor], Tensor], int]:
    """The label of the nearest of the first ``limit`` training points the networks saw (fresh draws, epoch by epoch)."""
    import torch
    from scipy.spatial import cKDTree

    points, labels, epoch = [], [], 0
    total = min(limit, steps * batch_size)
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


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison; print and write the table; return the rows (networks, then baselines)."""
    return comparison.main(Shapes(), argv)


if __name__ == "__main__":
    main()
