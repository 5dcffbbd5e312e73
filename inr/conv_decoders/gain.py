"""Gain maps |T(u, v)| of conv cascades, radial profiles, and their expectation over random initialisations.

Frequencies are in cycles per sample: bin u of an axis of length N sits at ``fftfreq(N)[u]`` ∈ [−½, ½),
and the radial frequency is r = √(f_y² + f_x²); r = ½ is the Nyquist frequency of an axis.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Optional, Union

import torch
from torch import Tensor, nn

from inr.conv_decoders.transfer import conv_transfer

IntOrList = Union[int, Sequence[int]]


def gain_map(transfer: Tensor, norm: str = "spectral") -> Tensor:
    """|T(u, v)| per frequency, (H, W, Co, Ci) -> (H, W): ``spectral`` (largest singular value, the most a
    unit input at (u, v) can be amplified) or ``frobenius`` (√ of the power gain of white input)."""
    if norm == "spectral":
        return torch.linalg.matrix_norm(transfer, ord=2)
    if norm == "frobenius":
        return torch.linalg.matrix_norm(transfer, ord="fro")
    raise ValueError(f"unknown norm {norm!r}; choose spectral or frobenius")


def radial_frequency_per_sample(size: Sequence[int], device: Optional[torch.device] = None) -> Tensor:
    """r[u, v] = √(fftfreq(H)[u]² + fftfreq(W)[v]²) in cycles per sample, (H, W), float64."""
    fy = torch.fft.fftfreq(int(size[0]), dtype=torch.float64, device=device)
    fx = torch.fft.fftfreq(int(size[1]), dtype=torch.float64, device=device)
    return torch.sqrt(fy[:, None] ** 2 + fx[None, :] ** 2)


def radial_bins(size: Sequence[int], num_bins: int = 16, max_radius: float = 0.5) -> tuple[Tensor, Tensor]:
    """Membership of each frequency in ``num_bins`` equal annuli [r_i, r_{i+1}) of [0, max_radius]
    (the last closed), -> (mask (num_bins, H·W) float64, edges (num_bins + 1,)). Corners beyond
    ``max_radius`` belong to no bin."""
    r = radial_frequency_per_sample(size).flatten()  # (H, W) -> (H·W,)
    edges = torch.linspace(0.0, max_radius, num_bins + 1, dtype=torch.float64)
    index = torch.bucketize(r, edges, right=True) - 1  # bin i holds edges[i] <= r < edges[i+1]
    index[r == max_radius] = num_bins - 1
    inside = (index >= 0) & (index < num_bins)
    mask = torch.zeros(num_bins, r.numel(), dtype=torch.float64)
    mask[index[inside], torch.nonzero(inside).squeeze(1)] = 1.0
    return mask, edges


def radial_profile(values: Tensor, num_bins: int = 16, max_radius: float = 0.5) -> tuple[Tensor, Tensor]:
    """Mean of ``values`` (..., H, W) over each radial band -> (profile (..., num_bins), bin centres).

    A band no frequency falls in (tiny or very elongated maps) is NaN.

    Example:
        >>> profile, centres = radial_profile(radial_frequency_per_sample((16, 16)), num_bins=4)
        >>> centres.tolist(), bool((profile > torch.tensor([0.0, 0.125, 0.25, 0.375], dtype=torch.float64)).all())
        ([0.0625, 0.1875, 0.3125, 0.4375], True)
    """
    mask, edges = radial_bins(values.shape[-2:], num_bins, max_radius)
    mask = mask.to(values.device)
    flat = values.flatten(-2).to(torch.float64)  # (..., H, W) -> (..., H·W)
    counts = mask.sum(1)
    profile = (flat @ mask.T) / counts  # empty bands: 0 / 0 = NaN
    return profile, (edges[:-1] + edges[1:]) / 2


def band_ratio(profile: Tensor) -> Tensor:
    """Gain of the lowest band over that of the highest, ``profile[..., 0] / profile[..., -1]``."""
    return profile[..., 0] / profile[..., -1]


def _per_layer(value: IntOrList, length: int, name: str) -> list[int]:
    values = [int(value)] * length if isinstance(value, int) else [int(v) for v in value]
    if len(values) != length:
        raise ValueError(f"{name}: expected {length} values, got {len(values)}")
    return values


def default_std(in_channels: int, kernel_size: int) -> float:
    """LeCun's √(1 / fan_in) with fan_in = C_in k², the std that keeps a linear layer's output variance."""
    return 1.0 / math.sqrt(in_channels * kernel_size**2)


def random_cascade(
    depth: int,
    channels: IntOrList = 8,
    kernel_size: IntOrList = 3,
    mean: float = 0.0,
    std: Optional[float] = None,
    generator: Optional[torch.Generator] = None,
    dtype: torch.dtype = torch.float64,
) -> list[Tensor]:
    """Kernels of a random cascade, weights i.i.d. N(mean, std²) (``std=None``: ``default_std`` per layer).

    ``channels`` is C for every map or the list [C_0, …, C_depth]; ``kernel_size`` is k or one per layer.
    """
    chans = _per_layer(channels, depth + 1, "channels")
    kernels = _per_layer(kernel_size, depth, "kernel_size")
    out = []
    for l in range(depth):
        s = default_std(chans[l], kernels[l]) if std is None else std
        shape = (chans[l + 1], chans[l], kernels[l], kernels[l])
        out.append(torch.randn(shape, generator=generator, dtype=dtype) * s + mean)
    return out


def expected_gain(
    size: Sequence[int],
    depth: int,
    channels: IntOrList = 8,
    kernel_size: IntOrList = 3,
    mean: float = 0.0,
    std: Optional[float] = None,
    seeds: int = 32,
    norm: str = "spectral",
    first_seed: int = 0,
) -> tuple[Tensor, Tensor]:
    """Monte-Carlo E[|T(u, v)|] over ``seeds`` random cascades -> (mean (H, W), standard error (H, W)).

    Seed s draws its cascade from ``torch.Generator().manual_seed(first_seed + s)``.
    """
    maps = []
    for s in range(seeds):
        gen = torch.Generator().manual_seed(first_seed + s)
        weights = random_cascade(depth, channels, kernel_size, mean, std, gen)
        maps.append(gain_map(conv_transfer(weights, size), norm))
    stack = torch.stack(maps)  # (S, H, W)
    sem = stack.std(0) / math.sqrt(seeds) if seeds > 1 else torch.zeros_like(stack[0])
    return stack.mean(0), sem


def box_sum_response(n: int, k: int) -> Tensor:
    """D(u) = Σ_{d=−k//2}^{k//2} e^{2πi u d / n} = sin(π u k / n) / sin(π u / n), real, (n,) float64:
    the response of a k-tap all-ones centred kernel (the mean part of a layer)."""
    u = torch.arange(n, dtype=torch.float64)
    d = torch.arange(k, dtype=torch.float64) - k // 2
    return torch.cos(2 * math.pi * torch.remainder(u[:, None] * d[None, :], n) / n).sum(1)


def expected_frobenius_gain(
    size: Sequence[int],
    depth: int,
    channels: IntOrList = 8,
    kernel_size: IntOrList = 3,
    mean: float = 0.0,
    std: Optional[float] = None,
) -> Tensor:
    """Exact E‖T(u, v)‖_F² of a random cascade with i.i.d. N(μ, σ²) weights, (H, W) float64.

    Write Ŵ = M + Z with M = μ D(u, v) 1 1ᵀ (D = D_H(u) D_W(v), ``box_sum_response``) and Z zero-mean with
    E[conj(Z_aj) Z_bk] = σ² k² δ_ab δ_jk. Then E‖T‖_F² = tr E[T^H T], and E[Ŵ^H A Ŵ] keeps the form
    A = α I + β 1 1ᵀ: for an n×n A (n = C_out) and an m-column Ŵ (m = C_in),
    α' = σ² k² n (α + β), β' = |μ D|² n (α + n β), starting from A = I at the output; the result is
    m (α + β) at the input.
    """
    chans = _per_layer(channels, depth + 1, "channels")
    kernels = _per_layer(kernel_size, depth, "kernel_size")
    h, w = int(size[0]), int(size[1])
    alpha = torch.ones(h, w, dtype=torch.float64)
    beta = torch.zeros(h, w, dtype=torch.float64)
    for l in reversed(range(depth)):
        n, k = chans[l + 1], kernels[l]
        s = default_std(chans[l], k) if std is None else std
        d2 = (box_sum_response(h, k)[:, None] * box_sum_response(w, k)[None, :]) ** 2  # |D(u, v)|²
        alpha, beta = s**2 * k**2 * n * (alpha + beta), mean**2 * d2 * n * (alpha + n * beta)
    return chans[0] * (alpha + beta)


@torch.no_grad()
def power_gain(
    net: nn.Module, size: Sequence[int], in_channels: int, inputs: int = 8, generator: Optional[torch.Generator] = None
) -> Tensor:
    """Measured power gain G(u, v) = E_x Σ_o |fft2(net(x))_o[u, v]|² / (H W) for white x ~ N(0, 1), (H', W').

    For a circular, linear, bias-free cascade E_x gives exactly ‖T(u, v)‖_F²; for zero padding, ReLU or
    upsampling it is what the network does to white noise, frequency by frequency (a probe, used to compare
    variants against the linear prediction, not to compute T).
    """
    p = next(net.parameters())
    x = torch.randn(inputs, in_channels, *size, generator=generator, dtype=p.dtype).to(p.device)
    y = torch.fft.fft2(net(x))
    return (y.abs() ** 2).sum(1).mean(0) / (size[0] * size[1])


def expected_power_gain(
    make_net: Callable[[int], nn.Module], size: Sequence[int], in_channels: int, seeds: int = 16, inputs: int = 8
) -> Tensor:
    """``power_gain`` averaged over networks ``make_net(seed)`` for seed = 0 … seeds−1, (H', W')."""
    total = None
    for s in range(seeds):
        g = power_gain(make_net(s), size, in_channels, inputs, torch.Generator().manual_seed(10_000 + s))
        total = g if total is None else total + g
    return total / seeds
