"""The latent codec's entropy model: each latent's mean and scale predicted from its twelve causal neighbours in
its own grid by a small MLP, in float while training and in integers when coding, so that encoder and decoder
derive the same probabilities on every machine.

Context of latent (i, j): the five of rows i − 2 and i − 1 in columns j − 2 … j + 2, and (i, j − 2), (i, j − 1);
outside the grid a neighbour is 0. Every neighbour lies on an earlier wave t' < t of t = 3i + j, so a decoder
decodes a grid one wave (all latents of one t) at a time: 3(h − 1) + w waves instead of h·w steps.

MLP: 12 → n → n → 2 with ReLU, outputs (μ, log2 b). The integer model (``FixedPoint``) holds the weights as
integers w·2^F (F fractional bits, the file's ``arm_bits``) and every activation as a multiple of 2^−F:
a = relu((W·x + (β ≪ F)) ≫ F), floor shifts on int64, so its outputs are the float model's with those weights to
within the shifts' rounding, and exactly the same on every machine (numpy integer arithmetic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from inr.codec.laplace import MEAN_FRACTIONS, SCALE_COUNT, SCALE_ZERO, SCALES_PER_OCTAVE

# (row offset, column offset) of each neighbour, all causal
CONTEXT = tuple((-2, dj) for dj in range(-2, 3)) + tuple((-1, dj) for dj in range(-2, 3)) + ((0, -2), (0, -1))
PAD_TOP, PAD_SIDE = 2, 2
WAVE_SLOPE = 3  # t = 3i + j: the neighbour (i − 1, j + 2) lies on wave t − 1


def contexts(grid: Tensor) -> Tensor:
    """The context of every latent of a grid (h, w) -> (h·w, 12), zero outside (float or integer tensors).

    Example:
        >>> contexts(torch.arange(1.0, 5.0).reshape(2, 2))[3].tolist()  # latent (1, 1): its row above and left
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3.0]
    """
    return batched_contexts(grid[None])[0]


def batched_contexts(grids: Tensor) -> Tensor:
    """``contexts`` of each grid of (K, h, w) -> (K, h·w, 12), zero outside."""
    k, h, w = grids.shape
    padded = F.pad(grids[:, None], (PAD_SIDE, PAD_SIDE, PAD_TOP, 0))[:, 0]
    taken = [padded[:, PAD_TOP + di : PAD_TOP + di + h, PAD_SIDE + dj : PAD_SIDE + dj + w] for di, dj in CONTEXT]
    return torch.stack(taken, dim=-1).reshape(k, h * w, len(CONTEXT))


class AutoregressiveModel(nn.Module):
    """(μ, log2 b) of each latent from its context: 12 → n → n → 2, ReLU."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(len(CONTEXT), hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, 2)])
        with torch.no_grad():  # start from the prior "zero mean, unit scale" everywhere
            self.layers[-1].weight.mul_(0.1)
            self.layers[-1].bias.zero_()

    def forward(self, context: Tensor) -> tuple[Tensor, Tensor]:
        x = context
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        out = self.layers[-1](x)
        return out[..., 0], torch.exp2(out[..., 1])


@dataclass(frozen=True)
class FixedPoint:
    """The integer entropy model: weights and biases as int64 multiples of 2^−bits, per layer (W (out, in), β)."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    bits: int

    @classmethod
    def of(cls, model: AutoregressiveModel, bits: int) -> FixedPoint:
        """The model's weights rounded to multiples of 2^−bits (half to even)."""
        scale = float(2**bits)
        ws = tuple(np.round(layer.weight.detach().double().numpy() * scale).astype(np.int64) for layer in model.layers)
        bs = tuple(np.round(layer.bias.detach().double().numpy() * scale).astype(np.int64) for layer in model.layers)
        return cls(ws, bs, bits)

    def tensors(self) -> list[np.ndarray]:
        """The integers a file stores, in its order: W₁, β₁, W₂, β₂, W₃, β₃."""
        return [t for pair in zip(self.weights, self.biases) for t in pair]

    @classmethod
    def from_tensors(cls, tensors: list[np.ndarray], hidden: int, bits: int) -> FixedPoint:
        shapes = arm_shapes(hidden)
        arrays = [np.asarray(t, dtype=np.int64).reshape(s) for t, s in zip(tensors, shapes)]
        return cls(tuple(arrays[0::2]), tuple(arrays[1::2]), bits)

    def load_into(self, model: AutoregressiveModel) -> None:
        """Copy the integer weights (as floats) into a float model: what training continues from."""
        with torch.no_grad():
            for layer, w, b in zip(model.layers, self.weights, self.biases):
                layer.weight.copy_(torch.from_numpy(w.astype(np.float64) / 2**self.bits))
                layer.bias.copy_(torch.from_numpy(b.astype(np.float64) / 2**self.bits))

    def predict(self, context: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Integer contexts (n, 12) -> (c, f, s): μ ≈ c + f/16 rounded to the nearest sixteenth, and the scale index
        s = clamp(round(8·log2 b) + 32, 0, 80)."""
        x = np.asarray(context, dtype=np.int64) << self.bits
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = (x @ w.T + (b << self.bits)) >> self.bits
            if i < last:
                x = np.maximum(x, 0)
        mean, log_scale = x[:, 0], x[:, 1]
        shift = self.bits - 4  # sixteenths: round half up, as an integer shift
        sixteenths = (mean + (1 << (shift - 1))) >> shift if shift > 0 else mean << -shift
        scale = (log_scale * SCALES_PER_OCTAVE + (1 << (self.bits - 1))) >> self.bits
        s = np.clip(scale + SCALE_ZERO, 0, SCALE_COUNT - 1)
        return sixteenths >> 4, sixteenths & (MEAN_FRACTIONS - 1), s


def arm_shapes(hidden: int) -> list[tuple[int, ...]]:
    """The shapes of the stored tensors of an entropy model of width ``hidden``, in the file's order."""
    n = len(CONTEXT)
    return [(hidden, n), (hidden,), (hidden, hidden), (hidden,), (2, hidden), (2,)]


def waves(height: int, width: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The decoding order of a grid: per wave t = 3i + j, the rows and columns of its latents (i ascending).

    Example:
        >>> [(r.tolist(), c.tolist()) for r, c in waves(2, 4)][:5]
        [([0], [0]), ([0], [1]), ([0], [2]), ([0, 1], [3, 0]), ([1], [1])]
    """
    out = []
    for t in range(WAVE_SLOPE * (height - 1) + width):
        rows = np.arange(max(0, -(-(t - width + 1) // WAVE_SLOPE)), min(height - 1, t // WAVE_SLOPE) + 1)
        out.append((rows, t - WAVE_SLOPE * rows))
    return out


def wave_order(height: int, width: int) -> np.ndarray:
    """The flat indices i·w + j of a grid's latents in decoding order."""
    return np.concatenate([r * width + c for r, c in waves(height, width)])
