"""Matplotlib figures of spectral histories: band-error heatmaps (steps × bands) and radial power spectra.

Figures are built on ``matplotlib.figure.Figure`` directly (no pyplot state, no backend switch), so they
can be drawn from a training process, a thread or a test alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Optional

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

ERROR_LABEL = "relative error ‖F[f − y]‖_b / ‖F[y]‖_b"
# Colour floor of the log scale: errors below 1e-3 (60 dB under the band's energy) all look "learned".
ERROR_FLOOR = 1e-3


def cell_edges(values: Sequence[float]) -> np.ndarray:
    """Edges of cells centred on increasing ``values`` (midpoints, ends extended by half a step).

    Example:
        >>> cell_edges([10, 20, 40]).tolist()
        [5.0, 15.0, 30.0, 50.0]
    """
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def error_norm(*errors: np.ndarray) -> LogNorm:
    """One log colour scale spanning the finite errors of every history given (floored at ``ERROR_FLOOR``)."""
    finite = np.concatenate([e[np.isfinite(e)].ravel() for e in errors] + [np.array([])])
    hi = float(finite.max()) if finite.size else 1.0
    lo = float(max(finite.min(), ERROR_FLOOR)) if finite.size else ERROR_FLOOR
    return LogNorm(vmin=min(lo, hi / 10), vmax=max(hi, lo * 10))


def draw_heatmap(
    ax: Axes,
    steps: Sequence[float],
    edges: np.ndarray,
    errors: np.ndarray,
    norm: LogNorm,
    title: str = "",
    dc: Optional[np.ndarray] = None,
):
    """Band errors (E, B) as cells [e_b, e_{b+1}) × (step); NaN bands (no target energy) in grey.

    ``dc`` (E,), the DC error, is drawn as a column of half a band's width left of |k| = 0, set apart by a
    white line and labelled "DC": it belongs to no band (``inr.spectral``)."""
    cmap = colormaps["magma"].with_extremes(bad="0.75")
    edges = np.asarray(edges, dtype=np.float64)
    rows = cell_edges(steps)
    mesh = ax.pcolormesh(edges, rows, np.ma.masked_invalid(errors), norm=norm, cmap=cmap)
    if dc is not None and len(dc):
        width = (edges[1] - edges[0]) / 2
        column = np.ma.masked_invalid(np.asarray(dc, dtype=np.float64)[:, None])  # (E,) -> (E, 1)
        ax.pcolormesh(np.array([-width, 0.0]), rows, column, norm=norm, cmap=cmap)
        ax.axvline(0.0, color="white", linewidth=1.5)
        ax.set_xlim(-width, edges[-1])
        ax.text(-width / 2, rows[-1], "DC", ha="center", va="bottom", fontsize="small")
    ax.set_xlabel("radial frequency |k| (cycles per unit)")
    ax.set_ylabel("training step")
    if title:
        ax.set_title(title)
    return mesh


def _single_axes(right: float = 0.97) -> tuple[Figure, Axes]:
    # fixed margins instead of a layout engine: drawing is then ~40% cheaper, which matters during training
    fig = Figure(figsize=(6, 4.2))
    fig.subplots_adjust(left=0.12, right=right, bottom=0.12, top=0.92)
    return fig, fig.add_subplot()


def heatmap_figure(
    steps: Sequence[float], edges: np.ndarray, errors: np.ndarray, title: str = "", dc: Optional[np.ndarray] = None
) -> Figure:
    """One history's heatmap with its colour bar (and its DC column when ``dc`` is given)."""
    fig, ax = _single_axes(right=0.86)
    parts = [np.asarray(errors)] + ([np.asarray(dc)] if dc is not None else [])
    mesh = draw_heatmap(ax, steps, edges, np.asarray(errors), error_norm(*parts), title, dc=dc)
    fig.colorbar(mesh, ax=ax, label=ERROR_LABEL, fraction=0.06, pad=0.02)
    return fig


def spectra_figure(edges: np.ndarray, spectra: Mapping[str, np.ndarray], title: str = "") -> Figure:
    """Radially averaged power spectra (one line per entry of ``spectra``) against band centres, log y."""
    fig, ax = _single_axes()
    edges = np.asarray(edges)
    centres = (edges[1:] + edges[:-1]) / 2
    for name, power in spectra.items():
        power = np.asarray(power, dtype=np.float64)
        keep = np.isfinite(power) & (power > 0)  # empty bands and exact zeros have no place on a log axis
        ax.semilogy(centres[keep], power[keep], label=name)
    ax.set_xlabel("radial frequency |k| (cycles per unit)")
    ax.set_ylabel("mean power |c_k|²")
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


def band_spread_figure(edges: np.ndarray, errors: np.ndarray, title: str = "") -> Figure:
    """Band errors of K members (K, B) at one step: their mean per band with a band of ± one standard deviation
    (population, ddof 0) and each member as a thin line, log y."""
    fig, ax = _single_axes()
    edges, errors = np.asarray(edges, dtype=np.float64), np.asarray(errors, dtype=np.float64)
    centres = (edges[1:] + edges[:-1]) / 2
    mean, std = errors.mean(axis=0), errors.std(axis=0)
    for row in errors:
        ax.plot(centres, row, color="0.7", linewidth=0.7)
    ax.fill_between(centres, np.maximum(mean - std, ERROR_FLOOR), mean + std, alpha=0.3, label="mean ± std")
    ax.plot(centres, mean, marker="o", markersize=3, label=f"mean of {len(errors)} members")
    ax.set_yscale("log")
    ax.set_xlabel("radial frequency |k| (cycles per unit)")
    ax.set_ylabel(ERROR_LABEL)
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


def comparison_figure(histories: Mapping[str, Mapping[str, np.ndarray]], title: Optional[str] = None) -> Figure:
    """Heatmaps of several runs side by side on one colour scale, and a last panel with each run's final
    error per band. Each history holds ``steps`` (E,), ``edges`` (B+1,) and ``errors`` (E, B), and may hold
    ``dc`` (E,): its DC column, and its final DC error as a point at |k| = 0 on the last panel."""
    names = list(histories)
    fig = Figure(figsize=(3.4 * (len(names) + 1) + 1, 3.8), layout="constrained")
    axes = fig.subplots(1, len(names) + 1, squeeze=False)[0]
    norm = error_norm(*[np.asarray(h[k]) for h in histories.values() for k in ("errors", "dc") if k in h])
    mesh = None
    for ax, name in zip(axes, names):
        h = histories[name]
        mesh = draw_heatmap(ax, h["steps"], np.asarray(h["edges"]), np.asarray(h["errors"]), norm, name, dc=h.get("dc"))
    for ax in axes[1 : len(names)]:
        ax.set_ylabel("")
    if mesh is not None:
        fig.colorbar(mesh, ax=list(axes[: len(names)]), label="relative error per band", pad=0.01)
    last = axes[-1]
    for name in names:
        h = histories[name]
        edges = np.asarray(h["edges"])
        (line,) = last.semilogy((edges[1:] + edges[:-1]) / 2, np.asarray(h["errors"])[-1], marker=".", label=name)
        if h.get("dc") is not None and len(h["dc"]) and np.isfinite(h["dc"][-1]) and h["dc"][-1] > 0:
            last.semilogy([0.0], [h["dc"][-1]], marker="s", linestyle="none", color=line.get_color())
    last.set_xlabel("radial frequency |k| (cycles per unit)")
    last.set_title("final error per band (■ DC at |k| = 0)")
    last.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    return fig
