"""Fourier-feature encodings of Tancik et al. 2020: basic, positional (log-linear) and Gaussian."""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from inr.encoders.base import Encoder
from inr.errors import InputError


def fourier_features(v: Tensor, b: Tensor) -> Tensor:
    """γ(v) = [cos 2πBv, sin 2πBv] for rows v of ``v``; ``b`` is B with shape (m, d).

    Example:
        >>> fourier_features(torch.tensor([[0.25]]), torch.tensor([[1.0]])).round(decimals=6)
        tensor([[-0., 1.]])
    """
    proj = 2 * math.pi * v @ b.T  # (N, d) @ (d, m) -> (N, m)
    return torch.cat([torch.cos(proj), torch.sin(proj)], dim=-1)  # (N, 2m)


class FourierEncoding(Encoder):
    """γ(v) = [cos 2πBv, sin 2πBv] with a fixed frequency matrix B (m, d) held as a buffer, out_dim = 2m.

    The basic, positional and Gaussian mappings differ only in how B is chosen; B is a buffer so that a
    checkpoint restores exactly the features a model was trained with.
    """

    def __init__(self, b: Tensor) -> None:
        super().__init__()
        self.register_buffer("b", b.detach().to(torch.float32).clone())
        self.in_dim = b.shape[1]
        self.out_dim = 2 * b.shape[0]

    def forward(self, v: Tensor) -> Tensor:
        return fourier_features(v, self.b)


class BasicEncoding(FourierEncoding):
    """γ(v) = [cos 2πv, sin 2πv] (B = I), out_dim = 2d.

    Example:
        >>> BasicEncoding(in_dim=1)(torch.tensor([[0.5]])).round(decimals=6)
        tensor([[-1., -0.]])
    """

    def __init__(self, in_dim: int = 2) -> None:
        super().__init__(torch.eye(in_dim))


class PositionalEncoding(FourierEncoding):
    """Axis-aligned log-linear frequencies f_j = σ^{j/m}, j = 0..m−1, on every input axis, out_dim = 2md.

    γ(v) = [cos 2π f_j v_k, sin 2π f_j v_k] for all j and axes k (Tancik et al. 2020, eq. "positional
    encoding"). With ``endpoint=True`` the exponents are j/(m−1), so the top frequency is σ itself, and
    ``minus_one=True`` subtracts 1 from every frequency: the paper's released code uses
    f = 2^linspace(0, s, m) − 1, i.e. ``sigma=2**s, endpoint=True, minus_one=True``. ``rotation`` (a d × d
    orthogonal matrix R) turns every frequency vector, b ← R b, so the frequencies lie along the axes of a
    rotated frame (3d_simple_nerf.ipynb's ``posenc_new_rotated``: ``bvals @ rot.T``).

    Example:
        >>> PositionalEncoding(in_dim=1, num_frequencies=3, sigma=8.0).b.flatten()
        tensor([1., 2., 4.])
    """

    def __init__(
        self,
        in_dim: int = 2,
        num_frequencies: int = 128,
        sigma: float = 64.0,
        endpoint: bool = False,
        minus_one: bool = False,
        rotation: Optional[list[list[float]]] = None,
    ) -> None:
        if num_frequencies < 1 or sigma <= 0:
            raise ValueError(f"PositionalEncoding needs num_frequencies ≥ 1 and sigma > 0, got {num_frequencies}, {sigma}")
        denom = max(num_frequencies - 1, 1) if endpoint else num_frequencies
        exponents = torch.arange(num_frequencies, dtype=torch.float64) / denom
        freqs = sigma**exponents - (1.0 if minus_one else 0.0)  # (m,)
        eye = torch.eye(in_dim, dtype=torch.float64)
        # rows ordered axis-major: all frequencies of axis 0, then axis 1, ...
        b = (eye[:, None, :] * freqs[None, :, None]).reshape(in_dim * num_frequencies, in_dim)  # (d·m, d)
        if rotation is not None:
            r = torch.as_tensor(rotation, dtype=torch.float64)
            if r.shape != (in_dim, in_dim) or not torch.allclose(r @ r.T, torch.eye(in_dim, dtype=torch.float64), atol=1e-6):
                raise ValueError(f"PositionalEncoding rotation must be an orthogonal {in_dim}×{in_dim} matrix, got {r.tolist()}")
            b = b @ r.T  # every row b -> R b
        super().__init__(b)


class GaussianEncoding(FourierEncoding):
    """Random Fourier features with B_ij ~ N(0, σ²), B ∈ R^{m×d} drawn from ``seed``, out_dim = 2m.

    The draw uses its own generator, so B depends only on (m, d, σ, seed), not on the global RNG state.

    Example:
        >>> enc = GaussianEncoding(in_dim=2, num_features=4, sigma=10.0, seed=0)
        >>> enc.out_dim, tuple(enc.b.shape)
        (8, (4, 2))
    """

    def __init__(self, in_dim: int = 2, num_features: int = 256, sigma: float = 10.0, seed: int = 0) -> None:
        if num_features < 1:
            raise InputError(f"GaussianEncoding.num_features must be ≥ 1, got {num_features}")
        if not sigma > 0 or not math.isfinite(sigma):  # σ = 0 makes B = 0: every feature a constant
            raise InputError(
                f"GaussianEncoding.sigma must be a finite number > 0, got {sigma} (σ = 0 makes every feature constant)"
            )
        gen = torch.Generator().manual_seed(seed)
        b = torch.randn(num_features, in_dim, generator=gen, dtype=torch.float64) * sigma
        super().__init__(b)
