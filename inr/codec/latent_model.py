"""The latent codec's image model: a pyramid of 2-D latent grids, upsampled to full resolution and turned into
pixels by a small synthesis network, the same code for the encoder's training (float32) and the decoder (float64).

    level l = 0 … L − 1: a grid of ⌈H/2^l⌉ × ⌈W/2^l⌉ integers (the finest at full resolution)
    z(p) = [up_0(ŷ_0)(p), …, up_{L−1}(ŷ_{L−1})(p)]          bilinear, half-pixel centres (``upsample_rows``)
    x(p) = MLP_{L → n → n → C}(z(p)) (ReLU; 1×1 layers), then x ← x + K_a ⋆ x, x ← x + K_b ⋆ relu(x) (3×3, zero pad)

Multiply-adds per decoded pixel: L·n + n² + n·C + 18·C² (``Spec.synthesis_macs``) plus the upsampling's 3·L.
The decoder evaluates the synthesis a band of rows at a time (``render``): each band is computed with two rows of
its neighbours on each side, which the two 3×3 layers need, so the bands join exactly as the whole image would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from inr.codec.latent_arm import AutoregressiveModel, arm_shapes
from inr.io.progress import advance

HALO = 2  # rows of context the two 3×3 layers need on each side of a band
BAND_PIXELS = 1 << 16  # pixels per band of the decoder's synthesis: bounds its activations' memory


@dataclass(frozen=True)
class Spec:
    """What a latent file's decoder builds: the image's size and channels, the pyramid's levels, the synthesis
    width n and the entropy model's width."""

    height: int
    width: int
    channels: int
    levels: int
    synthesis: int
    arm: int

    def level_shapes(self) -> list[tuple[int, int]]:
        """⌈H/2^l⌉ × ⌈W/2^l⌉ for l = 0 … L − 1.

        Example:
            >>> Spec(5, 8, 3, 3, 8, 8).level_shapes()
            [(5, 8), (3, 4), (2, 2)]
        """
        return [(math.ceil(self.height / 2**level), math.ceil(self.width / 2**level)) for level in range(self.levels)]

    def latent_count(self) -> int:
        return sum(h * w for h, w in self.level_shapes())

    def synthesis_shapes(self) -> list[tuple[int, ...]]:
        """The synthesis's stored tensors in the file's order: three linear layers (W, β), two 3×3 kernels (K, β)."""
        n, c, levels = self.synthesis, self.channels, self.levels
        return [(n, levels), (n,), (n, n), (n,), (c, n), (c,), (c, c, 3, 3), (c,), (c, c, 3, 3), (c,)]

    def stored_shapes(self) -> list[tuple[int, ...]]:
        """Every weight tensor a file stores: the synthesis's, then the entropy model's."""
        return self.synthesis_shapes() + arm_shapes(self.arm)

    def synthesis_macs(self) -> int:
        """Multiply-adds per pixel of the synthesis (the upsampling's 3 per level apart).

        Example:
            >>> Spec(256, 256, 3, 7, 16, 16).synthesis_macs()
            578
        """
        n, c, levels = self.synthesis, self.channels, self.levels
        return levels * n + n * n + n * c + 18 * c * c


class Synthesis(nn.Module):
    """Latent features (B, L, H, W) -> pixels (B, C, H, W): 1×1 MLP L → n → n → C, then two residual 3×3 layers.

    The 1×1 layers run as matrix products on the pixels (channels last): the same arithmetic as 1×1 convolutions,
    several times faster on a CPU at these widths."""

    def __init__(self, levels: int, hidden: int, channels: int) -> None:
        super().__init__()
        self.pointwise = nn.ModuleList([nn.Linear(levels, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, channels)])
        self.spatial = nn.ModuleList([nn.Conv2d(channels, channels, 3, padding=1), nn.Conv2d(channels, channels, 3, padding=1)])
        with torch.no_grad():
            self.pointwise[-1].bias.fill_(0.5)  # mid-gray where the latents say nothing
            for conv in self.spatial:  # the residual layers start as the identity
                conv.weight.mul_(0.1)
                conv.bias.zero_()

    def forward(self, z: Tensor) -> Tensor:
        b, levels, h, w = z.shape
        x = z.permute(0, 2, 3, 1).reshape(-1, levels)
        for layer in self.pointwise[:-1]:
            x = torch.relu(layer(x))
        x = self.pointwise[-1](x).reshape(b, h, w, -1).permute(0, 3, 1, 2)
        x = x + self.spatial[0](x)
        return x + self.spatial[1](torch.relu(x))

    def stored(self) -> list[Tensor]:
        return [t for layer in [*self.pointwise, *self.spatial] for t in (layer.weight, layer.bias)]


def upsample_rows(grid: Tensor, height: int, width: int, start: int, stop: int) -> Tensor:
    """Rows ``start`` … ``stop`` − 1 of a grid (h, w) bilinearly upsampled to (height, width), half-pixel centres:
    source coordinate (r + ½)·h/H − ½ clamped to [0, h − 1] (``F.interpolate``'s ``align_corners=False``; a test
    checks they agree). Returns (stop − start, width) in the grid's dtype."""
    h, w = grid.shape

    def weights(count: int, size: int, first: int, last: int) -> tuple[Tensor, Tensor, Tensor]:
        dst = torch.arange(first, last, dtype=grid.dtype)
        src = ((dst + 0.5) * (size / count) - 0.5).clamp(min=0.0)
        low = src.floor().long().clamp(max=size - 1)
        return low, (low + 1).clamp(max=size - 1), src - low.to(grid.dtype)

    r0, r1, fr = weights(height, h, start, stop)
    c0, c1, fc = weights(width, w, 0, width)
    rows = grid[r0] * (1 - fr)[:, None] + grid[r1] * fr[:, None]  # (n, w)
    return rows[:, c0] * (1 - fc) + rows[:, c1] * fc


def features(latents: list[Tensor], height: int, width: int, start: int = 0, stop: int = -1) -> Tensor:
    """The synthesis's input for rows ``start`` … ``stop`` − 1: every level upsampled, (1, L, rows, W)."""
    stop = height if stop < 0 else stop
    return torch.stack([upsample_rows(y, height, width, start, stop) for y in latents])[None]


class LatentImage(nn.Module):
    """The encoder's model: the latent grids (float parameters), the synthesis and the entropy model."""

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.spec = spec
        self.latents = nn.ParameterList([nn.Parameter(torch.zeros(h, w)) for h, w in spec.level_shapes()])
        self.synthesis = Synthesis(spec.levels, spec.synthesis, spec.channels)
        self.arm = AutoregressiveModel(spec.arm)

    def image(self, latents: list[Tensor]) -> Tensor:
        """Pixels (H, W, C) from (quantised) latents, unclamped."""
        s = self.spec
        # training's upsampling: F.interpolate, the decoder's ``upsample_rows`` in one (a test checks they agree)
        z = torch.cat(
            [F.interpolate(y[None, None], size=(s.height, s.width), mode="bilinear", align_corners=False) for y in latents], 1
        )
        return self.synthesis(z)[0].permute(1, 2, 0)


@torch.no_grad()
def render(synthesis: Synthesis, latents: list[np.ndarray], spec: Spec) -> np.ndarray:
    """The decoder's 8-bit image (H, W, C): float64 synthesis in bands of rows, p = round(255·clamp(x, 0, 1))."""
    net = synthesis.double()
    grids = [torch.from_numpy(q.astype(np.float64)) for q in latents]
    band = max(1, BAND_PIXELS // spec.width)
    out = np.empty((spec.height, spec.width, spec.channels), dtype=np.uint8)
    for start in range(0, spec.height, band):
        stop = min(start + band, spec.height)
        first, last = max(0, start - HALO), min(spec.height, stop + HALO)
        x = net(features(grids, spec.height, spec.width, first, last))[0]  # (C, rows, W)
        kept = x[:, start - first : start - first + (stop - start)].permute(1, 2, 0)
        out[start:stop] = torch.round(kept.clamp(0.0, 1.0) * 255.0).to(torch.uint8).numpy()
        advance(stop * spec.width, spec.height * spec.width)
    return out
