"""Procedural closed triangle meshes: a tube swept along a torus knot (with ribs and flutes), and the plain torus.

A (p, q) torus knot winds p times around the axis of a torus of radii (R, r) and q times through its hole:
c(t) = ((R + r cos qt) cos pt, (R + r cos qt) sin pt, −r sin qt), t ∈ [0, 2π). The tube around it is a
(T × P) grid of vertices, t_i = 2πi/T along the curve and φ_j = 2πj/P around it, joined in both directions,
so the surface is closed and has one handle (genus 1): watertight, with holes through it. Its radius
a(t, φ) = a₀ (1 + ε_rib cos(n_rib t) + ε_flute cos(n_flute φ)) carries ribs across the tube and flutes
along it, detail far finer than the knot. The frame around the curve is the direction from the torus's core
circle to c(t), made orthogonal to the tangent; it is periodic in t, so the tube closes without a seam twist.
With q = 0, p = 1, r = 0 and no ribs or flutes the tube is the torus of radii (R, a₀) around z.
"""

from __future__ import annotations

import math

import numpy as np


def torus_knot_tube(
    p: int = 2,
    q: int = 3,
    major: float = 1.0,
    minor: float = 0.42,
    tube: float = 0.17,
    rib_count: int = 60,
    rib_depth: float = 0.15,
    flute_count: int = 6,
    flute_depth: float = 0.1,
    segments: int = 360,
    sides: int = 16,
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (T·P, 3) float64 in x, y, z and outward-oriented triangles (2·T·P, 3) int64 of the tube of
    radius a(t, φ) = tube·(1 + rib_depth·cos(rib_count·t) + flute_depth·cos(flute_count·φ)) around the (p, q)
    torus knot on the torus of radii (major, minor); T = ``segments``, P = ``sides``.

    Example:
        >>> verts, faces = torus_knot_tube(p=1, q=0, minor=0.0, tube=0.25, rib_depth=0, flute_depth=0, segments=64, sides=32)
        >>> verts.shape, faces.shape
        ((2048, 3), (4096, 3))
        >>> radius = np.hypot(np.hypot(verts[:, 0], verts[:, 1]) - 1.0, verts[:, 2])  # distance from the core circle
        >>> bool(np.allclose(radius, 0.25))
        True
    """
    if segments < 3 or sides < 3:
        raise ValueError(f"a tube needs at least 3 segments and 3 sides, got {segments} and {sides}")
    t = 2 * math.pi * np.arange(segments) / segments  # (T,)
    phi = 2 * math.pi * np.arange(sides) / sides  # (P,)
    ring = major + minor * np.cos(q * t)
    curve = np.stack([ring * np.cos(p * t), ring * np.sin(p * t), -minor * np.sin(q * t)], axis=1)  # (T, 3)
    tangent = np.stack(
        [
            -minor * q * np.sin(q * t) * np.cos(p * t) - ring * p * np.sin(p * t),
            -minor * q * np.sin(q * t) * np.sin(p * t) + ring * p * np.cos(p * t),
            -minor * q * np.cos(q * t),
        ],
        axis=1,
    )  # dc/dt, (T, 3)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    # from the core circle (radius R in the xy-plane) to the curve: periodic in t
    outward = np.stack([np.cos(q * t) * np.cos(p * t), np.cos(q * t) * np.sin(p * t), -np.sin(q * t)], axis=1)
    normal = outward - (outward * tangent).sum(1, keepdims=True) * tangent
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    binormal = np.cross(tangent, normal)
    radius = tube * (1 + rib_depth * np.cos(rib_count * t)[:, None] + flute_depth * np.cos(flute_count * phi)[None, :])  # (T, P)
    around = np.cos(phi)[None, :, None] * normal[:, None, :] + np.sin(phi)[None, :, None] * binormal[:, None, :]  # (T, P, 3)
    verts = (curve[:, None, :] + radius[..., None] * around).reshape(-1, 3)  # (T, P, 3) -> (T·P, 3)
    i, j = np.meshgrid(np.arange(segments), np.arange(sides), indexing="ij")
    a = i * sides + j
    b = ((i + 1) % segments) * sides + j
    c = ((i + 1) % segments) * sides + (j + 1) % sides
    d = i * sides + (j + 1) % sides
    # T × ∂(around)/∂φ = −around: the quad (a, b, c, d) turns clockwise seen from outside, so it is split reversed
    faces = np.concatenate([np.stack([a, c, b], -1).reshape(-1, 3), np.stack([a, d, c], -1).reshape(-1, 3)])
    return verts, faces.astype(np.int64)


def torus_mesh(major: float, minor: float, segments: int = 128, sides: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """The torus of radii (major, minor) around the z axis through the origin, as ``torus_knot_tube`` builds it."""
    return torus_knot_tube(
        p=1, q=0, major=major, minor=0.0, tube=minor, rib_depth=0.0, flute_depth=0.0, segments=segments, sides=sides
    )
