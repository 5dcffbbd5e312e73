"""The range coder under a quantised Gaussian: exact round trips, a length within a few bits of the model's
ideal code length (computed here with scipy), and streams with extra words refused."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from inr.codec import entropy
from inr.errors import InputError


def ideal_bits(q: np.ndarray, bound: int, sigma: float) -> float:
    """−Σ log2 P(q) under N(0, σ²) integrated over unit bins, renormalised over −bound … bound (float64)."""
    edges = np.arange(-bound, bound + 2) - 0.5
    mass = np.diff(norm.cdf(edges / sigma))
    mass /= mass.sum()
    return float(-np.log2(mass[q + bound]).sum())


@pytest.mark.parametrize("bound, sigma", [(7, 1.5), (127, 20.0), (2047, 300.0)])
def test_round_trip_and_length_near_the_ideal(bound, sigma):
    rng = np.random.default_rng(bound)
    tensors = [np.clip(np.round(rng.normal(0, sigma, n)), -bound, bound).astype(np.int32) for n in (1, 300, 5000)]
    codes = [entropy.scale_code(t) for t in tensors]
    data = entropy.encode(tensors, bound, codes)
    back = entropy.decode(data, [t.size for t in tensors], bound, codes)
    assert all(np.array_equal(a, b) for a, b in zip(tensors, back))
    ideal = sum(ideal_bits(t, bound, entropy.scale_value(c)) for t, c in zip(tensors, codes))
    # constriction's fixed-point probabilities and the final word cost a little above the ideal
    assert ideal <= 8 * len(data) <= ideal * 1.01 + 64


def test_the_scale_is_the_nearest_grid_point_to_the_root_mean_square():
    q = np.array([3, -3, 3, -3])
    code = entropy.scale_code(q)
    assert abs(math.log2(entropy.scale_value(code)) - math.log2(3)) <= 0.5 / entropy.SCALE_PER_OCTAVE


def test_streams_with_extra_or_partial_words_are_refused():
    q = [np.array([1, 0, -2, 5], dtype=np.int32)]
    codes = [entropy.scale_code(q[0])]
    data = entropy.encode(q, 7, codes)
    with pytest.raises(InputError, match="more data than"):
        # two words: the decoder's state reads one word ahead, so a single appended word is left to the file's
        # declared length and CRC (tests/codec/test_file_faults.py)
        entropy.decode(data + bytes(range(1, 9)), [4], 7, codes)
    with pytest.raises(InputError, match="whole number"):
        entropy.decode(data + b"\x01", [4], 7, codes)
