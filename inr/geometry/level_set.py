"""The surface of a field: the field sampled on a box grid slab by slab, and marching cubes on its level set.

A box [lo, hi] (2, 3) sampled at R points per axis has samples lo + (hi − lo)·i/(R − 1), i = 0 … R − 1, both
faces of the box included, axes in the order of the field's coordinates (x, y, z for a mesh task). Marching
cubes (scikit-image, Lewiner et al. 2003) gives vertices in that order and frame. ``closed=True`` surrounds
the grid with one layer of "outside" so the surface closes where the shape meets the box, as a solid's surface
must for Chamfer distances and renders. The caps lie between the box's faces and the padding, less than one
sample spacing outside the box (moving them onto the faces would merge vertices and break the closed surface).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import torch
from torch import Tensor

from inr.extras import require
from inr.io.progress import advance


def box_axes(box: np.ndarray, resolution: int) -> list[np.ndarray]:
    """The sample positions on each axis, lo + (hi − lo)·i/(R − 1): three arrays of R values."""
    box = np.asarray(box, dtype=np.float64)
    return [np.linspace(box[0, k], box[1, k], resolution) for k in range(3)]


@torch.no_grad()
def sample_box(
    fn: Callable[[Tensor], Tensor], box: np.ndarray, resolution: int, device: torch.device | str = "cpu"
) -> np.ndarray:
    """fn (points (N, 3) -> values (N,) or (N, 1)) on the box grid, one slab of the first axis at a time, so at
    most R² points exist at once: -> (R, R, R) float32, axis k = coordinate k."""
    x, y, z = (torch.as_tensor(a, dtype=torch.float32, device=device) for a in box_axes(box, resolution))
    yz = torch.stack(torch.meshgrid(y, z, indexing="ij"), dim=-1).reshape(-1, 2)  # (R², 2)
    out = np.empty((resolution,) * 3, dtype=np.float32)
    for i in range(resolution):
        points = torch.cat([x[i].expand(len(yz), 1), yz], dim=1)  # (R², 3)
        out[i] = fn(points).reshape(resolution, resolution).float().cpu().numpy()
        advance((i + 1) * len(yz), resolution * len(yz))  # a command waiting on this sampling shows how far it is
    return out


def marching_cubes(
    grid: np.ndarray,
    level: float,
    origin: np.ndarray,
    spacing: np.ndarray,
    inside: Literal["above", "below"] = "above",
    closed: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` iso-surface of a (D, H, W) grid whose sample (i, j, k) sits at origin + spacing·(i, j, k):
    vertices (V, 3) float32 in that frame and triangles (F, 3) int64 whose normals (b − a) × (c − a) point away
    from the inside (values ``above`` or ``below`` the level). ``closed``: pad the grid with one outside layer.

    Raises ValueError when the field never crosses the level (no surface).
    """
    skimage_marching_cubes = require("skimage.measure", extra="meshes", what="marching cubes").marching_cubes

    grid = np.asarray(grid, dtype=np.float32)
    origin, spacing = np.asarray(origin, dtype=np.float64), np.asarray(spacing, dtype=np.float64)
    if closed:
        outside = np.float32(level - 1.0 if inside == "above" else level + 1.0)
        grid = np.pad(grid, 1, constant_values=outside)
        origin = origin - spacing
    lo, hi = float(grid.min()), float(grid.max())
    if not lo < level < hi:
        raise ValueError(f"the field never crosses level {level:g} (its values lie in [{lo:.3g}, {hi:.3g}]); no surface")
    # "descent": normals point to lower values, out of an inside above the level
    direction = "descent" if inside == "above" else "ascent"
    verts, faces, _, _ = skimage_marching_cubes(grid, level=level, gradient_direction=direction)
    verts = origin + verts * spacing
    # scikit-image orders a triangle's corners clockwise around its own normal: reversed, (b − a) × (c − a) is that normal
    return verts.astype(np.float32), np.ascontiguousarray(faces[:, ::-1], dtype=np.int64)


def level_set_mesh(
    fn: Callable[[Tensor], Tensor],
    box: np.ndarray,
    resolution: int,
    level: float,
    inside: Literal["above", "below"] = "above",
    device: torch.device | str = "cpu",
) -> tuple[np.ndarray, np.ndarray]:
    """The closed level-set mesh of fn inside the box, sampled at ``resolution`` points per axis."""
    box = np.asarray(box, dtype=np.float64)
    grid = sample_box(fn, box, resolution, device)
    spacing = (box[1] - box[0]) / (resolution - 1)
    return marching_cubes(grid, level, box[0], spacing, inside, closed=True)
