"""Meshes of a learned 3D field: marching cubes on a chunked render, written as PLY or OBJ.

    verts, faces = extract_mesh(model, resolution=128, level=0.5)   # model: a trained task on 3-D coordinates
    write_mesh("shape.ply", verts, faces)

The command is ``inr-mesh`` (``inr.run.mesh``).

Vertices are given in the grid's coordinates: a vertex at fractional voxel index (i, j, k) of a (D, H, W)
render sits at (i/D, j/H, k/W) ∈ [0, 1)³, the same positions the network was trained on (axis order
(z, y, x) = the grid's axes). Faces are oriented with normals pointing to lower field values: out of an
occupancy or density shape, into the positive side of a signed distance.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.errors import InputError, check_memory
from inr.io.files import atomic_write
from inr.modes import eval_mode
from inr.sizes import grid_size

MESH_EXTENSIONS = (".ply", ".obj")


def marching_cubes_mesh(volume: Union[Tensor, np.ndarray], level: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` iso-surface of a (D, H, W) grid of v = i / N samples -> vertices (V, 3) float32 in
    grid coordinates and triangles (F, 3) int64 (scikit-image ``marching_cubes``, Lewiner et al. 2003)."""
    from skimage.measure import marching_cubes

    grid = volume.detach().cpu().numpy() if isinstance(volume, Tensor) else np.asarray(volume)
    if grid.ndim != 3 or min(grid.shape) < 2:
        raise InputError(f"marching cubes needs a (D, H, W) grid with at least 2 samples per axis, got {grid.shape}")
    lo, hi = float(grid.min()), float(grid.max())
    if not lo < level < hi:
        raise InputError(f"the field never crosses level {level:g} (its values lie in [{lo:.3g}, {hi:.3g}]); no surface")
    verts, faces, _, _ = marching_cubes(grid.astype(np.float32), level=level)
    verts = verts / np.asarray(grid.shape, dtype=np.float32)  # voxel index -> coordinate v = i / N
    return verts.astype(np.float32), faces.astype(np.int64)


@torch.no_grad()
def extract_mesh(
    model,
    resolution: Union[int, Sequence[int]] = 128,
    level: Optional[float] = None,
    channel: int = 0,
    chunk: Optional[int] = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Render ``model`` (an ``INRModule`` on 3-D coordinates) on a ``resolution``³ grid in chunks of
    ``chunk`` coordinates and return the mesh of its ``level`` set of ``channel``.

    ``level`` defaults to 0.5 (the decision boundary of an occupancy probability, the midpoint of a
    density in [0, 1]); use 0 for a signed distance. Peak memory: one render chunk plus the D·H·W output.
    """
    size = grid_size(resolution, 3, name="mesh resolution")
    if chunk is not None and chunk < 1:
        raise InputError(f"mesh render chunk must be ≥ 1 coordinates, got {chunk}")
    # the render (C·D·H·W floats), its float32 copy for marching cubes and the scikit-image work arrays
    numel = size[0] * size[1] * size[2]
    check_memory(f"a mesh at resolution {size}", numel * 4 * (model.out_channels + 3), advice="choose a smaller --resolution")
    if model.encoder.in_dim != 3:
        raise InputError(f"a mesh needs a field on 3-D coordinates; this model takes {model.encoder.in_dim}-D")
    with eval_mode(model):
        grid = model.render(size, chunk=chunk)[channel]  # (C, D, H, W) -> (D, H, W)
    return marching_cubes_mesh(grid, 0.5 if level is None else level)


def write_mesh(path: Union[str, Path], verts: np.ndarray, faces: np.ndarray) -> Path:
    """Write a triangle mesh as binary little-endian PLY (``.ply``) or Wavefront OBJ (``.obj``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in MESH_EXTENSIONS:
        raise InputError(f"{path}: unsupported mesh extension {path.suffix!r}; use .ply or .obj")
    path.parent.mkdir(parents=True, exist_ok=True)
    verts = np.ascontiguousarray(verts, dtype="<f4")
    if suffix == ".ply":
        header = (
            "ply\nformat binary_little_endian 1.0\ncomment inr: vertices in grid coordinates [0,1)^3\n"
            f"element vertex {len(verts)}\nproperty float x\nproperty float y\nproperty float z\n"
            f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n"
        )
        rows = np.empty(len(faces), dtype=[("n", "u1"), ("v", "<i4", (3,))])  # one record per triangle
        rows["n"], rows["v"] = 3, faces
        with atomic_write(path, "wb") as f:
            f.write(header.encode("ascii"))
            f.write(verts.tobytes())
            f.write(rows.tobytes())
    else:
        with atomic_write(path, "w") as f:
            f.write("# inr: vertices in grid coordinates [0,1)^3\n")
            np.savetxt(f, verts, fmt="v %.6f %.6f %.6f")
            np.savetxt(f, np.asarray(faces) + 1, fmt="f %d %d %d")  # OBJ indices start at 1
    return path


def read_mesh(path: Union[str, Path]) -> tuple[np.ndarray, np.ndarray]:
    """Read back a mesh written by ``write_mesh``: vertices (V, 3) float32, triangles (F, 3) int64."""
    path = Path(path)
    if path.suffix.lower() == ".obj":
        lines = path.read_text().splitlines()
        verts = np.array([ln.split()[1:4] for ln in lines if ln.startswith("v ")], dtype=np.float32)
        faces = np.array([ln.split()[1:4] for ln in lines if ln.startswith("f ")], dtype=np.int64) - 1
        return verts.reshape(-1, 3), faces.reshape(-1, 3)
    data = path.read_bytes()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").splitlines()
    count = {ln.split()[1]: int(ln.split()[2]) for ln in header if ln.startswith("element")}
    verts = np.frombuffer(data, dtype="<f4", count=3 * count["vertex"], offset=end).reshape(-1, 3)
    rows = np.frombuffer(data, dtype=[("n", "u1"), ("v", "<i4", (3,))], count=count["face"], offset=end + verts.nbytes)
    return verts.copy(), rows["v"].astype(np.int64)
