"""Bjøntegaard deltas of a test curve against an anchor, by the ``bjontegaard`` package (Akima interpolation):
BD-rate = (10^(mean over the common PSNR range of log₁₀ R_test − log₁₀ R_anchor) − 1) · 100 %, negative when the test
codec needs fewer bits; BD-PSNR = the mean PSNR difference (dB) over the common log-rate range.

Two averaging conventions over a set of images, named as the tables name them:

- ``per-image``: the delta of each image's curves, then the mean over images (most papers' convention; every
  image weighs the same whatever its rate);
- ``mean-curve``: the delta of the mean curves (CompressAI's: ``rd_results.mean_curve``; an image of high rate
  weighs more in the mean rate).

Points are sorted along the interpolated axis, non-finite and repeated values dropped (Akima needs a strictly
increasing abscissa). Curves whose ranges do not overlap have no delta: NaN, with the reason.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inr.experiments.rd_results import Curve
from inr.extras import require

# Akima: more accurate and stable than the CTC sheet's PCHIP and the original cubic fit (the bjontegaard package's
# README, after Herglotz et al. 2022, arXiv:2202.12565)
METHOD = "akima"


@dataclass(frozen=True)
class Delta:
    """A BD value (% for a rate, dB for a PSNR), or NaN and why; ``images``: how many images it averages."""

    value: float
    reason: str = ""
    images: int = 1


def _points(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) sorted by x, with non-finite pairs and repeated x dropped (the first of a repeat kept)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    first = np.concatenate([[True], np.diff(x) > 0]) if len(x) else np.zeros(0, bool)
    return x[first], y[first]


def _delta(anchor: Curve, test: Curve, kind: str) -> Delta:
    """BD-rate (``kind`` "rate") or BD-PSNR ("psnr") of two curves' ``bpp`` and ``psnr``."""
    bd = require("bjontegaard", extra="rd", what="BD-rates")
    rates = [np.asarray(c["bpp"], dtype=np.float64) for c in (anchor, test)]
    if any((r <= 0).any() for r in rates):
        return Delta(math.nan, "a rate of 0 bpp has no logarithm")
    along, other = ("psnr", "bpp") if kind == "rate" else ("bpp", "psnr")
    (xa, ya), (xt, yt) = (_points(c[along], c[other]) for c in (anchor, test))
    unit = "dB" if along == "psnr" else "bpp"
    if min(len(xa), len(xt)) < 2:
        return Delta(math.nan, f"fewer than 2 distinct {along} values on a curve")
    if min(xa[-1], xt[-1]) <= max(xa[0], xt[0]):
        return Delta(
            math.nan,
            f"{along} ranges [{xa[0]:.4g}, {xa[-1]:.4g}] and [{xt[0]:.4g}, {xt[-1]:.4g}] {unit} do not overlap",
        )
    function = bd.bd_rate if kind == "rate" else bd.bd_psnr
    rate_a, dist_a, rate_t, dist_t = (ya, xa, yt, xt) if kind == "rate" else (xa, ya, xt, yt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a partial overlap's warning: the delta is over the overlap, as documented
        value = function(rate_a, dist_a, rate_t, dist_t, method=METHOD, require_matching_points=False, min_overlap=0)
    return Delta(float(value))


def bd_rate(anchor: Curve, test: Curve) -> Delta:
    """BD-rate (%) of ``test`` against ``anchor`` ({"bpp": [...], "psnr": [...]} each) over their common PSNR range.

    Example:
        >>> anchor = {"bpp": [0.25, 0.5, 1.0, 2.0], "psnr": [28.0, 31.0, 34.0, 37.0]}
        >>> round(bd_rate(anchor, {"bpp": [0.2, 0.4, 0.8, 1.6], "psnr": anchor["psnr"]}).value, 6)
        -20.0
    """
    return _delta(anchor, test, "rate")


def bd_psnr(anchor: Curve, test: Curve) -> Delta:
    """BD-PSNR (dB) of ``test`` against ``anchor`` over their common log-rate range.

    Example:
        >>> anchor = {"bpp": [0.25, 0.5, 1.0, 2.0], "psnr": [28.0, 31.0, 34.0, 37.0]}
        >>> round(bd_psnr(anchor, {"bpp": anchor["bpp"], "psnr": [28.5, 31.5, 34.5, 37.5]}).value, 6)
        0.5
    """
    return _delta(anchor, test, "psnr")


def per_image(anchor: dict[str, Curve], test: dict[str, Curve], kind: str = "rate") -> Delta:
    """The mean over the images both codecs measured of each image's BD-rate (or BD-PSNR, ``kind`` "psnr"); the
    images without a delta are left out of the mean and named in the reason (NaN when none has one)."""
    names = [n for n in anchor if n in test]
    if not names:
        return Delta(math.nan, "no image measured by both codecs", 0)
    deltas = {n: _delta(anchor[n], test[n], kind) for n in names}
    kept = [d.value for d in deltas.values() if math.isfinite(d.value)]
    missing = "; ".join(f"{n}: {d.reason}" for n, d in deltas.items() if not math.isfinite(d.value))
    return Delta(float(np.mean(kept)) if kept else math.nan, missing, len(kept))


def mean_curves(anchor: Curve, test: Curve, kind: str = "rate") -> Delta:
    """The BD-rate (or BD-PSNR) of the two codecs' mean curves (CompressAI's convention)."""
    return _delta(anchor, test, kind)
