"""Why a learned initialisation fits fast, measured: the residual per frequency band at step 0 and after a few steps
(from the rows' band errors), and the empirical NTK Θ = J Jᵀ at each initialisation — its eigenvalues, and its
energy per frequency band, the Rayleigh quotient of each Fourier mode averaged over the band:

    D(k) = (1/N) f_kᴴ Θ f_k,  f_k(v) = e^{2πi k·v},  D_b = mean_{k ∈ b} D(k).

For a stationary kernel (a Fourier-feature network at a random initialisation, in the wide limit) the f_k are Θ's
eigenvectors and D(k) its eigenvalues; under gradient descent on ½‖f − y‖² the residual's component along a mode
of eigenvalue λ decays like e^{−ηλt}. So D_b says how fast band b of a signal is learned from that
initialisation: a learned init that raises D_b where the class holds its energy learns those frequencies first.

    ntk = ntk_spectrum(model, coords, shape)       # eigenvalues (N,), band means D_b (B,), band edges (B+1,)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from torch import Tensor

from inr.ntk import empirical_ntk, kernel_eigh
from inr.spectral.bands import BandPartition, grid_dft


def fourier_diagonal(kernel: Tensor, shape: Sequence[int]) -> Tensor:
    """D(k) = (1/N) f_kᴴ Θ f_k for every DFT bin k of a regular grid of ``shape`` (N points, row-major), from the
    kernel (N, N) on that grid -> (*shape), real, in fftn's order of bins.

    Example (a stationary kernel on a periodic grid: D is its circulant spectrum):
        >>> from inr.ntk import circulant_spectrum
        >>> row = torch.tensor([4.0, 1.0, 0.5, 1.0], dtype=torch.float64)
        >>> k = torch.stack([row.roll(i) for i in range(4)])
        >>> torch.allclose(fourier_diagonal(k, (4,)), circulant_spectrum(row))
        True
    """
    shape = tuple(int(s) for s in shape)
    n, d = int(np.prod(shape)), len(shape)
    grid = kernel.to(torch.float64).reshape(*shape, *shape)
    right = torch.fft.fftn(grid, dim=tuple(range(d, 2 * d)))  # Σ_j Θ_ij e^{−2πi k·v_j}
    both = torch.fft.ifftn(right, dim=tuple(range(d))) * n  # Σ_i e^{+2πi k'·v_i} (…)
    flat = both.reshape(n, n)
    return (flat.diagonal().real / n).reshape(shape)


def band_means(values: Tensor, shape: Sequence[int], num_bands: int, edges: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """The mean of a per-bin quantity (*shape) over each radial band (DC apart; ``num_bands`` up to Nyquist, or the
    bands between ``edges`` in cycles per unit, the bins above the last left out), and the edges."""
    bands = BandPartition(shape, num_bands, edges=edges)
    return bands.mean(values.reshape(*shape).to(torch.float64)), bands.edges


def class_energy(signals: Tensor, num_bands: int, edges: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """The signals' mean power per bin, |c_k|² averaged over signals and channels, then over each band: where a
    class holds its energy. ``signals``: (S, C, *shape), 1 to 3 spatial axes; ``edges``: the bands' edges in cycles
    per unit (None: ``num_bands`` up to the signals' Nyquist). c_k does not depend on the resolution
    (``grid_dft``), so with the edges of a kernel's coarser grid the power is that of the kernel's bands.

    Each channel of each signal is transformed on its own (the transform runs over the spatial axes only).

    Example:
        >>> x = torch.zeros(2, 3, 16, 16); x[...] = torch.cos(torch.pi * torch.arange(16) / 4)  # cos(2π·2v) in x
        >>> power, edges = class_energy(x, 4)  # |c_k|² = ¼ at k = (±2, 0): 2 of the 36 bins of band [2, 4)
        >>> edges[1:3].tolist(), round(float(power[1]) * 36, 6)
        ([2.0, 4.0], 0.5)
    """
    shape = tuple(signals.shape[2:])
    per_channel = signals.to(torch.float64).reshape(-1, *shape)  # (S·C, *shape)
    power = grid_dft(per_channel).abs().square().mean(dim=0)  # (*shape)
    return band_means(power, shape, num_bands, edges)


def ntk_spectrum(model: torch.nn.Module, coords: Tensor, shape: Sequence[int], num_bands: int = 8) -> dict[str, Any]:
    """The empirical NTK (output trace) of ``model`` at ``coords`` (a regular grid of ``shape``, row-major): its
    eigenvalues (largest first) and its band means D_b (module docstring)."""
    kernel = empirical_ntk(model, coords).detach().to(torch.float64)
    eigenvalues = kernel_eigh(kernel)[0].clamp_min(0)
    means, edges = band_means(fourier_diagonal(kernel, shape), shape, num_bands)
    return {"eigenvalues": eigenvalues.tolist(), "band_means": means.tolist(), "edges": edges.tolist()}


def subgrid(shape: Sequence[int], most: int) -> tuple[Tensor, tuple[int, ...]]:
    """Coordinates (n, d) of the regular sub-grid [::s, …] of a grid of ``shape`` with at most ``most`` points,
    and its shape (its coordinates are those of the grid's points)."""
    step = 1
    while int(np.prod([len(range(0, s, step)) for s in shape])) > most:
        step += 1
    axes = [torch.arange(0, s, step, dtype=torch.float32) / s for s in shape]
    points = torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1)
    return points.reshape(-1, len(shape)), tuple(len(a) for a in axes)


# --- figures -------------------------------------------------------------------------------------------
def band_figure(errors: Mapping[str, Mapping[int, Sequence[float]]], edges: Sequence[float], title: str) -> Figure:
    """Relative error per band (log) for each initialisation (a colour) at each step (a line style)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    centres = 0.5 * (np.asarray(edges[:-1]) + np.asarray(edges[1:]))
    styles = ["-", "--", ":", "-."]
    for colour, (name, by_step) in enumerate(errors.items()):
        for style, (step, values) in zip(styles, sorted(by_step.items(), key=lambda item: int(item[0]))):
            ax.plot(centres, values, style, color=f"C{colour}", marker=".", label=f"{name}, step {step}")
    ax.set_yscale("log")
    ax.set_xlabel("frequency (cycles per unit)")
    ax.set_ylabel("relative error per band (held-out)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def ntk_figure(spectra: Mapping[str, Mapping[str, Any]], energy: Sequence[float], title: str) -> Figure:
    """Left: the NTK's eigenvalues (largest first) per initialisation; right: its energy per band D_b, with the
    power per band of the signals ``energy`` was computed on (grey, right axis; the study's: its test signals)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.0))
    for colour, (name, s) in enumerate(spectra.items()):
        values = np.asarray(s["eigenvalues"])
        left.plot(np.arange(1, len(values) + 1), np.maximum(values, 1e-12), color=f"C{colour}", label=name)
        edges = np.asarray(s["edges"])
        right.plot(0.5 * (edges[:-1] + edges[1:]), s["band_means"], color=f"C{colour}", marker="o", label=name)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("eigenvalue index")
    left.set_ylabel("eigenvalue of Θ")
    left.grid(alpha=0.3, which="both")
    left.legend(fontsize=8)
    right.set_yscale("log")
    right.set_xlabel("frequency (cycles per unit)")
    right.set_ylabel("D_b = mean f_kᴴ Θ f_k / N over the band")
    right.grid(alpha=0.3, which="both")
    twin = right.twinx()
    edges = np.asarray(next(iter(spectra.values()))["edges"])
    twin.plot(0.5 * (edges[:-1] + edges[1:]), energy, color="0.6", linestyle="--", label="signals' power")
    twin.set_yscale("log")
    twin.set_ylabel("the test signals' power per band", color="0.4")
    right.legend(fontsize=8, loc="lower left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def outer_loop_figure(curves: Mapping[str, Mapping[str, Sequence[tuple[int, float]]]], metric: str, title: str) -> Figure:
    """The outer loop's curves: the held-out ``metric`` after n inner steps (one colour per n) against the outer
    step, one line style per algorithm (``curves``: algorithm -> tag ``val/<metric>@<n>`` -> [(step, value)])."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    styles = ["-", "--", ":", "-."]
    for style, (name, tags) in zip(styles, curves.items()):
        marks = sorted(
            (int(tag.rsplit("@", 1)[1]), tag) for tag in tags if tag.startswith(f"val/{metric}@") and "/std" not in tag
        )
        for colour, (n, tag) in enumerate(marks):
            steps, values = zip(*tags[tag])
            ax.plot(steps, values, style, color=f"C{colour}", marker=".", label=f"{name}, after {n} inner steps")
    ax.set_xlabel("outer step")
    ax.set_ylabel(f"held-out {metric} of the test signals")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig
