"""Uniform quantisation of a network's weights: w ≈ q·Δ with integers |q| ≤ L = 2^(b−1) − 1, one step Δ per tensor or
per output channel, and the straight-through rounding that quantisation-aware fine-tuning trains through.

The step is stored in one byte as a point of a logarithmic grid, Δ = 2^((e − STEP_OFFSET) / STEP_PER_OCTAVE),
e ∈ 0…255 (``step_code``): e is the smallest code with Δ ≥ max|w| / L, so no weight needs clipping and the range
costs at most 2^(1/8) − 1 ≈ 9 % more steps than the exact max|w| / L (under 0.13 bits a weight). Dequantising
multiplies an int32 by a float32 step: one IEEE product, the same on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor, nn

# Δ = 2^((e − 192) / 8): 2^−24 ≈ 6e-8 … 2^7.875 ≈ 235, eight codes per octave
STEP_PER_OCTAVE, STEP_OFFSET = 8, 192
MIN_BITS, MAX_BITS = 2, 16  # L = 1 (ternary) … 32767 (int16)


def levels(bits: int) -> int:
    """L = 2^(b−1) − 1, the largest |q| at ``bits`` bits (symmetric, so zero is a level).

    Example:
        >>> levels(8), levels(2)
        (127, 1)
    """
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ValueError(f"bit depth {bits} outside {MIN_BITS}…{MAX_BITS}")
    return 2 ** (bits - 1) - 1


def step_value(code: Tensor) -> Tensor:
    """Δ(e) = 2^((e − 192) / 8) in float32 from byte codes e (any shape).

    Example:
        >>> step_value(torch.tensor([192, 200, 184])).tolist()
        [1.0, 2.0, 0.5]
    """
    return torch.exp2((code.to(torch.float64) - STEP_OFFSET) / STEP_PER_OCTAVE).to(torch.float32)


def step_code(max_abs: Tensor, bits: int) -> Tensor:
    """The smallest byte code e with Δ(e) ≥ max|w| / L (uint8, same shape); an all-zero row gets the smallest step.

    Example:
        >>> step_code(torch.tensor([127.0, 0.0]), 8).tolist()
        [192, 0]
    """
    exact = max_abs.to(torch.float64) / levels(bits)
    code = torch.ceil(torch.log2(exact.clamp_min(1e-30)) * STEP_PER_OCTAVE + STEP_OFFSET - 1e-9).clamp(0, 255)
    code = code.to(torch.int64)
    # the grid's float32 value may still fall a hair short of the exact ratio: then one code up
    code = torch.where(step_value(code).to(torch.float64) < exact, code + 1, code)
    if int(code.max()) > 255:
        raise ValueError(f"a weight of magnitude {float(max_abs.max()):.3g} exceeds the largest step at {bits} bits")
    return code.to(torch.uint8)


def channel_rows(shape: tuple[int, ...], per_channel: bool) -> int:
    """How many steps a tensor of ``shape`` gets: its output channels (rows) when ``per_channel`` and it is a
    matrix, else one."""
    return shape[0] if per_channel and len(shape) == 2 else 1


@dataclass
class Quantised:
    """One tensor's integers ``q`` (int32, the tensor's shape) and its step codes (uint8, (rows,))."""

    q: Tensor
    codes: Tensor

    def dequantise(self) -> Tensor:
        """w = q·Δ in float32, the tensor's shape."""
        rows = self.codes.numel()
        return (self.q.reshape(rows, -1).to(torch.float32) * step_value(self.codes)[:, None]).reshape(self.q.shape)


def quantise(w: Tensor, bits: int, rows: int = 1) -> Quantised:
    """q = round(w / Δ) per row (``rows`` = 1: one step for the tensor), |q| ≤ L.

    Example:
        >>> t = quantise(torch.tensor([[0.5, -0.875], [0.2, 0.4375]]), bits=4, rows=2)  # steps 1/8 and 1/16
        >>> t.q.tolist(), t.dequantise().tolist()
        ([[4, -7], [3, 7]], [[0.5, -0.875], [0.1875, 0.4375]])
    """
    flat = w.detach().to(torch.float32).reshape(rows, -1)  # (rows, n)
    codes = step_code(flat.abs().amax(dim=1), bits)
    q = torch.round(flat / step_value(codes)[:, None]).clamp(-levels(bits), levels(bits)).to(torch.int32)
    return Quantised(q.reshape(w.shape), codes)


def fake_quantise(w: Tensor, bits: int, rows: int = 1) -> Tensor:
    """The dequantised weights in the forward pass, the identity in the backward pass (straight-through
    estimator, Bengio et al. 2013): w + (Q(w) − w) with the difference detached."""
    return w + (quantise(w, bits, rows).dequantise().to(w.dtype) - w).detach()


class FakeQuantised(nn.Module):
    """A parametrisation (``torch.nn.utils.parametrize``) that shows a weight to its module as ``fake_quantise``
    of it, so any network fine-tunes through its own quantisation without a change to its code; with an
    ``offset`` θ₀ (a learned init the file is coded against) as θ₀ + fake_quantise(w − θ₀).

    Example:
        >>> start = torch.tensor([[0.25, -0.25, 0.5]])
        >>> FakeQuantised(4, 1, offset=start)(torch.tensor([[0.25, 0.625, 0.55]])).tolist()  # the change at Δ = 1/8
        [[0.25, 0.625, 0.5]]
    """

    def __init__(self, bits: int, rows: int, offset: Optional[Tensor] = None) -> None:
        super().__init__()
        self.bits, self.rows = bits, rows
        self.register_buffer("offset", None if offset is None else offset.detach().clone())

    def forward(self, w: Tensor) -> Tensor:
        if self.offset is None:
            return fake_quantise(w, self.bits, self.rows)
        offset = self.offset.to(w.dtype)
        return offset + fake_quantise(w - offset, self.bits, self.rows)
