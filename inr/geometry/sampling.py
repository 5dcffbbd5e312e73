"""Points on a triangle mesh's surface, uniform by area, with the normal of the triangle each lies on.

A triangle is drawn with probability proportional to its area, then a point in it with barycentric
coordinates (1 − √u, √u(1 − v), √u·v), u, v ~ U[0, 1): uniform over the triangle (Osada et al. 2002, eq. 1).
The normal is the triangle's unit normal (b − a) × (c − a) / |…|, outward for an outward-oriented mesh.
"""

from __future__ import annotations

import numpy as np


def face_normals_and_areas(verts: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit normals (F, 3) and areas (F,) of the triangles; a zero-area triangle gets a zero normal."""
    tri = np.asarray(verts, dtype=np.float64)[np.asarray(faces)]  # (F, 3 corners, 3)
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    norm = np.linalg.norm(cross, axis=1)
    return cross / np.maximum(norm, np.finfo(np.float64).tiny)[:, None], norm / 2


def sample_surface(verts: np.ndarray, faces: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points uniform on the surface by area and their triangles' unit normals, each (n, 3) float64.

    Example:
        >>> verts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
        >>> p, n = sample_surface(verts, np.array([[0, 1, 2]]), 1000, np.random.default_rng(0))
        >>> bool((p[:, 2] == 0).all() and (p[:, :2] >= 0).all() and (p[:, :2].sum(1) <= 1).all()), n[0].tolist()
        (True, [0.0, 0.0, 1.0])
    """
    verts, faces = np.asarray(verts, dtype=np.float64), np.asarray(faces)
    normals, areas = face_normals_and_areas(verts, faces)
    total = areas.sum()
    if not total > 0:
        raise ValueError("the mesh has no area to sample")
    face = rng.choice(len(faces), size=n, p=areas / total)
    u, v = rng.random((2, n))
    su = np.sqrt(u)
    bary = np.stack([1 - su, su * (1 - v), su * v], axis=1)  # (n, 3)
    points = np.einsum("nk,nkd->nd", bary, verts[faces[face]])  # Σ_k b_k · corner_k
    return points, normals[face]


def near_surface(verts: np.ndarray, faces: np.ndarray, n: int, std: float, rng: np.random.Generator) -> np.ndarray:
    """n surface samples moved by N(0, std²) on every axis: the paper's "hard" test points (std 0.01), (n, 3)."""
    points, _ = sample_surface(verts, faces, n, rng)
    return points + rng.normal(0.0, std, size=(n, 3))
