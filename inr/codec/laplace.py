"""The latent codec's probabilities, in integers: a Laplace of mean μ = c + f/16 and scale b_s, integrated over unit
bins around the integers c − K … c + K, as exact integer tables that every machine computes alike.

    P(q = c + d) ∝ F(d + ½ − f/16) − F(d − ½ − f/16),   F(x) = ½·e^{x/b} (x < 0),  1 − ½·e^{−x/b} (x ≥ 0)

Every bin edge is a multiple of 1/16, so e^{−|x|/b} = ρ_s^n with ρ_s = e^{−1/(16·b_s)} and n = 16·|x| an integer:
the tables need ρ_s once per scale (computed with ``decimal``, software arithmetic, to 2^−30) and then only
integer products and shifts. The probabilities are integers (out of 2^30) that the range coder normalises itself
(constriction's ``Categorical``, which gives every symbol of −K … K a non-zero share); a float exp would let two
machines disagree on one bin and a file decode on one and fail on the other.

Scales: b_s = 2^((s − 32) / 8), s = 0 … 80 (2^−4 … 2^6, eight per octave); means: sixteen fractions f.
"""

from __future__ import annotations

import decimal
from functools import lru_cache

import numpy as np
import torch
from torch import Tensor

SCALES_PER_OCTAVE, SCALE_ZERO, SCALE_COUNT = 8, 32, 81  # s = 32: b = 1
MEAN_FRACTIONS = 16  # μ is coded to 1/16
PRECISION = 30  # fixed-point bits of the CDF tables
MIN_SCALE = 2.0 ** (-SCALE_ZERO / SCALES_PER_OCTAVE)
MAX_SCALE = 2.0 ** ((SCALE_COUNT - 1 - SCALE_ZERO) / SCALES_PER_OCTAVE)


def scale_value(s: int) -> float:
    """b_s = 2^((s − 32) / 8).

    Example:
        >>> scale_value(32), scale_value(40), scale_value(0)
        (1.0, 2.0, 0.0625)
    """
    return 2.0 ** ((s - SCALE_ZERO) / SCALES_PER_OCTAVE)


@lru_cache(maxsize=1)
def decay_per_sixteenth() -> np.ndarray:
    """ρ_s = e^{−1/(16·b_s)} in fixed point (× 2^30, rounded), for every scale s; int64 (S,)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        two = decimal.Decimal(2)
        out = []
        for s in range(SCALE_COUNT):
            b = two ** (decimal.Decimal(s - SCALE_ZERO) / SCALES_PER_OCTAVE)
            rho = (decimal.Decimal(-1) / (16 * b)).exp()
            out.append(int((rho * (1 << PRECISION)).to_integral_value(rounding=decimal.ROUND_HALF_EVEN)))
    return np.array(out, dtype=np.int64)


@lru_cache(maxsize=8)
def table(bound: int) -> np.ndarray:
    """P[s, f, d + K] for d = −K … K (K = ``bound``): the integer probabilities above; int64 (S, 16, 2K + 1).

    Example:
        >>> t = table(2)
        >>> t.shape, bool((t >= 0).all()), int(t[SCALE_ZERO, 0].argmax())  # μ = c: the most likely symbol is c
        ((81, 16, 5), True, 2)
    """
    one = 1 << PRECISION
    top = 16 * (bound + 1) + MEAN_FRACTIONS  # the largest n = 16·|edge| among the edges below
    rho = decay_per_sixteenth()  # (S,)
    powers = np.empty((SCALE_COUNT, top + 1), dtype=np.int64)  # ρ_s^n × 2^30, n = 0 … top, by exact products
    powers[:, 0] = one
    for n in range(1, top + 1):
        powers[:, n] = (powers[:, n - 1] * rho) >> PRECISION
    f = np.arange(MEAN_FRACTIONS)[:, None]  # (16, 1)
    edges = np.arange(-bound, bound + 2)[None, :]  # the lower edge of bin d is d − ½ − f/16: n = 16d − 8 − f
    n = 16 * edges - 8 - f  # (16, 2K + 2)
    half = powers[:, np.abs(n)] >> 1  # ½·ρ^|n|  (S, 16, 2K + 2)
    cdf = np.where(n[None] < 0, half, one - half)
    return np.diff(cdf, axis=-1)


def split_mean(mean_sixteenths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """μ in sixteenths (integers) -> (c, f) with μ = c + f/16, 0 ≤ f < 16 (floor division: the same for negatives).

    Example:
        >>> [a.tolist() for a in split_mean(np.array([35, -3]))]
        [[2, -1], [3, 13]]
    """
    return mean_sixteenths >> 4, mean_sixteenths & (MEAN_FRACTIONS - 1)


def bits(q: Tensor, mean: Tensor, scale: Tensor) -> Tensor:
    """−log2 P(q) per latent under the continuous model the tables discretise (training's rate, float):
    P(q) = F(q + ½ − μ) − F(q − ½ − μ) with b clamped to the tables' range and P floored at 2^−30.

    Example:
        >>> round(float(bits(torch.tensor(0.0), torch.tensor(0.0), torch.tensor(1.0))), 4)  # 1 − e^{−½}
        1.3457
    """
    b = scale.clamp(MIN_SCALE, MAX_SCALE)
    x = q - mean
    # the bin's probability from the side of the mean it lies on, so that no difference of two numbers near 1 is taken
    upper, lower = (x.abs() + 0.5) / b, (x.abs() - 0.5) / b
    inside = 1.0 - 0.5 * (torch.exp(-(0.5 - x.abs()).clamp(min=0) / b) + torch.exp(-upper))  # bin holds the mean
    outside = 0.5 * (torch.exp(-lower.clamp(min=0)) - torch.exp(-upper))
    p = torch.where(x.abs() < 0.5, inside, outside)
    return -torch.log2(p.clamp(min=2.0**-PRECISION))
