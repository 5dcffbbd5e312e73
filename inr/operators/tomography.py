"""``ParallelBeamProjection``: the parallel-beam X-ray transform (Radon transform) of a 2D field — the CT
sinogram — as differentiable line integrals sampled with bilinear interpolation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from inr.operators.base import Operator


def even_angles(count: int) -> Tensor:
    """θ_k = k π / K, k = 0 … K−1: K projection angles evenly spaced in [0, π) (the paper's 20 for CT).

    Example:
        >>> [round(a, 4) for a in even_angles(4).tolist()]
        [0.0, 0.7854, 1.5708, 2.3562]
    """
    return torch.arange(count, dtype=torch.float64) * (math.pi / count)


class ParallelBeamProjection(Operator):
    """p(θ, s) = ∫ f(c + s u_θ + t n_θ) dt: line integrals of the field across its grid, (C, K, D).

    Geometry, in the grid's coordinates v = (row, col) = (i/H, j/W) on [0, 1)²: the rotation centre is
    c = (½, ½); the detector direction is u_θ = (−sin θ, cos θ) and the ray direction n_θ = (cos θ, sin θ)
    (row, col) — the convention of ``skimage.transform.radon`` with θ in radians, so its ``iradon`` filters
    and back-projects these sinograms. Detector bin d sits at s_d = (d − D//2)/W; D defaults to ⌈√2 W⌉
    (rays cover the whole square at every angle). The integral is the Riemann sum over samples
    t_k = (k − S//2)/W spaced one pixel apart along the ray, with the field read by bilinear interpolation
    (zero outside the grid), so a constant field 1 integrates to the length of the chord inside [0, 1)².

    A is linear in f and ``forward`` is differentiable (``grid_sample``); Aᵀ (back-projection) is the exact
    transpose by autograd (the base class), i.e. the bilinear weights scattered back.

    Args:
        angles: θ in radians, a list or tensor (K,); or an int K for ``even_angles(K)``.
        field_shape: (H, W) of the field's grid; square grids are the common case (W sets the spacing).
        detectors: D, the number of detector bins.
    """

    def __init__(
        self, angles: Union[int, Sequence[float], Tensor], field_shape: Sequence[int], detectors: Optional[int] = None
    ) -> None:
        super().__init__(field_shape)
        if len(self.field_shape) != 2:
            raise ValueError(f"ParallelBeamProjection: a 2D grid is needed, got {self.field_shape}")
        angles = even_angles(angles) if isinstance(angles, int) else torch.as_tensor(angles, dtype=torch.float64).flatten()
        if len(angles) < 1 or not torch.isfinite(angles).all():
            raise ValueError("ParallelBeamProjection: angles must be one or more finite values (radians)")
        height, width = self.field_shape
        self.detectors = int(detectors or math.ceil(math.sqrt(2) * max(height, width)))
        self.register_buffer("angles", angles, persistent=False)
        self.register_buffer("grid", self._sampling_grid(angles, height, width, self.detectors), persistent=False)
        self.step = 1.0 / width  # Δt: one pixel

    @staticmethod
    def estimate_bytes(angles: int, field_shape: Sequence[int], detectors: Optional[int] = None, channels: int = 1) -> int:
        """Memory of the operator and one training pass, in bytes: the float64 sampling grid built once
        (row, col, x, y of every ray sample: 4 × 8 bytes, plus its float32 copy) and the forward pass's
        samples with their gradients (2 × 4 bytes per channel), for K angles × D bins × S samples per ray."""
        height, width = field_shape
        detectors = int(detectors or math.ceil(math.sqrt(2) * max(height, width)))
        samples = 2 * math.ceil(math.sqrt(height**2 + width**2) / 2) + 1
        return angles * detectors * samples * (4 * 8 + 2 * 4 + 2 * 4 * channels)

    @staticmethod
    def _sampling_grid(angles: Tensor, height: int, width: int, detectors: int) -> Tensor:
        """grid_sample's normalised (x, y) of every ray sample, (K, D, S, 2), computed in float64."""
        half = math.ceil(math.sqrt(height**2 + width**2) / 2)
        t = (torch.arange(2 * half + 1, dtype=torch.float64) - half) / width  # (S,)
        s = (torch.arange(detectors, dtype=torch.float64) - detectors // 2) / width  # (D,)
        cos, sin = angles.cos()[:, None, None], angles.sin()[:, None, None]  # (K, 1, 1)
        row = 0.5 - sin * s[None, :, None] + cos * t[None, None, :]  # (K, D, S)
        col = 0.5 + cos * s[None, :, None] + sin * t[None, None, :]
        # v = i / N -> pixel index v·N -> align_corners=True normalisation 2·index/(N − 1) − 1
        x = 2 * col * width / max(width - 1, 1) - 1
        y = 2 * row * height / max(height - 1, 1) - 1
        return torch.stack([x, y], dim=-1).to(torch.float32)

    def forward(self, x: Tensor) -> Tensor:
        k, d, s, _ = self.grid.shape
        images = x[:, None].expand(-1, k, -1, -1).transpose(0, 1)  # (C, H, W) -> (K, C, H, W)
        grid = self.grid.to(x.dtype)
        samples = F.grid_sample(images, grid, mode="bilinear", padding_mode="zeros", align_corners=True)  # (K, C, D, S)
        return samples.sum(-1).transpose(0, 1) * self.step  # (K, C, D) -> (C, K, D)

    def display(self, y: Tensor) -> Tensor:
        """The sinogram as an image (angles × detector bins), scaled by its maximum."""
        image = y.float()[:1]
        return (image / image.abs().max().clamp_min(1e-12)).clamp(0, 1)
