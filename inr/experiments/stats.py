"""Summaries of a measurement repeated over random seeds (the mean and its Student-t confidence interval), and the
test behind every called difference: the two-sided paired t-test at ``LEVEL``, with its false-call rate measured by
simulation where no difference exists (``python -m inr.experiments.false_calls`` prints it).

A paired difference d_i = a_i − b_i over n pairs is called when there are at least ``MIN_PAIRS`` and the t-test's
two-sided p, from t = mean / (s / √n) with n − 1 degrees of freedom, is below ``LEVEL`` (5 %); the rest of the rule
(the machine spread, one pair per signal against a seedless row, the verdict's line) is ``inr.experiments.runner``'s.
The t-test is chosen over the exact sign-flip permutation test because that test's smallest two-sided p over n pairs
is 1/2^(n−1) (0.25 at 3 pairs, 0.125 at 4, 0.0625 at 5): at 5 % it calls nothing below 6 pairs, where most of this
project's comparisons sit (3 seeds, 4 images); and because a page's mean ± std over n pairs is all it needs, so
summaries can be re-judged (``judge``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np
from scipy import stats

# the false-call rate every called difference is held to: two-sided, where no true difference exists
LEVEL = 0.05
# fewer paired runs than this give no spread to read a difference against
MIN_PAIRS = 3
# the noises the false-call rate is simulated under: no true difference, symmetric about it (the t-test's level holds
# for these), and one skewed (where it does not: docs/results.md gives the rates)
NOISES: dict[str, Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]] = {
    "normal": lambda rng, size: rng.standard_normal(size),
    "Student t, 2 df (heavy-tailed)": lambda rng, size: rng.standard_t(2, size),
    "Cauchy (heavier)": lambda rng, size: rng.standard_cauchy(size),
}
SKEWED: dict[str, Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]] = {
    "log-normal, centred (skewed)": lambda rng, size: rng.lognormal(0.0, 1.0, size) - math.exp(0.5),
}
PAIRS = (3, 4, 8, 24)


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


# --- the paired test ---------------------------------------------------------------------------------------
def paired_t(mean: float, std: float, n: int) -> float:
    """The two-sided p of the paired t-test from the differences' mean, sample standard deviation and count:
    2 · P(T_{n−1} > |mean| / (std / √n)); NaN below 2 pairs; with no spread at all, 0 for a non-zero mean, 1 for 0.

    Example:
        >>> round(paired_t(0.43, 0.85, 3), 3), round(paired_t(0.28, 0.26, 24), 7)  # t = 0.876 and 5.28
        (0.473, 2.36e-05)
        >>> paired_t(1.0, 0.0, 3), paired_t(0.0, 0.0, 3), math.isnan(paired_t(1.0, 0.5, 1))
        (0.0, 1.0, True)
    """
    if n < 2 or not (math.isfinite(mean) and math.isfinite(std)):
        return math.nan
    if std == 0:
        return 0.0 if mean != 0 else 1.0
    return float(2 * stats.t.sf(abs(mean) / (std / math.sqrt(n)), n - 1))


def paired_p(diffs: Sequence[float]) -> float:
    """``paired_t`` of the differences themselves (sample std, ddof 1).

    Example:
        >>> round(paired_p([0.1, 0.3, 0.2, 0.4]), 4)
        0.0305
    """
    d = np.asarray(diffs, dtype=np.float64)
    if len(d) < 2:
        return math.nan
    return paired_t(float(d.mean()), float(d.std(ddof=1)), len(d))


def smallest_sign_flip_p(n: int) -> float:
    """The smallest two-sided p the exact sign-flip permutation test can give over ``n`` pairs: every difference of
    one sign is 2 of the 2^n sign patterns, 1/2^(n−1).

    Example:
        >>> [smallest_sign_flip_p(n) for n in (3, 4, 5, 6)]
        [0.25, 0.125, 0.0625, 0.03125]
    """
    return 2.0 / 2.0**n


def false_call_rate(
    noise: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray],
    pairs: int,
    trials: int,
    seed: int = 0,
    level: float = LEVEL,
) -> tuple[float, float]:
    """The share of ``trials`` simulated comparisons of ``pairs`` paired differences drawn from ``noise`` (no true
    difference) that the t-test calls at ``level``, and the share the former rule (|mean| > its sample std) called.

    Example:
        >>> new, old = false_call_rate(NOISES["normal"], 3, 20_000)
        >>> new < 0.06, 0.2 < old < 0.25  # t-test: 5 %; |mean| > std over 3 pairs: P(|T_2| > √3) = 22 %
        (True, True)
    """
    rng = np.random.default_rng(seed)
    d = noise(rng, (trials, pairs))  # (trials, pairs)
    mean, std = d.mean(axis=1), d.std(axis=1, ddof=1)
    p = 2 * stats.t.sf(np.abs(mean) / (std / math.sqrt(pairs)), pairs - 1)
    return float(np.mean(p < level)), float(np.mean(np.abs(mean) > std))


def monte_carlo_tolerance(trials: int, level: float = LEVEL, sigmas: float = 4.0) -> float:
    """``sigmas`` standard errors of a rate ``level`` estimated from ``trials`` draws: √(level (1 − level) / trials).

    Example:
        >>> round(monte_carlo_tolerance(20_000), 4)
        0.0062
    """
    return sigmas * math.sqrt(level * (1 - level) / trials)


def rates_table(trials: int, seed: int, pairs: Sequence[int] = PAIRS) -> str:
    """The simulated false-call rates as a Markdown table: the t-test at ``LEVEL`` and the former rule, per noise
    and number of pairs, beside the smallest p the exact sign-flip test can reach."""
    lines = [
        "| noise (no true difference) | pairs | t-test at 5 % | former rule (mean beyond its std) | sign-flip test's smallest p |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, noise in {**NOISES, **SKEWED}.items():
        for n in pairs:
            new, old = false_call_rate(noise, n, trials, seed)
            lines.append(f"| {name} | {n} | {100 * new:.2f} % | {100 * old:.2f} % | {smallest_sign_flip_p(n):.3g} |")
    return "\n".join(lines)


def judge(
    mean: float, std: float, n: int, machine: Optional[float] = None, signals: Optional[int] = None, digits: int = 2
) -> str:
    """A page's difference, mean ± std over ``n`` pairs, judged by the rule (``runner.called``'s): the t-test's p and
    the verdict. ``signals``: the pairs are the seeds of that many signals (the same count each) against a row without
    seeds, which the rule takes as one pair per signal; a summary does not give those pairs' spread, but bounds it:
    Σ (d − mean)² over all pairs ≥ r · Σ (m_k − mean)² over the signals' means m_k (r seeds each), so their std is at
    most std · √((n − 1) / (r (K − 1))), and p at most the t-test's at that std.

    Example:
        >>> judge(0.43, 0.85, 3)
        '+0.43 ± 0.85 over 3 pairs: t-test p = 0.47: level'
        >>> judge(0.28, 0.26, 24, machine=0.73)
        '+0.28 ± 0.26 over 24 pairs: t-test p = 2.4e-05; machine spread 0.73: level (within the machine spread)'
        >>> judge(1.75, 0.58, 24, signals=8)  # 8 images × 3 seeds against bicubic interpolation
        '+1.75 ± 0.58 over 24 pairs, as 8 pairs (one per signal; std ≤ 0.61): t-test p ≤ 8.1e-05: called'
        >>> judge(0.55, 0.13, 3, signals=1)  # three seeds of one image against its interpolation
        '+0.55 ± 0.13 over 3 pairs, as 1 pair (one per signal): level (a difference needs 3 pairs)'
    """
    f = f".{digits}f"
    head, bound = f"{mean:+{f}} ± {std:{f}} over {n} pairs", ""
    if signals is not None and signals < n:
        seeds = n / signals
        if not seeds.is_integer():
            raise ValueError(f"{n} pairs are not the same number of seeds of {signals} signals")
        if signals < 2:
            return f"{head}, as {signals} pair (one per signal): level (a difference needs {MIN_PAIRS} pairs)"
        std = std * math.sqrt((n - 1) / (seeds * (signals - 1)))
        head, bound, n = f"{head}, as {signals} pairs (one per signal; std ≤ {std:{f}})", "≤ ", signals
    p = paired_t(mean, std, n)
    spread = f"; machine spread {machine:{f}}" if machine is not None else ""
    if n < MIN_PAIRS:
        verdict = f"level (a difference needs {MIN_PAIRS} pairs)"
    elif not p < LEVEL:
        verdict = "undecided from the summary (p is a bound)" if bound else "level"
    elif machine is not None and abs(mean) <= machine:
        verdict = "level (within the machine spread)"
    else:
        verdict = "called"
    return f"{head}: t-test p {bound or '= '}{p:.2g}{spread}: {verdict}"
