"""Meshes of a learned 3D field: marching cubes on a chunked render, written as PLY, OBJ, STL or GLB.

    verts, faces = extract_mesh(model, resolution=128, level=0.5)   # model: a trained task on 3-D coordinates
    write_mesh("shape.ply", verts, faces)

The command is ``inr-mesh`` (``inr.run.mesh``).

Files hold vertices in x, y, z order, as MeshLab, Blender and trimesh read them. A grid task's coordinates are
its array's axes (z, y, x) (``INRModule.coordinate_axes``): a vertex at fractional voxel index (i, j, k) of a
(D, H, W) render is written as (x, y, z) = (k/W, j/H, i/D), in [0, 1)³. A shape task (``ShapeFitting``) works in
its mesh's own x, y, z (the normalised frame of ``inr.geometry.normalize``) and is meshed over its box, closed
where the shape meets the box. Triangles turn counter-clockwise seen from outside: their normals
(b − a) × (c − a) point to lower field values, out of an occupancy or density shape (and out of the negative
side of a signed distance). Written and read through trimesh: binary PLY, OBJ, binary STL (3D printing; no
colours) and GLB (binary glTF 2.0, for web viewers and Blender; glTF viewers take +y as up, and the vertices are
written as they are, not turned). A radiance field's density surface and point cloud: ``inr.export.radiance_mesh``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.errors import EXIT_INPUT, InputError, check_memory
from inr.extras import require
from inr.geometry.level_set import level_set_mesh, marching_cubes
from inr.io.files import atomic_write
from inr.modes import eval_mode
from inr.sizes import grid_size

MESH_EXTENSIONS = (".ply", ".obj", ".stl", ".glb")
POINT_EXTENSIONS = (".ply", ".glb")  # the formats trimesh writes point clouds to, with colours


def marching_cubes_mesh(volume: Union[Tensor, np.ndarray], level: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` iso-surface of a (D, H, W) grid of v = i / N samples -> vertices (V, 3) float32 in the
    grid's axis order and coordinates, and triangles (F, 3) int64 whose normals point to lower values
    (``inr.geometry.level_set.marching_cubes``: scikit-image, Lewiner et al. 2003)."""
    grid = volume.detach().cpu().numpy() if isinstance(volume, Tensor) else np.asarray(volume)
    if grid.ndim != 3 or min(grid.shape) < 2:
        raise InputError(f"marching cubes needs a (D, H, W) grid with at least 2 samples per axis, got {grid.shape}")
    try:
        return marching_cubes(grid, level, np.zeros(3), 1.0 / np.asarray(grid.shape, dtype=np.float64))
    except ValueError as exc:
        raise InputError(str(exc)) from None


def to_xyz(verts: np.ndarray, faces: np.ndarray, axes: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of coordinates in ``axes`` order ("zyx" or "xyz") -> x, y, z order. Reversing the axes is a
    reflection, so the triangles' corners are reversed too and their normals keep pointing outward."""
    if axes == "xyz":
        return verts, faces
    if axes != "zyx":
        raise ValueError(f"coordinate axes must be 'zyx' or 'xyz', got {axes!r}")
    return np.ascontiguousarray(verts[:, ::-1]), np.ascontiguousarray(faces[:, ::-1])


@torch.no_grad()
def extract_mesh(
    model,
    resolution: Union[int, Sequence[int]] = 128,
    level: Optional[float] = None,
    channel: int = 0,
    chunk: Optional[int] = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` set of ``channel`` of ``model`` (an ``INRModule`` on 3-D coordinates): vertices (V, 3) in x, y, z
    and outward triangles (F, 3).

    A grid task is rendered on a ``resolution``³ grid of [0, 1)³ in chunks of ``chunk`` coordinates; a model with
    a ``box`` (a shape task) is sampled over that box, both faces included, slab by slab, and its mesh closed.
    ``level`` defaults to the model's ``level`` or 0.5 (the decision boundary of an occupancy probability, the
    midpoint of a density in [0, 1]); use 0 for a signed distance. Peak memory: one render chunk (or slab) plus
    the D·H·W output.
    """
    size = grid_size(resolution, 3, name="mesh resolution")
    if chunk is not None and chunk < 1:
        raise InputError(f"mesh render chunk must be ≥ 1 coordinates, got {chunk}")
    # the render (C·D·H·W floats), its float32 copy for marching cubes and the scikit-image work arrays
    numel = size[0] * size[1] * size[2]
    check_memory(f"a mesh at resolution {size}", numel * 4 * (model.out_channels + 3), advice="choose a smaller --resolution")
    if model.encoder.in_dim != 3:
        raise InputError(f"a mesh needs a field on 3-D coordinates; this model takes {model.encoder.in_dim}-D")
    if callable(getattr(model, "query", None)) and getattr(model, "scene_box", None) is not None:
        raise InputError(
            "a radiance field's surface is where its density crosses a threshold: inr.export.radiance_mesh.radiance_mesh "
            "(inr-mesh meshes it, --level the threshold)"
        )
    level = float(getattr(model, "level", 0.5)) if level is None else level
    box = getattr(model, "box", None)
    with eval_mode(model):
        if box is not None:
            if len(set(size)) != 1:
                raise InputError(f"a shape is meshed on a cube of samples; give one --resolution, got {size}")
            try:
                verts, faces = level_set_mesh(
                    lambda p: model.predict(p, chunk)[:, channel],
                    box.detach().cpu().numpy(),
                    size[0],
                    level,
                    getattr(model, "inside", "above"),
                    model.device,
                )
            except ValueError as exc:
                raise InputError(str(exc)) from None
            return to_xyz(verts, faces, getattr(model, "coordinate_axes", "xyz"))
        grid = model.render(size, chunk=chunk)[channel]  # (C, D, H, W) -> (D, H, W)
    verts, faces = marching_cubes_mesh(grid, level)
    return to_xyz(verts, faces, getattr(model, "coordinate_axes", "zyx"))


def _export(path: Union[str, Path], geometry, suffix: str, options: dict) -> Path:
    """Write a trimesh object to ``path`` atomically (the file appears whole or not at all)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = geometry.export(file_type=suffix[1:], **options)
    with atomic_write(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def write_mesh(path: Union[str, Path], verts: np.ndarray, faces: np.ndarray, colors: Optional[np.ndarray] = None) -> Path:
    """Write a triangle mesh, vertices (V, 3) in x, y, z, as binary little-endian PLY (``.ply``), Wavefront OBJ
    (``.obj``), binary STL (``.stl``) or binary glTF (``.glb``) through trimesh; ``colors`` (V, 3 or 4) uint8 per
    vertex, kept by PLY, OBJ and GLB (STL has none). The file appears whole or not at all."""
    trimesh = require("trimesh", extra="meshes", what="writing a mesh")

    suffix = Path(path).suffix.lower()
    if suffix not in MESH_EXTENSIONS:
        raise InputError(f"{path}: unsupported mesh extension {Path(path).suffix!r}; use {', '.join(MESH_EXTENSIONS)}")
    visual = {} if colors is None else {"vertex_colors": np.asarray(colors, dtype=np.uint8)}
    mesh = trimesh.Trimesh(np.asarray(verts, dtype=np.float32), np.asarray(faces, dtype=np.int64), process=False, **visual)
    options = {".ply": {"encoding": "binary"}, ".obj": {"include_normals": False}}.get(suffix, {})
    return _export(path, mesh, suffix, options)


def write_points(path: Union[str, Path], points: np.ndarray, colors: Optional[np.ndarray] = None) -> Path:
    """Write a point cloud (P, 3) in x, y, z, with ``colors`` (P, 3 or 4) uint8, as binary PLY or GLB."""
    trimesh = require("trimesh", extra="meshes", what="writing a point cloud")

    suffix = Path(path).suffix.lower()
    if suffix not in POINT_EXTENSIONS:
        raise InputError(f"{path}: unsupported point-cloud extension {Path(path).suffix!r}; use {' or '.join(POINT_EXTENSIONS)}")
    cloud = trimesh.PointCloud(
        np.asarray(points, dtype=np.float32), colors=None if colors is None else np.asarray(colors, np.uint8)
    )
    return _export(path, cloud, suffix, {"encoding": "binary"} if suffix == ".ply" else {})


def read_mesh(path: Union[str, Path]) -> tuple[np.ndarray, np.ndarray]:
    """Read a mesh file through trimesh, as stored (nothing merged): vertices (V, 3) float32 in x, y, z, triangles (F, 3) int64."""
    trimesh = require("trimesh", extra="meshes", what="reading a mesh")

    mesh = trimesh.load(str(path), force="mesh", process=False)
    return np.asarray(mesh.vertices, dtype=np.float32), np.asarray(mesh.faces, dtype=np.int64)


def mesh_report(verts: np.ndarray, faces: np.ndarray) -> str:
    """One line on a mesh: vertices, triangles, watertight or not (with its open edges), connected components.

    Example:
        >>> from inr.geometry.procedural import torus_mesh
        >>> mesh_report(*torus_mesh(1.0, 0.3, segments=16, sides=8))
        '128 vertices, 256 triangles, watertight, 1 connected component'
    """
    trimesh = require("trimesh", extra="meshes", what="describing a mesh")

    mesh = trimesh.Trimesh(verts, faces, process=True)  # merged vertices: edges shared by position
    components = len(trimesh.graph.connected_components(mesh.face_adjacency, nodes=np.arange(len(mesh.faces))))
    if mesh.is_watertight:
        closed = "watertight"
    else:
        edges = trimesh.grouping.group_rows(mesh.edges_sorted, require_count=1)
        closed = f"not watertight ({len(edges):,} open edges)"
    return (
        f"{len(verts):,} vertices, {len(faces):,} triangles, {closed}, {components} connected component{'s' * (components != 1)}"
    )


if __name__ == "__main__":  # the command this module was before the re-layout: a script calling it must not succeed silently
    print(
        "error: python -m inr.export.mesh is no longer a command; run inr-mesh (python -m inr.run.mesh) with the same options",
        file=sys.stderr,
    )
    raise SystemExit(EXIT_INPUT)
