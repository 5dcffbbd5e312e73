"""Per-frequency errors of reconstructed patches, and the classical reconstructions from a code of the same
size that a trained auto-encoder is compared with (PCA, area-downsampling + interpolation, the patch mean).

Frequencies are in cycles per patch: the DFT bins of a p×p patch, |k| up to the Nyquist radius p/2
(``inr.spectral``'s convention with the patch as the unit square).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from inr.conv_decoders.upsampling import copy_locations
from inr.spectral import BandPartition, band_energies, relative_error_from_energies


def patch_band_errors(pred: Tensor, target: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """The DC error Δ_dc = (Σ_n |mean(x̂_n − x_n)|² / Σ_n |mean(x_n)|²)^½ and the band errors
    Δ_b = (Σ_n ‖F[x̂_n − x_n]‖_b² / Σ_n ‖F[x_n]‖_b²)^½ over patches (N, C, p, p), DC in no band -> (Δ_dc, (B,)).

    Bands are [e_b, e_{b+1}) of radial frequency in cycles per patch (``inr.spectral.BandPartition``); the
    first band holds every non-DC bin below e_1 whatever e_0 (e_0 = 1 names it honestly: the lowest non-DC
    bins have |k| = 1). Energies are pooled over patches and channels before the ratio, so a band's error is
    that of the whole held-out set, not a mean of per-patch ratios.

    Example:
        >>> x = torch.rand(4, 1, 8, 8, generator=torch.Generator().manual_seed(0))
        >>> dc, bands = patch_band_errors(x.mean((-2, -1), keepdim=True).expand_as(x), x, torch.tensor([1.0, 2, 4]))
        >>> round(float(dc), 6), [round(float(e), 6) for e in bands]  # the patch mean: exact at DC, nothing else
        (0.0, [1.0, 1.0])
    """
    if pred.shape != target.shape:
        raise ValueError(f"pred and target shapes differ: {tuple(pred.shape)} vs {tuple(target.shape)}")
    p = target.shape[-2:]
    pred, target = pred.reshape(-1, *p).double(), target.reshape(-1, *p).double()  # (N, C, p, p) -> (N·C, p, p)
    pred_mean, target_mean = pred.mean((-2, -1), keepdim=True), target.mean((-2, -1), keepdim=True)
    dc = ((pred_mean - target_mean).square().sum() / target_mean.square().sum()).sqrt()
    bands = BandPartition(p, edges=torch.as_tensor(edges, dtype=torch.float64), device=target.device)
    # without their means the signals have no DC energy, so no band holds any, whichever band DC is assigned to
    residual, energy = band_energies(pred - pred_mean, target - target_mean, bands)
    return dc, relative_error_from_energies(residual, energy)


def copy_bins(patch: int, code_size: int) -> Tensor:
    """The bins (n, 2) where upsampling a code of ``code_size``² to ``patch``² puts copies of the code's DC:
    (a·code_size, b·code_size) for a, b = 0 … patch/code_size − 1, without (0, 0).

    Example:
        >>> copy_bins(8, 4).tolist()
        [[0, 4], [4, 0], [4, 4]]
    """
    if patch % code_size:
        raise ValueError(f"the patch size {patch} is not a multiple of the code size {code_size}")
    bins = copy_locations(torch.zeros(1, 2, dtype=torch.long), (code_size, code_size), patch // code_size)[0]
    return bins[1:]


def bins_relative_error(pred: Tensor, target: Tensor, bins: Tensor) -> float:
    """(Σ_n Σ_{k∈bins} |F[x̂_n − x_n]_k|² / Σ_n Σ_{k∈bins} |F[x_n]_k|²)^½ over patches (N, C, p, p)."""
    residual = torch.fft.fft2((pred - target).double())[..., bins[:, 0], bins[:, 1]]  # (N, C, n)
    signal = torch.fft.fft2(target.double())[..., bins[:, 0], bins[:, 1]]
    return float((residual.abs().square().sum() / signal.abs().square().sum()).sqrt())


def pca_basis(train: Tensor) -> tuple[Tensor, Tensor]:
    """Mean (D,) and principal directions (D, D), columns by decreasing variance, of patches (n, C, p, p)
    flattened to D = C p² (float64 eigendecomposition of the covariance)."""
    x = train.reshape(len(train), -1).double()  # (n, C, p, p) -> (n, D)
    mean = x.mean(0)
    centred = x - mean
    values, vectors = torch.linalg.eigh(centred.T @ centred / (len(x) - 1))
    return mean, vectors.flip(1)  # eigh sorts ascending


def pca_reconstruct(x: Tensor, mean: Tensor, basis: Tensor, components: int) -> Tensor:
    """x̂ = μ + U_k U_kᵀ (x − μ) with the first ``components`` principal directions: the best affine code of
    that size in mean squared error on the patches the basis was fitted to (Eckart–Young)."""
    u = basis[:, :components]
    flat = x.reshape(len(x), -1).double() - mean  # (N, C, p, p) -> (N, D)
    return ((flat @ u) @ u.T + mean).reshape(x.shape).to(x.dtype)


def resample_reconstruct(x: Tensor, factor: int, mode: str) -> Tensor:
    """Area-downsample patches (N, C, p, p) by ``factor``, then ``mode`` (``bilinear`` / ``bicubic``,
    align_corners=False, borders clamped as PyTorch does) back to p×p: a code of p²/factor² numbers per channel."""
    small = F.interpolate(x, scale_factor=1 / factor, mode="area")
    return F.interpolate(small, size=x.shape[-2:], mode=mode, align_corners=False)


def mean_reconstruct(x: Tensor) -> Tensor:
    """Every pixel replaced by its patch's mean: exact at DC, nothing else (relative error 1 in every other band)."""
    return x.mean((-2, -1), keepdim=True).expand_as(x)


def band_groups(edges: Sequence[float]) -> list[str]:
    """Column names ``e_b–e_{b+1}`` of the bands [e_b, e_{b+1}).

    Example:
        >>> band_groups([1, 2, 4])
        ['1–2', '2–4']
    """
    return [f"{lo:g}–{hi:g}" for lo, hi in zip(edges[:-1], edges[1:])]
