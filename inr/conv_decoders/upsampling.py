"""What an upsampling stage does to a spectrum: copies of the input spectrum at predictable frequencies.

Zero insertion by s (z[s n] = x[n], zeros elsewhere) gives, on the (sH, sW) output grid,
Z[u, v] = X[u mod H, v mod W]: the input spectrum tiled s×s, so a component at (u₀, v₀) reappears at
(u₀ + aH, v₀ + bW) for a, b = 0 … s−1. Every interpolating upsampler is zero insertion followed by a
filter h on the output grid, Y = H(u, v) Z with H(u, v) = Σ_m h[m] e^{−2πi (u m_0 / sH + v m_1 / sW)}:
nearest is the box h = 1 on m ∈ {0 … s−1}² (its zeros fall on the copies of DC), and bilinear
(align_corners=False) the separable triangle h[m] = max(0, 1 − |m − (s−1)/2| / s), exact for a periodic
signal (PyTorch clamps at the border instead, which only the border samples feel).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor


def _taps(mode: str, factor: int) -> tuple[Tensor, int]:
    """1D interpolation taps on the output grid and the offset of the first tap."""
    s = factor
    if mode == "zero":
        return torch.ones(1, dtype=torch.float64), 0
    if mode == "nearest":
        return torch.ones(s, dtype=torch.float64), 0
    if mode == "bilinear":
        m = torch.arange(-s, 2 * s, dtype=torch.float64)
        h = (1 - (m - (s - 1) / 2).abs() / s).clamp(min=0)
        keep = h > 0
        return h[keep], int(m[keep][0])
    raise ValueError(f"unknown upsampling mode {mode!r}; choose zero, nearest or bilinear")


def filter_response_1d(n_out: int, factor: int, mode: str) -> Tensor:
    """H(u) = Σ_m h[m] e^{−2πi u m / n_out} of the 1D interpolation filter, complex128 (n_out,).

    Example:
        >>> filter_response_1d(4, 2, "nearest").abs().round(decimals=6).tolist()  # |1 + e^{−iπu/2}|
        [2.0, 1.414214, 0.0, 1.414214]
    """
    taps, first = _taps(mode, factor)
    u = torch.arange(n_out, dtype=torch.float64)[:, None]
    m = torch.arange(first, first + len(taps), dtype=torch.float64)[None, :]
    angle = -2 * math.pi * torch.remainder(u * m, n_out) / n_out
    return (torch.polar(torch.ones_like(angle), angle) * taps.to(torch.complex128)).sum(1)


def filter_response(size_out: Sequence[int], factor: int, mode: str) -> Tensor:
    """The separable response H(u) H(v) on the output grid, complex128 (sH, sW)."""
    return filter_response_1d(size_out[0], factor, mode)[:, None] * filter_response_1d(size_out[1], factor, mode)[None, :]


def upsample_spectrum(spectrum: Tensor, factor: int, mode: str = "zero") -> Tensor:
    """Predicted fft2 of the upsampled map from fft2 of the input: (..., H, W) -> (..., sH, sW).

    Y[u, v] = H(u, v) X[u mod H, v mod W] (see the module docstring).
    """
    tiled = spectrum.repeat(*([1] * (spectrum.ndim - 2)), factor, factor)  # (..., H, W) -> (..., sH, sW)
    if mode == "zero":
        return tiled
    response = filter_response(tiled.shape[-2:], factor, mode).to(device=spectrum.device)
    dtype = torch.promote_types(spectrum.dtype, torch.complex64)
    return tiled.to(dtype) * response.to(torch.complex128 if dtype == torch.complex128 else torch.complex64)


def copy_locations(frequencies: Tensor, size: Sequence[int], factor: int) -> Tensor:
    """Where components at integer frequency indices (K, 2) of an (H, W) map land after upsampling by s:
    (K, s², 2) indices (u + aH, v + bW), a, b = 0 … s−1, on the (sH, sW) output grid.

    Example:
        >>> copy_locations(torch.tensor([[1, 2]]), (4, 8), 2).tolist()
        [[[1, 2], [1, 10], [5, 2], [5, 10]]]
    """
    h, w = int(size[0]), int(size[1])
    a = torch.arange(factor, device=frequencies.device)
    offsets = torch.stack(torch.meshgrid(a * h, a * w, indexing="ij"), dim=-1).reshape(-1, 2)  # (s², 2)
    return frequencies[:, None, :] + offsets[None, :, :]


def strongest_frequencies(spectrum: Tensor, count: int) -> Tensor:
    """Integer indices (count, 2) of the ``count`` largest Σ|X|² over the leading dims of (..., H, W)."""
    power = (spectrum.abs() ** 2).reshape(-1, *spectrum.shape[-2:]).sum(0)  # (..., H, W) -> (H, W)
    top = torch.topk(power.flatten(), count).indices
    return torch.stack([top // power.shape[1], top % power.shape[1]], dim=1)


def copy_hit_rate(spectrum: Tensor, predicted: Tensor) -> float:
    """Fraction of the ``len(predicted)`` strongest frequencies of a measured (…, H, W) spectrum that are
    predicted locations (P, 2): 1.0 when the strongest output components sit exactly on predicted copies."""
    predicted = predicted.reshape(-1, 2)
    measured = strongest_frequencies(spectrum, len(predicted))
    w = spectrum.shape[-1]
    return float(torch.isin(measured[:, 0] * w + measured[:, 1], predicted[:, 0] * w + predicted[:, 1]).float().mean())


def signed_index(n: int, device=None) -> Tensor:
    """Signed frequency index of each DFT bin of an axis of length n: 0, 1, …, ⌈n/2⌉−1, −⌊n/2⌋, …, −1."""
    k = torch.arange(n, device=device)
    return torch.where(k < (n + 1) // 2, k, k - n)


def copy_energy_fraction(spectrum: Tensor, predicted: Tensor, size_in: Sequence[int]) -> tuple[float, float]:
    """Of the output energy at frequencies an (H, W) input cannot hold (signed index outside
    [−⌊H/2⌋, ⌈H/2⌉) or the same for W), the fraction at the predicted copy bins (P, 2), and the fraction
    of those out-of-band bins the copies occupy: (energy share, bin share). An energy share far above the
    bin share means strong components repeat where predicted."""
    h, w = spectrum.shape[-2:]
    su, sv = signed_index(h, spectrum.device), signed_index(w, spectrum.device)

    def inside(s: Tensor, n: int) -> Tensor:
        return (s >= -(n // 2)) & (s < (n + 1) // 2)

    out_of_band = ~(inside(su, size_in[0])[:, None] & inside(sv, size_in[1])[None, :])  # (H', W')
    power = (spectrum.abs() ** 2).reshape(-1, h, w).sum(0)  # (..., H', W') -> (H', W')
    copies = torch.zeros_like(out_of_band)
    predicted = predicted.reshape(-1, 2)
    copies[predicted[:, 0] % h, predicted[:, 1] % w] = True
    copies &= out_of_band
    energy = float(power[copies].sum() / power[out_of_band].sum())
    return energy, float(copies.sum() / out_of_band.sum())
