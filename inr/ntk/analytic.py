"""Infinite-width NNGP and NTK kernels of a ReLU MLP in the NTK parametrization (arc-cosine closed forms).

Network (Jacot et al. 2018): x̃^{l+1} = σ_w/√n_l · W^l x^l + β b^l, x^{l+1} = relu(x̃^{l+1}), W, b ~ N(0, 1),
``depth`` hidden ReLU layers and a linear output layer with the same (σ_w, β). As every width → ∞:

    Σ¹(x, x′) = σ_w² x·x′/n₀ + β²,                   Θ¹ = Σ¹,
    Σ^{l+1}   = σ_w² E[relu(u) relu(v)] + β²,         Θ^{l+1} = Θ^l · σ_w² E[relu′(u) relu′(v)] + Σ^{l+1},

(u, v) ~ N(0, [[Σ^l(x,x), Σ^l(x,x′)], [Σ^l(x,x′), Σ^l(x′,x′)]]); the output kernels are Σ^{D+1}, Θ^{D+1}.
With ρ = Σ^l(x,x′)/√(Σ^l(x,x) Σ^l(x′,x′)) and θ = arccos ρ (Cho & Saul 2009, arc-cosine kernels n = 1, 0):

    E[relu(u) relu(v)]   = √(Σ(x,x) Σ(x′,x′)) (sin θ + (π − θ) cos θ) / 2π,
    E[relu′(u) relu′(v)] = (π − θ) / 2π.

Inputs are whatever reaches the first layer, so ``analytic_ntk(enc(v), enc(v′), depth)`` is the kernel of
encoder + MLP; for Fourier features with constant ‖γ(v)‖ it depends on v − v′ only (Tancik et al. 2020).
"""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor


def relu_expectations(s11: Tensor, s12: Tensor, s22: Tensor) -> tuple[Tensor, Tensor]:
    """(E[relu(u) relu(v)], E[relu′(u) relu′(v)]) for (u, v) centred Gaussian with covariance [[s11, s12], [s12, s22]].

    Broadcasts over its arguments. A zero variance gives 0 for the first and, by continuity of the formula at
    ρ = 0, 1/4 for the second (its product with a zero Θ is what the recursion uses).

    Example:
        >>> e1, e0 = relu_expectations(torch.tensor(2.0), torch.tensor(2.0), torch.tensor(2.0))
        >>> round(float(e1), 6), round(float(e0), 6)   # u = v: E[relu(u)²] = s/2, P(u > 0) = 1/2
        (1.0, 0.5)
    """
    norm = torch.sqrt(s11 * s22)
    rho = torch.where(norm > 0, s12 / norm.clamp_min(torch.finfo(norm.dtype).tiny), torch.zeros_like(norm))
    theta = torch.arccos(rho.clamp(-1.0, 1.0))
    e_relu = norm * (torch.sin(theta) + (math.pi - theta) * torch.cos(theta)) / (2 * math.pi)
    e_step = (math.pi - theta) / (2 * math.pi)
    return e_relu, e_step


def analytic_kernels(
    x1: Tensor, x2: Optional[Tensor] = None, depth: int = 3, weight_std: float = 1.0, bias_std: float = 0.0
) -> tuple[Tensor, Tensor]:
    """(NNGP Σ^{D+1}, NTK Θ^{D+1}) between the rows of x1 (N1, n₀) and x2 (N2, n₀), each (N1, N2).

    See the module docstring for the recursion; ``depth`` = D counts hidden ReLU layers as ``MLP(depth=D)``.
    """
    if depth < 0:
        raise ValueError(f"depth must be ≥ 0, got {depth}")
    x2 = x1 if x2 is None else x2
    if x1.ndim != 2 or x2.ndim != 2 or x1.shape[1] != x2.shape[1]:
        raise ValueError(f"analytic kernels expect (N, n0) inputs with equal n0, got {tuple(x1.shape)} and {tuple(x2.shape)}")
    w2, b2, n0 = weight_std**2, bias_std**2, x1.shape[1]
    cross = w2 * (x1 @ x2.T) / n0 + b2  # Σ¹(x, x′), (N1, N2)
    d1 = w2 * (x1 * x1).sum(1) / n0 + b2  # Σ¹(x, x), (N1,)
    d2 = w2 * (x2 * x2).sum(1) / n0 + b2  # (N2,)
    ntk = cross
    for _ in range(depth):
        e_relu, e_step = relu_expectations(d1[:, None], cross, d2[None, :])
        cross = w2 * e_relu + b2
        ntk = ntk * (w2 * e_step) + cross
        d1, d2 = w2 * d1 / 2 + b2, w2 * d2 / 2 + b2  # E[relu(u)²] = Σ(x,x)/2
    return cross, ntk


def analytic_ntk(x1: Tensor, x2: Optional[Tensor], depth: int, weight_std: float = 1.0, bias_std: float = 0.0) -> Tensor:
    """Θ^{D+1}(x1, x2), the infinite-width NTK of a ReLU MLP with ``depth`` hidden layers, (N1, N2).

    ``x2=None`` means x1. It is the width → ∞ limit of ``empirical_ntk(NTKMLP(n₀, 1, width, depth,
    weight_std, bias_std), x1, x2)``.

    Example:
        >>> x = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
        >>> analytic_ntk(x, x, depth=1)   # Σ¹ = diag(½); Θ² = Σ¹·E[relu′relu′] + Σ²
        tensor([[0.5000, 0.0796],
                [0.0796, 0.5000]], dtype=torch.float64)
    """
    return analytic_kernels(x1, x2, depth, weight_std, bias_std)[1]


def analytic_nngp(x1: Tensor, x2: Optional[Tensor], depth: int, weight_std: float = 1.0, bias_std: float = 0.0) -> Tensor:
    """Σ^{D+1}(x1, x2): the covariance of the network's output at initialisation as width → ∞, (N1, N2)."""
    return analytic_kernels(x1, x2, depth, weight_std, bias_std)[0]
