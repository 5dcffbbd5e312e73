"""``MeshDataModule``: a triangle mesh as an occupancy or signed-distance field, trained on points drawn in its box.

Tancik et al. 2020's 3D shape protocol (released notebook ``3d_shape_occupancy.ipynb``): the mesh is recentred
into [0, 1]³ (``inr.geometry.normalize``), every training step draws fresh points uniform in the vertices'
box (bounds ± 10⁻³) labelled by containment, and the field is scored on two fixed held-out sets of 2^18 points,
"easy" (uniform in the box) and "hard" (surface samples + N(0, 0.01²)), by IoU.

Coordinates are the mesh's own axes, x, y, z in that order, in the normalised frame: a point p of the mesh file
is v = ½((p − c)/s + 1) (``scale`` s and ``centre`` c are kept). Labels: ``occupancy`` = [w(v) > ½], the
generalised winding number (``inr.geometry.containment``); ``sdf`` = the distance to the surface, negative
inside (``inr.geometry.distance``), or its magnitude alone (``sign: unsigned``). Both come from libigl on the
host, for many points per call, never point by point.

Training points (``sampling``):
- ``fresh`` (the paper): each epoch draws steps_per_epoch × batch_size new points, labels them in one pass, and
  copies them to the device once; step k trains on the k-th block of batch_size, so no point is used twice;
- ``pool``: ``pool_size`` points labelled once; each step draws batch_size of them at random (cheaper labels,
  points reused).
A fraction ``near_surface_fraction`` of every batch is surface samples + N(0, near_surface_std²) instead
(0 in the paper). In ``sdf`` mode ``surface_batch`` > 0 adds that many surface points with their normals per
step (``surface_coords``, ``surface_normals``) for the surface and normal terms of a SIREN-style loss.
Draws are seeded by (seed, epoch, rank); the held-out sets and the ground-truth surface samples by
``test_seed`` alone, so they are the same for every training seed.

The callbacks' regular grid: ``resolution``³ labels at v = i/N on [0, 1)³ (the core grid convention), axis 0 =
x, the target of ``render()``, the image slices and the spectral bands.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, Optional, Union

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import DataLoader

from inr.data.grid import Grid
from inr.data.module import GridDataModule, IndexBatches, ResumableLoader, shard
from inr.data.paths import check_file, resolve_data_path
from inr.errors import InputError, check_memory
from inr.extras import require
from inr.geometry.distance import MeshQueries
from inr.geometry.normalize import bounding_box, normalize_vertices, uniform_in_box
from inr.geometry.sampling import near_surface, sample_surface
from inr.sizes import grid_size

MESH_EXTENSIONS = (".obj", ".ply", ".stl", ".off", ".glb")
BUNDLED_MESH = "data/trefoil.obj"
MODES = ("occupancy", "sdf")
HELDOUT = ("easy", "hard")  # the notebook's two test sets: uniform in the box, near the surface
# the paper's held-out sets: 2^18 points each, the near ones at surface + N(0, 0.01²) (make_test_pts)
PAPER_TEST_POINTS, PAPER_NEAR_STD = 2**18, 0.01
# Every random stream's seed sequence starts with its own non-zero tag: numpy's SeedSequence ignores trailing zeros
# ([0, 0] and [0, 0, 0, 0] draw the same numbers), so untagged, the held-out set of test_seed 0 was the first
# epoch's training points of seed 0.
HELDOUT_STREAM, SURFACE_STREAM, FRESH_STREAM, POOL_STREAM = 1, 2, 3, 4
# labels are computed this many points per library call, bounding the float64 temporaries (≈ 30 MB)
LABEL_CHUNK = 2**18
# Memory of reading and holding a mesh, measured with tracemalloc and /proc (a 737,280-triangle tube): trimesh's
# load peaks at 6.2 (OBJ), 10.6 (PLY), 8.9 (STL), 15.0 (OFF), 8.0 (GLB) × the file size; those files hold one
# triangle per 40, 19, 50, 42, 18 bytes; merging and checking the mesh peaks at 500 bytes per triangle, libigl's
# AABB tree holds 218 and its fast winding number peaks at 208 more.
LOAD_FACTOR = 16
FILE_BYTES_PER_TRIANGLE = {".obj": 40, ".ply": 19, ".stl": 50, ".off": 42, ".glb": 18}
BYTES_PER_TRIANGLE = 1024


def estimate_mesh_bytes(path: Path) -> tuple[int, int]:
    """(bytes to read and hold the mesh, triangles) estimated from the file's size and format, before reading it."""
    size = path.stat().st_size
    triangles = size // FILE_BYTES_PER_TRIANGLE.get(path.suffix.lower(), 18)
    return size * LOAD_FACTOR + triangles * BYTES_PER_TRIANGLE, triangles


def read_mesh_file(path: Union[str, Path]) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, 3) float64 and triangles (F, 3) int64 of an OBJ/PLY/STL/OFF/GLB file (trimesh; a scene's
    meshes are joined), as stored: nothing merged or dropped. Refuses, in one line, a file that is missing,
    empty, of another extension, too large for memory, or unreadable."""
    path = Path(path)
    check_file(path, MESH_EXTENSIONS, kind="mesh")
    needed, triangles = estimate_mesh_bytes(path)
    check_memory(
        f"{path} (about {triangles:,} triangles in {path.stat().st_size / 2**20:.1f} MiB)",
        needed,
        advice="simplify the mesh (fewer triangles) first",
    )
    trimesh = require("trimesh", extra="meshes", what="reading a mesh")

    try:
        loaded = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # trimesh and its format readers raise many types for undecodable files
        raise InputError(f"{path}: not a readable mesh ({type(exc).__name__}: {str(exc).strip()[:200]})") from None
    verts = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(getattr(loaded, "faces", np.zeros((0, 3))), dtype=np.int64).reshape(-1, 3)
    return verts, faces


def check_mesh(verts: np.ndarray, faces: np.ndarray, source: str) -> None:
    """Refuse a mesh with no triangles, non-finite or unreferenced-index vertices, or no area (flat to a point or line)."""
    if len(faces) == 0 or len(verts) == 0:
        raise InputError(f"{source}: the mesh is empty (no triangles)")
    bad = ~np.isfinite(verts).all(axis=1)
    if bad.any():
        raise InputError(f"{source}: {int(bad.sum()):,} of {len(verts):,} vertices have NaN or infinite coordinates")
    if faces.min() < 0 or faces.max() >= len(verts):
        raise InputError(f"{source}: a triangle refers to vertex {int(faces.max())}, beyond its {len(verts):,} vertices")
    used = verts[np.unique(faces)]
    if not (np.ptp(used, axis=0) > 0).any():
        raise InputError(f"{source}: every triangle collapses to one point; the mesh has no extent")


def closed_mesh(verts: np.ndarray, faces: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray, bool, int]:
    """Merge duplicate vertices (an STL's corners) and orient a closed mesh outward: -> (vertices, triangles,
    watertight, connected components). A closed mesh of zero volume (flat, or two sheets on each other) is refused."""
    trimesh = require("trimesh", extra="meshes", what="checking a mesh")

    mesh = trimesh.Trimesh(verts, faces, process=True)  # merges equal vertices, drops degenerate triangles
    if len(mesh.faces) == 0:
        raise InputError(f"{source}: every triangle is degenerate (zero area); the mesh has no surface")
    watertight = bool(mesh.is_watertight)
    components = int(len(trimesh.graph.connected_components(mesh.face_adjacency, nodes=np.arange(len(mesh.faces)))))
    if watertight:
        trimesh.repair.fix_normals(mesh)  # one orientation for every triangle, outward
        box_volume = float(np.prod(np.ptp(mesh.vertices, axis=0)))
        if not abs(float(mesh.volume)) > 1e-9 * max(box_volume, np.finfo(float).tiny) or box_volume == 0:
            raise InputError(
                f"{source}: the mesh is closed but encloses no volume (flat or two sheets on each other); nothing is inside"
            )
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64), watertight, components


class PointBatches(IndexBatches):
    """An epoch of training batch descriptions ``{"index", "epoch"[, "surface_index"]}``: consecutive blocks of
    the epoch's fresh points, or random draws from a fixed pool; optional random surface samples. Seeded by
    (seed, epoch, rank), and resumable mid-epoch like ``IndexBatches`` (whose state it keeps)."""

    def __init__(
        self,
        source_size: int,
        batch_size: int,
        steps: int,
        fresh: bool,
        prepare,
        surface_size: int = 0,
        surface_batch: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(torch.arange(0), batch_size, steps, **kwargs)
        self.source_size, self.fresh, self.prepare = source_size, fresh, prepare
        self.surface_size, self.surface_batch = surface_size, surface_batch

    def __iter__(self):
        self.pass_epoch = epoch = self.epoch_fn()
        skip = self.resume_at[1] if self.resume_at is not None and self.resume_at[0] == epoch else 0
        self.resume_at = None
        self.prepare(epoch, self.rank)
        gen = torch.Generator().manual_seed((self.seed * 1_000_003 + epoch) * 65_537 + self.rank)
        b = self.batch_size
        for step in range(self.steps):
            # drawn for skipped steps too, so a resumed epoch continues the uninterrupted draws
            index = torch.arange(step * b, (step + 1) * b) if self.fresh else torch.randint(self.source_size, (b,), generator=gen)
            batch = {"index": index, "epoch": epoch}
            if self.surface_batch:
                batch["surface_index"] = torch.randint(self.surface_size, (self.surface_batch,), generator=gen)
            if step >= skip:
                yield batch


class MeshDataModule(GridDataModule):
    """A triangle mesh (OBJ, PLY, STL, OFF, GLB) as an occupancy or signed-distance field; see the module docstring.

    Args:
        path: the mesh file; ``None``: the bundled ``data/trefoil.obj`` (``data/make_trefoil.py``).
        mode: ``occupancy`` (0/1 labels, BCE on logits) or ``sdf`` (signed distances, negative inside).
        sampling: ``fresh`` points every step (the paper) or draws from a ``pool`` labelled once.
        batch_size: points per training step (the paper: 32,768). steps_per_epoch: steps per epoch; with
            ``fresh``, the points of one epoch are labelled together and held on the device.
        pool_size: points of the pool (``sampling: pool``).
        near_surface_fraction: share of each batch drawn near the surface instead of uniformly (paper: 0).
        near_surface_std: their distance from the surface, N(0, std²) per axis (paper's hard set: 0.01).
        surface_batch: ``sdf`` only: surface points with normals per step for surface/normal losses (0: none).
        test_points: points in each held-out set (the paper: 2^18). test_seed: the seed of the held-out sets
            and of the ground-truth surface samples, independent of ``seed``.
        surface_samples: ground-truth surface points for the geometry metrics (Chamfer, normals, F-score).
        resolution: the callbacks' grid, an int r (r³) or [nx, ny, nz].
        open_mesh: a mesh that is not watertight has no inside: ``refuse`` it, or ``winding_number``: take
            the generalised winding number's w > ½ as inside (smooth across holes).
        sign: ``sdf`` only: ``signed`` distances or ``unsigned`` (|d|, needs no inside: any mesh).
        eval_chunk: points per evaluation batch. seed: seed of the training draws.
    """

    def __init__(
        self,
        path: Optional[str] = None,
        mode: Literal["occupancy", "sdf"] = "occupancy",
        sampling: Literal["fresh", "pool"] = "fresh",
        batch_size: int = 32768,
        steps_per_epoch: int = 100,
        pool_size: int = 2**20,
        near_surface_fraction: float = 0.0,
        near_surface_std: float = PAPER_NEAR_STD,
        surface_batch: int = 0,
        test_points: int = PAPER_TEST_POINTS,
        test_seed: int = 0,
        surface_samples: int = 100_000,
        resolution: Union[int, list[int]] = 64,
        open_mesh: Literal["refuse", "winding_number"] = "refuse",
        sign: Literal["signed", "unsigned"] = "signed",
        eval_chunk: int = 65536,
        seed: int = 0,
    ) -> None:
        if batch_size is None or batch_size < 1:
            raise InputError(f"data.batch_size must be a number of points ≥ 1, got {batch_size}")
        super().__init__(split="all", batch_size=batch_size, steps_per_epoch=steps_per_epoch, eval_chunk=eval_chunk, seed=seed)
        checks = {
            "data.mode": (mode in MODES, f"choose {' or '.join(MODES)}"),
            "data.sampling": (sampling in ("fresh", "pool"), "choose fresh or pool"),
            "data.steps_per_epoch": (steps_per_epoch is not None and steps_per_epoch >= 1, "must be ≥ 1"),
            "data.pool_size": (pool_size >= 1, "must be ≥ 1"),
            "data.near_surface_fraction": (0.0 <= near_surface_fraction <= 1.0, "must lie in [0, 1]"),
            "data.near_surface_std": (near_surface_std > 0, "must be > 0"),
            "data.test_points": (test_points >= 1, "must be ≥ 1"),
            "data.surface_samples": (surface_samples >= 1, "must be ≥ 1"),
            "data.open_mesh": (open_mesh in ("refuse", "winding_number"), "choose refuse or winding_number"),
            "data.sign": (sign in ("signed", "unsigned") and (sign == "signed" or mode == "sdf"), "unsigned needs mode sdf"),
            "data.surface_batch": (surface_batch >= 0 and (surface_batch == 0 or mode == "sdf"), "surface points need mode sdf"),
        }
        for key, (ok, why) in checks.items():
            if not ok:
                raise InputError(f"{key}: {why}")
        self.path = resolve_data_path(path if path is not None else BUNDLED_MESH)
        self.mode, self.sampling, self.pool_size = mode, sampling, pool_size
        self.near_surface_fraction, self.near_surface_std, self.surface_batch = (
            near_surface_fraction,
            near_surface_std,
            surface_batch,
        )
        self.test_points, self.test_seed, self.surface_samples = test_points, test_seed, surface_samples
        self.resolution = grid_size(resolution, 3)
        self.open_mesh, self.sign = open_mesh, sign
        self._queries: Optional[MeshQueries] = None
        self._heldout: dict[str, tuple[Tensor, Tensor]] = {}
        self._train: Optional[tuple[Any, Tensor, Tensor]] = None  # (key, points, labels) of the epoch or the pool
        self._surface: Optional[tuple[Tensor, Tensor]] = None

    def describe(self) -> str:
        return str(self.path)

    # --- the mesh -----------------------------------------------------------------------------------
    @property
    def queries(self) -> MeshQueries:
        """The normalised mesh with its search trees, read and checked once."""
        if self._queries is None:
            source = str(self.path)
            verts, faces = read_mesh_file(self.path)
            check_mesh(verts, faces, source)
            verts, faces, self.watertight, self.components = closed_mesh(verts, faces, source)
            needs_inside = self.mode == "occupancy" or self.sign == "signed"
            if needs_inside and not self.watertight and self.open_mesh == "refuse":
                fix = (
                    "set data.init_args.open_mesh winding_number to take the generalised winding number's inside"
                    " (smooth across holes), or data.init_args.mode sdf with data.init_args.sign unsigned"
                )
                raise InputError(f"{source}: the mesh is not watertight, so it has no well-defined inside for {self.mode}; {fix}")
            self.check_buffers(len(faces))
            self.normalised, self.scale, self.centre = normalize_vertices(verts)
            self.faces = faces
            self.box = bounding_box(self.normalised)  # (2, 3)
            self._queries = MeshQueries(self.normalised, faces)
        return self._queries

    def label(self, points: np.ndarray) -> np.ndarray:
        """The target at points (N, 3) float64 -> (N, 1) float32, ``LABEL_CHUNK`` points per library call."""
        q, out = self.queries, np.empty((len(points), 1), dtype=np.float32)
        for start in range(0, len(points), LABEL_CHUNK):
            p = points[start : start + LABEL_CHUNK]
            if self.mode == "occupancy":
                out[start : start + len(p), 0] = q.contains(p)
            else:
                out[start : start + len(p), 0] = q.signed_distance(p) if self.sign == "signed" else q.distance(p)
        return out

    def check_buffers(self, triangles: int) -> None:
        """Refuse, before any is allocated, buffers beyond the memory bound: the training points (an epoch's or
        the pool, host and device copies), the held-out sets, the surface samples and the callbacks' grid."""
        train = self.batch_size * self.steps_per_epoch if self.sampling == "fresh" else self.pool_size
        points = train + 2 * self.test_points
        needed = points * (3 + 1) * 4 * 2 + self.surface_samples * 6 * 8 + math.prod(self.resolution) * 4 * 4
        needed += min(points, LABEL_CHUNK) * 8 * 16  # float64 temporaries of one labelling call
        what = (
            f"{self.describe()}: {train:,} training points"
            f" ({'batch_size × steps_per_epoch' if self.sampling == 'fresh' else 'pool_size'}),"
            f" {2 * self.test_points:,} held-out points and a {'×'.join(map(str, self.resolution))} grid"
        )
        advice = (
            "choose a smaller data.batch_size or data.steps_per_epoch"
            if self.sampling == "fresh"
            else "choose a smaller data.pool_size"
        )
        check_memory(what, needed, advice=advice)

    # --- the callbacks' grid ------------------------------------------------------------------------
    def load_values(self) -> Tensor:
        """Labels on the ``resolution`` grid v = i/N, axes x, y, z: (nx, ny, nz, 1)."""
        _ = self.queries
        grid = Grid(self.resolution)
        values = torch.empty(grid.numel, 1)
        for index in torch.arange(grid.numel).split(LABEL_CHUNK):
            values[index] = torch.from_numpy(self.label(grid.coords(index).double().numpy()))
        return values.reshape(*self.resolution, 1)

    # --- point sets ---------------------------------------------------------------------------------
    def draw_points(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n points: a share ``near_surface_fraction`` near the surface, the rest uniform in the box."""
        near = round(n * self.near_surface_fraction)
        uniform = uniform_in_box(self.box, n - near, rng)
        if near == 0:
            return uniform
        return np.concatenate([uniform, near_surface(self.normalised, self.faces, near, self.near_surface_std, rng)])

    def heldout(self, name: str) -> tuple[Tensor, Tensor]:
        """Held-out set ``easy`` or ``hard``: points (N, 3) float32 and labels (N, 1), seeded by ``test_seed`` only."""
        if name not in self._heldout:
            _ = self.queries
            rng = np.random.default_rng([HELDOUT_STREAM, self.test_seed, HELDOUT.index(name)])
            if name == "easy":
                points = uniform_in_box(self.box, self.test_points, rng)
            else:
                points = near_surface(self.normalised, self.faces, self.test_points, PAPER_NEAR_STD, rng)
            labels = self.label(points)
            if name == "easy" and self.mode == "occupancy" and not 0 < labels.mean() < 1:
                raise InputError(
                    f"{self.describe()}: no held-out point is {'inside' if labels.max() == 0 else 'outside'} the mesh; nothing to fit"
                )
            self._heldout[name] = (torch.from_numpy(points).float(), torch.from_numpy(labels))
        return self._heldout[name]

    def surface(self) -> tuple[Tensor, Tensor]:
        """Ground-truth surface samples and their unit normals, (``surface_samples``, 3) each, float32, seeded by
        ``test_seed``: the reference of the geometry metrics and the pool of ``surface_batch``."""
        if self._surface is None:
            _ = self.queries
            points, normals = sample_surface(
                self.normalised, self.faces, self.surface_samples, np.random.default_rng([SURFACE_STREAM, self.test_seed])
            )
            self._surface = (torch.from_numpy(points).float(), torch.from_numpy(normals).float())
        return self._surface

    def prepare_training_points(self, epoch: int, rank: int) -> None:
        """The training points and labels of this epoch (``fresh``) or the pool (drawn once per rank)."""
        key = (epoch, rank) if self.sampling == "fresh" else ("pool", rank)
        if self._train is not None and self._train[0] == key:
            return
        n = self.batch_size * self.steps_per_epoch if self.sampling == "fresh" else self.pool_size
        rng = np.random.default_rng(
            [FRESH_STREAM, self.seed, rank, epoch] if self.sampling == "fresh" else [POOL_STREAM, self.seed, rank]
        )
        if self.sampling == "fresh" and self.near_surface_fraction > 0:
            # every batch holds the same share of near-surface points: draw per batch, (steps, B, 3) -> (steps·B, 3)
            points = np.stack([self.draw_points(self.batch_size, rng) for _ in range(self.steps_per_epoch)]).reshape(-1, 3)
        else:
            points = self.draw_points(n, rng)
        self._train = (key, torch.from_numpy(points).float(), torch.from_numpy(self.label(points)))
        self._device_cache = {k: v for k, v in self._device_cache.items() if not k[0].startswith("train")}

    # --- loaders ------------------------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        super().setup(stage)
        for name in HELDOUT:
            self.heldout(name)

    def train_dataloader(self) -> DataLoader:
        self._ensure_loaded()
        trainer = self.trainer
        batches = PointBatches(
            self.batch_size * self.steps_per_epoch if self.sampling == "fresh" else self.pool_size,
            self.batch_size,
            self.steps_per_epoch,
            fresh=self.sampling == "fresh",
            prepare=self.prepare_training_points,
            surface_size=self.surface_samples,
            surface_batch=self.surface_batch,
            seed=self.seed,
            epoch_fn=(lambda: trainer.current_epoch) if trainer is not None else (lambda: 0),
            rank=trainer.global_rank if trainer is not None else 0,
        )
        done = (lambda: trainer.fit_loop.epoch_loop.batch_progress.current.processed) if trainer is not None else (lambda: 0)
        return ResumableLoader(batches, done)

    def val_dataloader(self) -> DataLoader:
        """Both held-out sets in chunks of ``eval_chunk``, each batch tagged with its set; each rank its share."""
        rank, world_size = self.rank_and_world_size
        batches = [
            {"heldout": name, "index": chunk}
            for name in HELDOUT
            for chunk in shard(torch.arange(len(self.heldout(name)[0])), rank, world_size).split(self.eval_chunk)
        ]
        return DataLoader(batches, batch_size=None)

    def gather_heldout(self, name: str, index: Tensor, device: torch.device) -> dict[str, Any]:
        points = self._on_device(f"heldout_{name}_points", lambda: self.heldout(name)[0], device)
        labels = self._on_device(f"heldout_{name}_labels", lambda: self.heldout(name)[1], device)
        index = index.to(device)
        return {"coords": points[index], "values": labels[index], "heldout": name, "index": index, "full_batch": False}

    def gather_training(self, batch: dict[str, Any], device: torch.device) -> dict[str, Any]:
        key = self._train[0]
        points = self._on_device(f"train_points{key}", lambda: self._train[1], device)
        labels = self._on_device(f"train_labels{key}", lambda: self._train[2], device)
        index = batch["index"].to(device)
        out = {"coords": points[index], "values": labels[index], "index": index, "full_batch": False}
        if "surface_index" in batch:
            surface = batch["surface_index"].to(device)
            out["surface_coords"] = self._on_device("surface_points", lambda: self.surface()[0], device)[surface]
            out["surface_normals"] = self._on_device("surface_normals", lambda: self.surface()[1], device)[surface]
        return out

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        if "shape" in batch:  # a render request of `predict`
            return batch
        device = self.trainer.lightning_module.device if self.trainer is not None else torch.device("cpu")
        if "heldout" in batch:
            return self.gather_heldout(batch["heldout"], batch["index"], device)
        return self.gather_training(batch, device)
