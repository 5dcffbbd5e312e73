"""NeRF positional encoding against its closed form, column by column in float64 numpy."""

import numpy as np
import pytest
import torch

from inr.encoders import NeRFEncoding
from inr.errors import InputError


def closed_form(v, num_frequencies, include_input, centered):
    """[p, sin 2⁰πp, cos 2⁰πp, …] with blocks of d columns, p = 2v − 1 (centered) or v."""
    p = 2 * v - 1 if centered else v
    cols = [p] if include_input else []
    for k in range(num_frequencies):
        cols += [np.sin(2.0**k * np.pi * p), np.cos(2.0**k * np.pi * p)]
    return np.concatenate(cols, axis=-1)


@pytest.mark.parametrize("d,include_input,centered", [(1, True, True), (2, False, True), (3, True, False)])
def test_equals_closed_form(d, include_input, centered):
    v = torch.rand(100, d, dtype=torch.float64)
    enc = NeRFEncoding(in_dim=d, num_frequencies=6, include_input=include_input, centered=centered)
    out = enc(v)
    assert enc.out_dim == d * (12 + include_input) == out.shape[1]
    # float64 input: the π 2^k buffer is float32 (exact powers of two times float32 π), hence 1e-5
    np.testing.assert_allclose(out.numpy(), closed_form(v.numpy(), 6, include_input, centered), atol=1e-5, rtol=0)


def test_octave_k_has_2k_cycles_per_unit_when_centered():
    # sin 2^k π (2v − 1) on a grid v = i/N: its DFT peaks at bin 2^k
    n, enc = 64, NeRFEncoding(in_dim=1, num_frequencies=5, include_input=False)
    v = torch.arange(n, dtype=torch.float32)[:, None] / n
    out = enc(v).numpy()
    for k in range(5):
        spectrum = np.abs(np.fft.rfft(out[:, 2 * k]))  # the sine column of octave k
        assert spectrum.argmax() == 2**k


def test_leading_dims_and_float32_default():
    enc = NeRFEncoding(in_dim=3)  # NeRF's positions: L = 10 with the input, 63 features
    assert enc.out_dim == 63 and enc(torch.rand(2, 5, 3)).shape == (2, 5, 63)
    with pytest.raises(InputError, match="num_frequencies"):
        NeRFEncoding(in_dim=2, num_frequencies=0)
