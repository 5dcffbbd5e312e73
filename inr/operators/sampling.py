"""Operators that sample the field on its own grid: ``PixelMask`` (inpainting), ``Downsample`` (super-
resolution), and ``AdditiveNoise`` for simulated measurements."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from inr.operators.base import Operator


class PixelMask(Operator):
    """y = x[:, M]: the field at the grid points where the boolean mask M is true, (C, |M|).

    Aᵀy scatters y back onto the grid (zeros elsewhere). With M true everywhere it is direct fitting.

    Example:
        >>> A = PixelMask(torch.tensor([[True, False], [False, True]]))
        >>> A(torch.arange(4.0).reshape(1, 2, 2)).tolist()
        [[0.0, 3.0]]
        >>> A.adjoint(torch.tensor([[5.0, 7.0]])).tolist()
        [[[5.0, 0.0], [0.0, 7.0]]]
    """

    def __init__(self, mask: Tensor) -> None:
        mask = torch.as_tensor(mask, dtype=torch.bool)
        super().__init__(mask.shape)
        self.register_buffer("mask", mask, persistent=False)
        self.register_buffer("index", mask.flatten().nonzero().squeeze(1), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(1)[:, self.index]  # (C, *shape) -> (C, N) -> (C, |M|)

    def adjoint(self, y: Tensor) -> Tensor:
        out = y.new_zeros(y.shape[0], math.prod(self.field_shape))
        out[:, self.index] = y
        return out.reshape(y.shape[0], *self.field_shape)

    def display(self, y: Tensor) -> Tensor:
        """The observed pixels on the grid (unobserved ones black), clipped to [0, 1]."""
        image = self.adjoint(y.float())
        if image.ndim != 3:
            image = image.flatten(2)
        return (image if image.shape[0] in (1, 3) else image[:1]).clamp(0, 1)


class Downsample(Operator):
    """y = box_s(x): the mean of each s×s (×s) block of the grid, (C, H/s, W/s[, D/s]) — area averaging,
    the measurement of a sensor whose pixels are s times larger.

    Aᵀy = nearest-neighbour upsampling of y divided by s^d (each fine sample received 1/s^d of its block).

    Example:
        >>> Downsample((2, 4), factor=2)(torch.arange(8.0).reshape(1, 2, 4)).tolist()
        [[[2.5, 4.5]]]
    """

    def __init__(self, field_shape: Sequence[int], factor: int) -> None:
        super().__init__(field_shape)
        if factor < 1 or any(s % factor for s in self.field_shape):
            raise ValueError(f"Downsample: factor {factor} must be ≥ 1 and divide the grid {self.field_shape}")
        if len(self.field_shape) not in (1, 2, 3):
            raise ValueError(f"Downsample: 1-, 2- or 3-D grids only, got {self.field_shape}")
        self.factor = int(factor)

    def forward(self, x: Tensor) -> Tensor:
        pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[x.ndim - 2]
        return pool(x[None], self.factor)[0]  # (C, *shape) -> (1, C, *shape) -> (C, *shape / s)

    def adjoint(self, y: Tensor) -> Tensor:
        up = y
        for axis in range(1, y.ndim):
            up = up.repeat_interleave(self.factor, dim=axis)
        return up / self.factor ** (y.ndim - 1)


class AdditiveNoise(nn.Module):
    """y + σ ε with ε ~ N(0, 1) (complex y: independent real and imaginary parts, each N(0, σ²/2), so that
    E|σε|² = σ²), drawn from a generator seeded by ``seed`` so a simulated data set is reproducible."""

    def __init__(self, std: float = 0.0, seed: int = 0) -> None:
        super().__init__()
        if std < 0:
            raise ValueError(f"AdditiveNoise: std must be ≥ 0, got {std}")
        self.std, self.seed = float(std), int(seed)

    def forward(self, y: Tensor, generator: Optional[torch.Generator] = None) -> Tensor:
        if self.std == 0:
            return y
        gen = generator or torch.Generator().manual_seed(self.seed)
        if y.is_complex():
            real = torch.randn(y.shape, generator=gen) * (self.std / math.sqrt(2))
            imag = torch.randn(y.shape, generator=gen) * (self.std / math.sqrt(2))
            return y + torch.complex(real, imag).to(y.device, y.dtype)
        return y + (torch.randn(y.shape, generator=gen) * self.std).to(y.device, y.dtype)
