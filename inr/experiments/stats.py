"""Summaries of a measurement repeated over random seeds: the mean and its Student-t confidence interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats


def mean_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, int]:
    """(mean, half-width t_{(1+level)/2, n−1} · s / √n, n) over the finite values (NaNs, e.g. a threshold
    never reached, are left out and not counted); half-width NaN for n < 2.

    Example:
        >>> m, h, n = mean_interval([1.0, 2.0, 3.0, float("nan")])
        >>> round(m, 3), round(h, 3), n  # t_{0.975, 2} = 4.303, s = 1
        (2.0, 2.484, 3)
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return math.nan, math.nan, 0
    if n == 1:
        return float(v[0]), math.nan, 1
    half = float(stats.t.ppf((1 + level) / 2, n - 1) * v.std(ddof=1) / math.sqrt(n))
    return float(v.mean()), half, n


def format_interval(mean: float, half: float, digits: int = 3) -> str:
    """``mean ± half`` with ``digits`` significant digits (``mean`` alone when the half-width is NaN).

    Example:
        >>> format_interval(4.4321, 0.2049), format_interval(2.0, float("nan"))
        ('4.43 ± 0.205', '2')
    """
    if math.isnan(mean):
        return "–"
    if math.isnan(half):
        return f"{mean:.{digits}g}"
    return f"{mean:.{digits}g} ± {half:.{digits}g}"
