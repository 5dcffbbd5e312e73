"""Spectra of signals on regular [0,1)^d grids: DFT in cycles per unit, radial bands, per-band relative error.

Conventions (shared with ``inr.data.grid``): a signal is a tensor ``(C, *spatial)`` with 1–3 spatial axes,
sample i of an axis of N sits at v = i / N, so DFT bin j is k = j cycles per unit (j − N above N/2) and the
grid's Nyquist frequency is N/2 cycles per unit whatever the resolution.

Bands are radial: band b holds the DFT bins whose radial frequency |k| = (Σ_i k_i²)^½ lies in
[e_b, e_{b+1}); the last band is closed, [e_{B−1}, e_B]. Two choices are fixed here:

- **The DC term is kept apart.** Bin k = 0 (the signal's mean) belongs to no band: its error is reported on
  its own (``dc_relative_error``), and band 0 holds 0 < |k| < e_1. Otherwise a prediction that only has the
  right mean colour would look half learned in the low bands (on a photograph the mean carries most of the
  energy below e_1), while it has learned no frequency at all: predicting the target's mean gives
  Δ_dc = 0 and Δ_b = 1 in every band.
- **Bands end at the Nyquist radius** by default, e_B = min_i ⌊N_i/2⌋: the largest |k| whose whole sphere
  the grid's bins cover in every direction. The corners beyond it (|k| up to (Σ_i ⌊N_i/2⌋²)^½ in a square
  grid's diagonals) are anisotropic partial shells; ``max_frequency="corner"`` includes them, a number sets
  e_B explicitly (the way to compare grids of different resolutions band by band).

Linear spacing: e_b = b·f/B. Log spacing: e_b = f^{b/B} for b ≥ 1 and e_0 = 0 (so band 0 holds every
0 < |k| < f^{1/B}). A band holding no bins, or whose target energy is at rounding level, reports NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Optional, Union

import torch
from torch import Tensor

MaxFrequency = Union[float, Literal["nyquist", "corner"]]
SPACINGS = ("linear", "log")

# A band whose target amplitude is below this many machine epsilons of the whole signal's is
# indistinguishable from FFT rounding (error ≈ ε·√log N·‖x‖ per bin), so its ratio would be noise: NaN.
ROUNDING_EPS_FACTOR = 100.0


def _check_signal(x: Tensor, name: str = "signal") -> None:
    if x.ndim < 2 or x.ndim > 4:
        raise ValueError(f"{name} must be shaped (C, *spatial) with 1–3 spatial axes, got {tuple(x.shape)}")


def grid_dft(x: Tensor) -> Tensor:
    """Fourier-series coefficients c_k = (1/N) Σ_n x_n e^{−2πi k·n/N} over the spatial axes of (C, *spatial).

    With this normalisation c_k does not depend on the resolution for a band-limited signal and Parseval
    reads Σ_k |c_k|² = mean_n |x_n|² per channel.

    Example:
        >>> x = torch.cos(2 * math.pi * 2 * torch.arange(8) / 8)[None]  # cos(2π·2v) on 8 samples
        >>> grid_dft(x).abs().round(decimals=6)
        tensor([[0.0000, 0.0000, 0.5000, 0.0000, 0.0000, 0.0000, 0.5000, 0.0000]])
    """
    _check_signal(x)
    return torch.fft.fftn(x, dim=tuple(range(1, x.ndim)), norm="forward")


def grid_frequencies(shape: Sequence[int], device: Optional[torch.device] = None) -> list[Tensor]:
    """Per-axis DFT frequencies in cycles per unit, float64: bin j of N samples ↔ k = j (j < N/2) or j − N.

    Example:
        >>> grid_frequencies((4,))[0]
        tensor([ 0.,  1., -2., -1.], dtype=torch.float64)
    """
    out = []
    for n in (int(n) for n in shape):
        j = torch.arange(n, device=device)
        out.append(torch.where(j < (n + 1) // 2, j, j - n).to(torch.float64))  # exact integers, numpy's order
    return out


def radial_frequency(shape: Sequence[int], device: Optional[torch.device] = None) -> Tensor:
    """|k| = (Σ_i k_i²)^½ of every DFT bin of a grid, shaped like the grid, float64 (cycles per unit).

    Example:
        >>> radial_frequency((4, 4))[1]
        tensor([1.0000, 1.4142, 2.2361, 1.4142], dtype=torch.float64)
    """
    freqs = grid_frequencies(shape, device)
    sq = torch.zeros(tuple(int(n) for n in shape), dtype=torch.float64, device=device)
    for axis, k in enumerate(freqs):
        view = [1] * len(freqs)
        view[axis] = -1
        sq = sq + k.reshape(view) ** 2  # broadcast each axis' k² over the grid
    return sq.sqrt()


def nyquist_radius(shape: Sequence[int]) -> float:
    """min_i ⌊N_i/2⌋: the largest radius whose whole sphere of frequencies the grid represents."""
    return float(min(int(n) // 2 for n in shape))


def corner_radius(shape: Sequence[int]) -> float:
    """(Σ_i ⌊N_i/2⌋²)^½: the largest radial frequency of any DFT bin of the grid."""
    return math.sqrt(sum((int(n) // 2) ** 2 for n in shape))


def resolve_max_frequency(shape: Sequence[int], max_frequency: MaxFrequency = "nyquist") -> float:
    if max_frequency == "nyquist":
        return nyquist_radius(shape)
    if max_frequency == "corner":
        return corner_radius(shape)
    if isinstance(max_frequency, str):
        raise ValueError(f"max_frequency must be a number, 'nyquist' or 'corner', got {max_frequency!r}")
    if not max_frequency > 0:
        raise ValueError(f"max_frequency must be positive, got {max_frequency}")
    return float(max_frequency)


def band_edges(num_bands: int, max_frequency: float, spacing: str = "linear") -> Tensor:
    """Band edges e_0 = 0 < e_1 < … < e_B = f in cycles per unit, float64 (linear or log, see module doc).

    Example:
        >>> band_edges(4, 16.0, "linear")
        tensor([ 0.,  4.,  8., 12., 16.], dtype=torch.float64)
        >>> band_edges(4, 16.0, "log")
        tensor([ 0.,  2.,  4.,  8., 16.], dtype=torch.float64)
    """
    if num_bands < 1:
        raise ValueError(f"num_bands must be ≥ 1, got {num_bands}")
    if spacing == "linear":
        return torch.linspace(0.0, max_frequency, num_bands + 1, dtype=torch.float64)
    if spacing == "log":
        if max_frequency <= 1.0:
            raise ValueError(f"log-spaced bands need max_frequency > 1 cycle per unit, got {max_frequency}")
        edges = max_frequency ** (torch.arange(num_bands + 1, dtype=torch.float64) / num_bands)
        edges[0] = 0.0  # band 0 also holds DC and every |k| < f^{1/B}
        return edges
    raise ValueError(f"unknown spacing {spacing!r}; choose one of {', '.join(SPACINGS)}")


class BandPartition:
    """The radial bands of one grid shape: each DFT bin's band, computed once and reused every call.

    Args:
        shape: the spatial shape of the signals.
        num_bands, spacing, max_frequency: as in ``band_relative_error``; or ``edges`` given directly.
        device: where the bin assignment lives (the signals' device).

    ``assignment`` holds, for every bin in row-major order, its band in 0..B−1, or B for the DC bin and the
    bins above e_B (they are left out of every band).
    """

    def __init__(
        self,
        shape: Sequence[int],
        num_bands: int = 16,
        spacing: str = "linear",
        max_frequency: MaxFrequency = "nyquist",
        edges: Optional[Tensor] = None,
        device: Optional[torch.device] = None,
    ) -> None:
        self.shape = tuple(int(n) for n in shape)
        if not 1 <= len(self.shape) <= 3:
            raise ValueError(f"spectral bands need 1–3 spatial axes, got shape {self.shape}")
        if edges is None:
            edges = band_edges(num_bands, resolve_max_frequency(self.shape, max_frequency), spacing)
        self.edges = edges.to(torch.float64).cpu()
        self.num_bands = len(self.edges) - 1
        radius = radial_frequency(self.shape, device).reshape(-1)  # (*shape) -> (numel,)
        inner = self.edges[1:-1].to(radius.device)
        assignment = torch.bucketize(radius, inner, right=True)  # e_b ≤ |k| < e_{b+1} -> b
        assignment[radius > self.edges[-1].item()] = self.num_bands  # above e_B: in no band
        assignment[0] = self.num_bands  # DC (flat index 0 in fftn's order): reported apart, in no band
        self.assignment = assignment
        self.counts = torch.bincount(assignment, minlength=self.num_bands + 1)[: self.num_bands]

    def sum(self, power: Tensor) -> Tensor:
        """Σ over channels and over the bins of each band of ``power`` (C, *shape) or (*shape) -> (B,)."""
        flat = power.reshape(-1, *self.shape).sum(0).reshape(-1)  # (C, *shape) -> (numel,)
        out = torch.zeros(self.num_bands + 1, dtype=flat.dtype, device=flat.device)
        return out.index_add_(0, self.assignment.to(flat.device), flat)[: self.num_bands]

    def mean(self, power: Tensor) -> Tensor:
        """Mean over channels and over each band's bins of ``power`` (C, *shape) -> (B,); NaN for empty bands."""
        channels = power.shape[0] if power.ndim > len(self.shape) else 1
        denom = (self.counts * channels).to(device=power.device, dtype=power.dtype)
        return self.sum(power) / denom  # 0/0 = NaN for a band without bins


def relative_error_from_energies(residual: Tensor, target: Tensor, total: Optional[Tensor] = None) -> Tensor:
    """Δ_b = (R_b / T_b)^½ from per-band energies; NaN where T_b is zero or at rounding level (see
    ``ROUNDING_EPS_FACTOR``) relative to ``total``, the signal's energy (default Σ_b T_b)."""
    eps = torch.finfo(target.dtype).eps
    floor = (ROUNDING_EPS_FACTOR * eps) ** 2 * (target.sum() if total is None else total)
    ratio = (residual / target).sqrt()
    return torch.where(target > floor, ratio, torch.full_like(ratio, math.nan))


def pooled_relative_error(residual: Tensor, target: Tensor) -> Tensor:
    """(Σ_b R_b / Σ_b T_b)^½ over the given bands (NaN-free energies); a scalar."""
    return (residual.sum() / target.sum()).sqrt()


def band_energies(pred: Tensor, target: Tensor, bands: BandPartition) -> tuple[Tensor, Tensor]:
    """Per-band energies R_b = Σ_{c, k∈b} |F[pred − target]_{c,k}|² and T_b = Σ_{c, k∈b} |F[target]_{c,k}|²."""
    if pred.shape != target.shape:
        raise ValueError(f"pred and target shapes differ: {tuple(pred.shape)} vs {tuple(target.shape)}")
    _check_signal(target, "target")
    residual = bands.sum(grid_dft(pred - target).abs().square())
    return residual, bands.sum(grid_dft(target).abs().square())


def band_relative_error(
    pred: Tensor,
    target: Tensor,
    num_bands: int = 16,
    spacing: str = "linear",
    max_frequency: MaxFrequency = "nyquist",
) -> tuple[Tensor, Tensor]:
    """Relative error per radial band, Δ_b = ‖F[pred − target]‖_b / ‖F[target]‖_b.

    The norm of band b is over the complex DFT coefficients of its bins and over all channels (squared norms
    summed over channels before the ratio), so phase errors count, not only the spectrum's magnitude
    (Xu et al. 2019, frequency principle). Δ_b = 1 is the error of predicting 0 in that band. DC is in no
    band (module doc): ``dc_relative_error`` or ``spectral_summary`` report it.

    Args:
        pred, target: (C, *spatial), 1–3 spatial axes on the [0,1)^d grid.
        num_bands: B.
        spacing: ``linear`` or ``log`` edges (module doc).
        max_frequency: e_B: ``nyquist`` (default), ``corner`` or a number of cycles per unit.

    Returns:
        errors (B,) in the target's real dtype, NaN for bands without target energy; edges (B+1,) float64
        in cycles per unit.

    Example:
        >>> v = torch.arange(32) / 32
        >>> target = (torch.cos(2 * math.pi * 3 * v) + torch.cos(2 * math.pi * 12 * v))[None]
        >>> pred = torch.cos(2 * math.pi * 3 * v)[None]  # the low component learned, the high one missing
        >>> errors, edges = band_relative_error(pred, target, num_bands=4)
        >>> errors.round(decimals=4), edges
        (tensor([0., nan, nan, 1.]), tensor([ 0.,  4.,  8., 12., 16.], dtype=torch.float64))
    """
    _check_signal(target, "target")
    bands = BandPartition(target.shape[1:], num_bands, spacing, max_frequency, device=target.device)
    residual, energy = band_energies(pred, target, bands)
    return relative_error_from_energies(residual, energy), bands.edges


def dc_energies(pred: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """Energies of the DC bin, R_dc = Σ_c |mean(pred_c − target_c)|² and T_dc = Σ_c |mean(target_c)|² (c_0 is
    the mean under ``grid_dft``'s normalisation), as 0-d tensors."""
    if pred.shape != target.shape:
        raise ValueError(f"pred and target shapes differ: {tuple(pred.shape)} vs {tuple(target.shape)}")
    _check_signal(target, "target")
    spatial = tuple(range(1, target.ndim))
    return (pred - target).mean(dim=spatial).square().sum(), target.mean(dim=spatial).square().sum()


def dc_relative_error(pred: Tensor, target: Tensor) -> Tensor:
    """Δ_dc = ‖mean(pred − target)‖ / ‖mean(target)‖, the norms over channels: the error of the mean colour.

    NaN when the target's mean is zero or at rounding level relative to its energy. Example:
        >>> target = torch.tensor([[0.2, 0.6], [1.0, 1.0]])  # two channels, means 0.4 and 1.0
        >>> round(float(dc_relative_error(target + torch.tensor([[0.1], [0.0]]), target)), 6)  # 0.1 / √1.16
        0.092848
    """
    residual, energy = dc_energies(pred, target)
    total = target.square().mean(dim=tuple(range(1, target.ndim))).sum()  # Σ_c mean |x_c|² = Σ_c Σ_k |c_k|²
    return relative_error_from_energies(residual[None], energy[None], total)[0]


def summarise_band_errors(residual: Tensor, energy: Tensor, dc_residual: Tensor, dc_energy: Tensor) -> dict[str, Tensor]:
    """From per-band energies (B,) and the DC bin's: ``errors`` Δ_b (B,), ``dc`` Δ_dc, and the pooled errors
    ``low`` (bands 0..⌈B/2⌉−1), ``high`` (the rest; NaN for B = 1) and ``all`` (every band), none with DC."""
    half = (len(energy) + 1) // 2
    nan = torch.tensor(math.nan, dtype=energy.dtype, device=energy.device)
    return {
        "errors": relative_error_from_energies(residual, energy),
        "dc": relative_error_from_energies(dc_residual[None], dc_energy[None], energy.sum() + dc_energy)[0],
        "low": pooled_relative_error(residual[:half], energy[:half]),
        "high": pooled_relative_error(residual[half:], energy[half:]) if len(energy) > 1 else nan,
        "all": pooled_relative_error(residual, energy),
    }


def spectral_summary(
    pred: Tensor,
    target: Tensor,
    num_bands: int = 16,
    spacing: str = "linear",
    max_frequency: MaxFrequency = "nyquist",
) -> dict[str, Tensor]:
    """``band_relative_error`` with the DC error and the pooled errors: ``errors`` (B,), ``edges`` (B+1,),
    ``dc``, ``low``, ``high``, ``all`` (see ``summarise_band_errors``).

    Example: a prediction equal to the target's mean has learned the DC term and no frequency
        >>> target = torch.rand(3, 16, 16, dtype=torch.float64)
        >>> s = spectral_summary(target.mean(dim=(1, 2), keepdim=True).expand_as(target), target, num_bands=4)
        >>> [round(float(e), 12) for e in (*s["errors"], s["dc"], s["low"], s["high"])]
        [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    """
    _check_signal(target, "target")
    bands = BandPartition(target.shape[1:], num_bands, spacing, max_frequency, device=target.device)
    residual, energy = band_energies(pred, target, bands)
    return {**summarise_band_errors(residual, energy, *dc_energies(pred, target)), "edges": bands.edges}


def aliased_energy_fraction(x: Tensor, step: int = 2) -> float:
    """Share of the non-DC energy Σ_{c, k≠0} |c_k|² of ``x`` (C, *spatial) in the bins that the grid
    subsampled by ``step`` along every axis cannot hold: |k_i| ≥ N_i / (2·step) on some axis i.

    For the ``every_other`` split (step 2) this is the energy at or above the training grid's Nyquist
    frequency: the part of the image the training pixels cannot determine (it aliases into the lower bins).
    The Nyquist bin itself counts as above: a cosine at exactly Nyquist is sampled at its extrema or its
    zeros depending on its phase.

    Example:
        >>> v = torch.arange(16) / 16
        >>> x = (torch.cos(2 * math.pi * 2 * v) + torch.cos(2 * math.pi * 5 * v))[None]  # Nyquist of [::2]: 4
        >>> round(aliased_energy_fraction(x), 6)
        0.5
    """
    _check_signal(x)
    if step < 1:
        raise ValueError(f"step must be ≥ 1, got {step}")
    shape = x.shape[1:]
    power = grid_dft(x.to(torch.float64)).abs().square().sum(0)  # (C, *shape) -> (*shape)
    outside = torch.zeros(shape, dtype=torch.bool)
    for axis, k in enumerate(grid_frequencies(shape)):
        view = [1] * len(shape)
        view[axis] = -1
        outside = outside | (k.abs() >= shape[axis] / (2 * step)).reshape(view)  # broadcast per axis
    power = power.reshape(-1).cpu()
    outside = outside.reshape(-1)
    nondc = power[1:].sum()  # flat index 0 is DC
    return float(power[outside].sum() / nondc) if nondc > 0 else math.nan


def radial_power_spectrum(
    x: Tensor,
    num_bands: Optional[int] = None,
    spacing: str = "linear",
    max_frequency: MaxFrequency = "nyquist",
) -> tuple[Tensor, Tensor]:
    """Radially averaged power P_b = mean over channels and over the bins k of band b of |c_k|².

    ``c_k`` are the resolution-independent coefficients of ``grid_dft``. Default: one band per cycle per
    unit up to e_B (``num_bands = ⌈e_B⌉``). Returns (power (B,), edges (B+1,)); empty bands are NaN, so the
    first band [0, 1) of the default partition, which would hold DC alone, is NaN (DC is in no band).

    Example:
        >>> v = torch.arange(16) / 16
        >>> power, edges = radial_power_spectrum(torch.sin(2 * math.pi * 5 * v)[None])
        >>> int(power.nan_to_num().argmax()), edges[5:7].tolist()  # |c_±5|² = 1/4 in band [5, 6)
        (5, [5.0, 6.0])
    """
    _check_signal(x)
    f = resolve_max_frequency(x.shape[1:], max_frequency)
    bands = BandPartition(x.shape[1:], num_bands or max(1, math.ceil(f)), spacing, f, device=x.device)
    return bands.mean(grid_dft(x).abs().square()), bands.edges


def radial_spectra(
    pred: Tensor,
    target: Tensor,
    num_bands: Optional[int] = None,
    spacing: str = "linear",
    max_frequency: MaxFrequency = "nyquist",
) -> dict[str, Tensor]:
    """Radially averaged power spectra of the target, the prediction and the residual pred − target,
    each (B,), and their common ``edges`` (B+1,)."""
    if pred.shape != target.shape:
        raise ValueError(f"pred and target shapes differ: {tuple(pred.shape)} vs {tuple(target.shape)}")
    out = {}
    for name, signal in (("target", target), ("prediction", pred), ("residual", pred - target)):
        out[name], out["edges"] = radial_power_spectrum(signal, num_bands, spacing, max_frequency)
    return out
