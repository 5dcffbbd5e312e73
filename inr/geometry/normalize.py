"""The frame a mesh is fitted in: Tancik et al. 2020's recentring, and the box its points are drawn from.

v' = ½((v − mean(v)) / max|v − mean(v)| + 1): the vertices' mean goes to (½, ½, ½) and the largest coordinate
magnitude to 0 or 1, so the mesh lies in [0, 1]³ touching at least one face of the cube. The box is the
vertices' bounds widened by 10⁻³ on every side (the paper's released notebook ``3d_shape_occupancy.ipynb``,
``recenter_mesh`` and ``load_mesh``: ``c0, c1 = min − 1e-3, max + 1e-3``). Training and test points are drawn
from that box, not from the cube.
"""

from __future__ import annotations

import numpy as np

# the box's margin around the normalised vertices (the notebook's 1e-3)
BOX_MARGIN = 1e-3


def normalize_vertices(verts: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """(V, 3) -> (normalised (V, 3) float64, scale s, centre c) with v' = ½((v − c)/s + 1), c the mean vertex
    and s = max|v − c| over every coordinate.

    Example:
        >>> v, s, c = normalize_vertices(np.array([[0.0, 0, 0], [4, 0, 0], [0, 2, 0], [0, 0, 2]]))
        >>> v.min(0).round(4).tolist(), v.max(0).round(4).tolist(), s, c.tolist()
        ([0.3333, 0.4167, 0.4167], [1.0, 0.75, 0.75], 3.0, [1.0, 0.5, 0.5])
    """
    v = np.asarray(verts, dtype=np.float64)
    centre = v.mean(axis=0)
    scale = float(np.abs(v - centre).max())
    if not scale > 0:
        raise ValueError("every vertex is at the same point: nothing to normalise")
    return 0.5 * ((v - centre) / scale + 1.0), scale, centre


def bounding_box(verts: np.ndarray, margin: float = BOX_MARGIN) -> np.ndarray:
    """[[x₀, y₀, z₀], [x₁, y₁, z₁]] = the vertices' bounds ∓ ``margin``, (2, 3) float64.

    Example:
        >>> bounding_box(np.array([[0.0, 0.2, 0.5], [1.0, 0.4, 0.5]])).tolist()
        [[-0.001, 0.199, 0.499], [1.001, 0.401, 0.501]]
    """
    v = np.asarray(verts, dtype=np.float64)
    return np.stack([v.min(axis=0) - margin, v.max(axis=0) + margin])


def uniform_in_box(box: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n points uniform in the box (2, 3): lo + (hi − lo)·u, u ~ U[0, 1)³ -> (n, 3) float64."""
    box = np.asarray(box, dtype=np.float64)
    return box[0] + (box[1] - box[0]) * rng.random((n, 3))
