"""``KSpaceSampling``: the MRI measurement — the discrete Fourier transform of the field on its grid, read at
the k-space positions of a mask — and the paper's Gaussian sampling mask."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from inr.operators.base import Operator

# Tancik et al. 2020, 3d_MRI.ipynb: 200,000 samples drawn at 96³ from N(centre, 2·96·I) (σ = √192 voxels);
# duplicates collapse, leaving 12.6% of k-space. At other sizes we keep σ/N and samples/N³.
PAPER_MRI_SIZE = 96
PAPER_MRI_SAMPLES = 200_000
PAPER_MRI_SIGMA_FRACTION = math.sqrt(2 * PAPER_MRI_SIZE) / PAPER_MRI_SIZE


def centred_dft(x: Tensor) -> Tensor:
    """X = fftshift(DFT_ortho(x)) over every axis but the first: k-space with zero frequency at index N//2
    of each axis (numpy.fft.fftshift convention) and ‖X‖ = ‖x‖."""
    dims = tuple(range(1, x.ndim))
    return torch.fft.fftshift(torch.fft.fftn(x, dim=dims, norm="ortho"), dim=dims)


def centred_idft(k: Tensor) -> Tensor:
    """x = DFT_ortho⁻¹(ifftshift(k)), the inverse of ``centred_dft`` (complex)."""
    dims = tuple(range(1, k.ndim))
    return torch.fft.ifftn(torch.fft.ifftshift(k, dim=dims), dim=dims, norm="ortho")


def gaussian_kspace_mask(
    shape: Sequence[int], samples: int | None = None, sigma_fraction: float = PAPER_MRI_SIGMA_FRACTION, seed: int = 0
) -> Tensor:
    """A centred k-space mask: ``samples`` positions drawn from N(N//2, (σN)² I) per axis, rounded toward
    zero like the paper's ``astype(int32)``, clipped to the grid; duplicates count once.

    ``samples`` defaults to the paper's density, 200,000 · ∏N / 96³ (12.6% of k-space after duplicates at 96³).

    Example:
        >>> m = gaussian_kspace_mask((32, 32, 32), seed=0)
        >>> bool(m[16, 16, 16]), bool(m[0, 0, 0])
        (True, False)
    """
    shape = tuple(int(s) for s in shape)
    if samples is None:
        samples = round(PAPER_MRI_SAMPLES * math.prod(shape) / PAPER_MRI_SIZE**3)
    gen = torch.Generator().manual_seed(seed)
    sizes = torch.tensor(shape, dtype=torch.float64)
    draws = sizes // 2 + torch.randn(samples, len(shape), generator=gen, dtype=torch.float64) * sigma_fraction * sizes
    ij = torch.minimum(draws.trunc().clamp_min(0), sizes - 1).long()  # (S, d)
    mask = torch.zeros(shape, dtype=torch.bool)
    mask[tuple(ij.T)] = True
    return mask


class KSpaceSampling(Operator):
    """y = (F x)[M]: the orthonormal DFT of the field over its grid, centred (``centred_dft``), at the
    k-space positions where the boolean mask M is true; (C, |M|) complex.

    Aᴴy = F⁻¹(y scattered onto the grid) and, for the real field, Aᵀy = Re Aᴴy. F is unitary, so the
    zero-filled inverse Fourier transform (``zero_filled``) is exactly Aᴴy.
    """

    def __init__(self, mask: Tensor) -> None:
        mask = torch.as_tensor(mask, dtype=torch.bool)
        super().__init__(mask.shape)
        self.register_buffer("mask", mask, persistent=False)
        self.register_buffer("index", mask.flatten().nonzero().squeeze(1), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        return centred_dft(x).flatten(1)[:, self.index]  # (C, *shape) -> (C, |M|) complex

    def scatter(self, y: Tensor) -> Tensor:
        """y on the full centred k-space grid, zeros where nothing was measured: (C, *shape) complex."""
        full = torch.zeros(y.shape[0], math.prod(self.field_shape), dtype=y.dtype, device=y.device)
        full[:, self.index] = y
        return full.reshape(y.shape[0], *self.field_shape)

    def zero_filled(self, y: Tensor) -> Tensor:
        """Aᴴy = F⁻¹(scatter(y)), complex (C, *shape): the zero-filled inverse FFT reconstruction."""
        return centred_idft(self.scatter(y))

    def adjoint(self, y: Tensor) -> Tensor:
        return self.zero_filled(y).real

    def display(self, y: Tensor) -> Tensor:
        """log(1 + |y|) on the centred k-space grid (the central slice of a 3D grid), scaled to [0, 1]."""
        image = torch.log1p(self.scatter(y).abs()).float()[:1]
        while image.ndim > 3:
            image = image[:, image.shape[1] // 2]
        return image / image.max().clamp_min(1e-12)
