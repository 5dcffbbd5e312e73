"""Geometry of a trained radiance field: the surface where its density σ crosses a threshold (marching cubes), or
the point cloud of the samples at or above it, with the field's colour, in the scene's world frame.

    mesh = radiance_mesh(model, resolution=128)                 # threshold: one voxel 50 % opaque (below)
    write_mesh("scene.glb", mesh.verts, mesh.faces, mesh.colors); print(mesh.describe())
    cloud = radiance_points(model, resolution=128, threshold=20.0)
    write_points("scene.ply", cloud.points, cloud.colors)

The density is sampled at the centres of a resolution³ grid of voxels over the scene box the field was trained in
(``model.scene_box``, kept in its checkpoint), in x, y, z of the cameras' world frame, chunk by chunk. Density has
units of 1/length: over a step δ along a ray the renderer makes a sample opaque by α = 1 − exp(−σδ). The
threshold is therefore a choice of what counts as matter, and every result says which it used. Without one,
σ* = ln 2 / δ, the density at which one voxel of the grid (δ its smallest side) is half opaque: a surface that
stops half the light within a voxel. Colours are the field's colour at each vertex or point (view-independent
in this field). Triangles turn counter-clockwise seen from the empty side (normals point to lower density).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor

from inr.errors import InputError, check_memory
from inr.geometry.level_set import marching_cubes
from inr.modes import eval_mode

POINTS_LIMIT = 10_000_000  # a point cloud larger than this is no longer a preview: choose a higher threshold


def is_radiance_field(model: Any) -> bool:
    """Whether ``model`` is a radiance field (density and colour at world points: ``query``, ``scene_box``)."""
    return callable(getattr(model, "query", None)) and getattr(model, "scene_box", None) is not None


def default_threshold(model: Any, resolution: int) -> float:
    """σ* = ln 2 / δ: the density at which one voxel (δ: the smallest side of the scene box over ``resolution``) is
    half opaque, 1 − exp(−σ* δ) = ½.

    Example:
        >>> class Field:
        ...     scene_box = torch.tensor([[-1.5] * 3, [1.5] * 3])
        >>> round(default_threshold(Field(), 100), 3)  # δ = 3 / 100
        23.105
    """
    lo, hi = model.scene_box.detach().cpu().double()
    return math.log(2.0) / (float((hi - lo).min()) / resolution)


def _check(model: Any, resolution: int, threshold: Optional[float]) -> float:
    if not is_radiance_field(model):
        raise InputError(f"density geometry needs a radiance field (RadianceFieldFitting); this is a {type(model).__name__}")
    if resolution < 2:
        raise InputError(f"--resolution must be at least 2, got {resolution}")
    if threshold is None:
        return default_threshold(model, resolution)
    if not (math.isfinite(threshold) and threshold > 0):
        raise InputError(f"the density threshold must be a positive number (density is ≥ 0), got {threshold}")
    return float(threshold)


def _centres(model: Any, resolution: int) -> tuple[Tensor, Tensor, Tensor]:
    """(origin, spacing, axis positions (3, N)): voxel centres lo + (i + ½) δ of each world axis."""
    lo, hi = model.scene_box.detach().cpu().double()
    spacing = (hi - lo) / resolution
    origin = lo + 0.5 * spacing
    steps = torch.arange(resolution, dtype=torch.float64)
    return origin, spacing, origin[:, None] + steps[None] * spacing[:, None]


@torch.no_grad()
def density_grid(model: Any, resolution: int, chunk: Optional[int] = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """σ at the voxel centres of the scene box, (N, N, N) float32 indexed [x, y, z], with the grid's origin (the
    first centre) and spacing (3,), sampled ``chunk`` points at a time (default: the model's render chunk)."""
    numel = resolution**3
    check_memory(f"the density of a {resolution}³ grid", numel * 4 * 3, advice="choose a smaller --resolution")
    chunk = chunk or int(getattr(model, "render_chunk", 65536))
    if chunk < 1:
        raise InputError(f"--chunk must be at least 1 point, got {chunk}")
    origin, spacing, axes = _centres(model, resolution)
    axes = axes.to(model.device, torch.float32)
    out = torch.empty(numel, dtype=torch.float32)
    with eval_mode(model):
        for start in range(0, numel, chunk):
            index = torch.arange(start, min(start + chunk, numel), device=model.device)
            ijk = torch.stack([index // resolution**2, (index // resolution) % resolution, index % resolution], 1)
            points = torch.stack([axes[d][ijk[:, d]] for d in range(3)], 1)  # (n, 3) world x, y, z
            out[start : start + len(index)] = model.query(points)[0].float().cpu()
    return out.reshape(resolution, resolution, resolution).numpy(), origin.numpy(), spacing.numpy()


@torch.no_grad()
def colours_at(model: Any, points: np.ndarray, chunk: Optional[int] = None) -> np.ndarray:
    """The field's colour at world points (P, 3) -> (P, 4) uint8 RGBA (opaque)."""
    chunk = chunk or int(getattr(model, "render_chunk", 65536))
    out = np.empty((len(points), 4), dtype=np.uint8)
    out[:, 3] = 255
    with eval_mode(model):
        for start in range(0, len(points), chunk):
            p = torch.as_tensor(points[start : start + chunk], dtype=torch.float32, device=model.device)
            rgb = model.query(p)[1][:, :3].clamp(0, 1)  # (n, C) in (0, 1)
            out[start : start + len(p), :3] = (rgb * 255).round().to(torch.uint8).cpu().numpy()
    return out


@dataclass
class DensityGeometry:
    """A mesh (``faces`` given) or a point cloud of a radiance field's density at ``threshold``, with its colours."""

    verts: np.ndarray  # (V, 3) float32 world x, y, z: a mesh's vertices or the cloud's points
    colors: np.ndarray  # (V, 4) uint8 RGBA
    threshold: float
    default: bool  # the threshold is σ* = ln 2 / δ
    voxel: float  # δ, the grid's smallest voxel side
    faces: Optional[np.ndarray] = None  # (F, 3) int64

    @property
    def points(self) -> np.ndarray:
        return self.verts

    def describe(self) -> str:
        """The threshold in one line, with what it means for one voxel of the grid.

        Example:
            >>> g = DensityGeometry(np.zeros((1, 3), np.float32), np.zeros((1, 4), np.uint8), 23.1, True, 0.03)
            >>> g.describe()
            'density σ ≥ 23.1 (one voxel of 0.03, 50% opaque at σ; the default: ln 2 / voxel)'
        """
        opacity = 1.0 - math.exp(-self.threshold * self.voxel)
        why = "; the default: ln 2 / voxel" if self.default else ""
        return f"density σ ≥ {self.threshold:.4g} (one voxel of {self.voxel:.4g}, {opacity:.0%} opaque at σ{why})"


def radiance_mesh(
    model: Any, resolution: int = 128, threshold: Optional[float] = None, chunk: Optional[int] = None
) -> DensityGeometry:
    """The surface σ = ``threshold`` (default ln 2 / δ) of a radiance field by marching cubes on a ``resolution``³
    grid of its scene box, closed where matter meets the box, with the field's colour at each vertex."""
    level = _check(model, resolution, threshold)
    grid, origin, spacing = density_grid(model, resolution, chunk)
    try:
        verts, faces = marching_cubes(grid, level, origin, spacing, inside="above", closed=True)
    except ValueError as exc:  # never crosses the level
        raise InputError(f"radiance field: {exc}; choose another --level") from None
    voxel = float(spacing.min())
    return DensityGeometry(verts, colours_at(model, verts, chunk), level, threshold is None, voxel, faces)


def radiance_points(
    model: Any,
    resolution: int = 128,
    threshold: Optional[float] = None,
    chunk: Optional[int] = None,
    limit: int = POINTS_LIMIT,
) -> DensityGeometry:
    """The voxel centres of a ``resolution``³ grid of the scene box where σ ≥ ``threshold`` (default ln 2 / δ), with
    the field's colour there; at most ``limit`` points (refused in one line beyond)."""
    level = _check(model, resolution, threshold)
    grid, origin, spacing = density_grid(model, resolution, chunk)
    ijk = np.argwhere(grid >= level)  # (P, 3) indices [x, y, z]
    if len(ijk) == 0:
        raise InputError(
            f"radiance field: no sample has density ≥ {level:.4g} (the largest is {float(grid.max()):.4g}); choose a lower --level"
        )
    if len(ijk) > limit:
        raise InputError(
            f"radiance field: {len(ijk):,} samples have density ≥ {level:.4g}, over {limit:,}; choose a higher --level"
        )
    points = (origin + ijk * spacing).astype(np.float32)
    return DensityGeometry(points, colours_at(model, points, chunk), level, threshold is None, float(spacing.min()))
