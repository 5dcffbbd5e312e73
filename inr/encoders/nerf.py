"""NeRF's positional encoding γ(p) = (sin 2^k π p, cos 2^k π p), k = 0..L−1 (Mildenhall et al. 2020, eq. 4)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from inr.encoders.base import Encoder
from inr.errors import InputError


class NeRFEncoding(Encoder):
    """γ(p) = [p, sin 2⁰πp, cos 2⁰πp, …, sin 2^{L−1}πp, cos 2^{L−1}πp], out_dim = d (2L + [include_input]).

    Each function is applied to every coordinate, and the blocks of d follow NeRF's released code: the
    input (if ``include_input``), then for each k the sines of all d coordinates, then their cosines.

    NeRF normalises positions to p ∈ [−1, 1] (Mildenhall et al. 2020, sec. 5.1); with ``centered=True``
    (default) the [0,1) coordinates v are mapped to p = 2v − 1 first, so the k-th octave has 2^k cycles
    per unit of v, the scale the grid's DFT bins and ``PositionalEncoding`` use. ``centered=False`` applies
    γ to v itself (2^{k−1} cycles per unit). The passthrough is the p the sines see.

    Example:
        >>> enc = NeRFEncoding(in_dim=1, num_frequencies=2, include_input=False, centered=False)
        >>> enc.out_dim, enc(torch.tensor([[0.5]])).round(decimals=6) + 0.0  # + 0.0 turns −0 into 0
        (4, tensor([[ 1.,  0.,  0., -1.]]))
    """

    def __init__(self, in_dim: int = 3, num_frequencies: int = 10, include_input: bool = True, centered: bool = True) -> None:
        super().__init__()
        # L = 10 for positions (4 for view directions): Mildenhall et al. 2020, sec. 5.1
        if in_dim < 1 or num_frequencies < 1:
            raise InputError(f"NeRFEncoding needs in_dim ≥ 1 and num_frequencies ≥ 1, got {in_dim}, {num_frequencies}")
        self.in_dim, self.num_frequencies = in_dim, num_frequencies
        self.include_input, self.centered = include_input, centered
        self.out_dim = in_dim * (2 * num_frequencies + int(include_input))
        self.register_buffer("freqs", math.pi * 2.0 ** torch.arange(num_frequencies, dtype=torch.float32), persistent=False)

    def forward(self, v: Tensor) -> Tensor:
        p = 2 * v - 1 if self.centered else v
        proj = p[..., None, :] * self.freqs.to(p.dtype)[:, None]  # (..., d) -> (..., L, d)
        blocks = torch.stack([torch.sin(proj), torch.cos(proj)], dim=-2)  # (..., L, 2, d): sines, then cosines
        out = blocks.flatten(-3)  # (..., L, 2, d) -> (..., 2Ld)
        return torch.cat([p, out], dim=-1) if self.include_input else out

    def extra_repr(self) -> str:
        return f"in_dim={self.in_dim}, out_dim={self.out_dim}, num_frequencies={self.num_frequencies}, include_input={self.include_input}, centered={self.centered}"
