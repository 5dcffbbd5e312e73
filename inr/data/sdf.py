"""Signed-distance primitives on points of [0,1)^3 and the built-in procedural shapes made from them.

Convention: d(p) < 0 inside, > 0 outside, |∇d| = 1 for the exact primitives (sphere, box, torus,
cylinder); the ripple of ``bumpy`` is a displacement, so that shape's field is only approximately a
distance. Formulas follow the standard closed forms (I. Quilez, "distance functions").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

BUILTIN_SHAPES = ("bumpy", "sphere")
SPHERE_CENTER, SPHERE_RADIUS = (0.5, 0.5, 0.5), 0.35


def sphere(p: Tensor, center: Sequence[float], radius: float) -> Tensor:
    """d(p) = |p − c| − r for points (N, 3) -> (N,).

    Example:
        >>> sphere(torch.tensor([[0.5, 0.5, 0.9]]), (0.5, 0.5, 0.5), 0.25)
        tensor([0.1500])
    """
    return (p - p.new_tensor(center)).norm(dim=-1) - radius


def box(p: Tensor, center: Sequence[float], half: Sequence[float]) -> Tensor:
    """d(p) = |max(q, 0)| + min(max_i q_i, 0), q = |p − c| − h (axis-aligned box of half-sizes h)."""
    q = (p - p.new_tensor(center)).abs() - p.new_tensor(half)  # (N, 3)
    return q.clamp(min=0).norm(dim=-1) + q.max(dim=-1).values.clamp(max=0)


def torus(p: Tensor, center: Sequence[float], major: float, minor: float, axis: int = 1) -> Tensor:
    """d(p) = |(|p_⊥| − R, p_axis)| − r: a ring of radius R and tube radius r around ``axis``."""
    q = p - p.new_tensor(center)
    along = q[:, axis]
    across = torch.cat([q[:, :axis], q[:, axis + 1 :]], dim=1).norm(dim=-1)  # distance from the axis
    return torch.stack([across - major, along], dim=-1).norm(dim=-1) - minor


def cylinder(p: Tensor, center: Sequence[float], radius: float, axis: int = 0) -> Tensor:
    """d(p) = |p_⊥| − r: an infinite cylinder of radius r along ``axis`` through ``center``."""
    q = p - p.new_tensor(center)
    return torch.cat([q[:, :axis], q[:, axis + 1 :]], dim=1).norm(dim=-1) - radius


def union(*ds: Tensor) -> Tensor:
    """min(d_1, d_2, ...): inside any."""
    return torch.stack(ds).min(dim=0).values


def subtract(a: Tensor, b: Tensor) -> Tensor:
    """max(a, −b): inside a and outside b."""
    return torch.maximum(a, -b)


def bumpy(p: Tensor) -> Tensor:
    """The default shape, with detail at several scales: a sphere (r = 0.28) whose surface carries a ripple
    0.015·sin(16πx)·sin(16πy)·sin(16πz) (8 cycles per unit), joined with a thin ring (R = 0.36, tube 0.035)
    around the y axis, and bored through along x by a cylinder of radius 0.09."""
    ripple = 0.015 * torch.sin(16 * math.pi * p).prod(dim=-1)
    body = sphere(p, (0.5, 0.5, 0.5), 0.28) + ripple
    ring = torus(p, (0.5, 0.5, 0.5), 0.36, 0.035, axis=1)
    return subtract(union(body, ring), cylinder(p, (0.5, 0.5, 0.5), 0.09, axis=0))


def builtin_sdf(name: str, p: Tensor) -> Tensor:
    """Signed distance of the built-in shape ``name`` at points (N, 3) -> (N,)."""
    if name == "sphere":
        return sphere(p, SPHERE_CENTER, SPHERE_RADIUS)
    if name == "bumpy":
        return bumpy(p)
    raise ValueError(f"unknown built-in shape {name!r}; choose one of {', '.join(BUILTIN_SHAPES)}")


def sdf_grid(name: str, shape: Sequence[int]) -> Tensor:
    """The built-in shape's signed distance on the grid v = i / N, (D, H, W) float32.

    Evaluated one slab of the first axis at a time, so the coordinates of the whole grid never exist at once.
    """
    d, h, w = shape
    out = torch.empty(d, h, w)
    yx = torch.stack(torch.meshgrid(torch.arange(h) / h, torch.arange(w) / w, indexing="ij"), dim=-1).reshape(-1, 2)
    for i in range(d):
        p = torch.cat([torch.full((len(yx), 1), i / d), yx], dim=1)  # (H·W, 3)
        out[i] = builtin_sdf(name, p).reshape(h, w)
    return out
