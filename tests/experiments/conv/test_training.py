"""Training probes: the modulated target's spectrum, the fit record, and copy energy after upsampling."""

import math

import pytest
import torch

from inr.conv_decoders import copy_energy_fraction, copy_locations, signed_index
from inr.experiments.conv.training import first_below, fit, modulate
from inr.networks import ConvDecoder, zero_insertion


def test_modulation_shifts_the_spectrum_by_plus_and_minus_delta():
    """fft2(x cos(2πΔn₁/W)) = (X[:, v − Δ] + X[:, v + Δ]) / 2, to 1e-10 (float64)."""
    x = torch.randn(2, 6, 10, dtype=torch.float64)
    X = torch.fft.fft2(x)
    for shift in (0, 1, 3, 5):
        expected = (X.roll(shift, -1) + X.roll(-shift, -1)) / 2
        assert float((torch.fft.fft2(modulate(x, shift)) - expected).abs().max() / X.abs().max()) < 1e-10


def test_fit_records_errors_distance_and_threshold():
    torch.manual_seed(0)
    net = ConvDecoder(1, 1, width=4, depth=2)
    x = torch.randn(1, 1, 8, 8)
    target = torch.randn(1, 8, 8) * 0.1
    out = fit(net, lambda n: n(x)[0], target, steps=40, lr=1e-2, every=10, num_bands=4, threshold=0.9)
    assert out["steps"].tolist() == [0, 10, 20, 30, 40]
    assert out["band_errors"].shape == (5, 4) and out["band_edges"].shape == (5,)
    # the DC error, kept out of the bands: |mean(f − y)| / |mean(y)| of the final field (measured after the last step)
    with torch.no_grad():
        final = net(x)[0]
    assert out["dc_errors"].shape == (5,)
    assert float(out["dc_errors"][-1]) == pytest.approx(float((final - target).mean().abs() / target.mean().abs()), rel=1e-4)
    assert out["distance"][0] == 0 and bool((out["distance"][1:] > 0).all())
    assert out["rel_error"][-1] < out["rel_error"][0]
    hit = float(out["hit_step"])
    assert math.isnan(hit) or float(out["rel_error"][out["steps"].tolist().index(int(hit))]) < 0.9


def test_first_below():
    errors = torch.tensor([[1.0, 1.0, 1.0], [0.4, 1.0, 0.9], [0.3, 0.2, 0.8]])
    first = first_below(errors, torch.tensor([0, 10, 20]), 0.5)
    assert first[:2].tolist() == [10.0, 20.0] and math.isnan(float(first[2]))


def test_all_out_of_band_energy_of_zero_insertion_sits_on_the_copies():
    """One cosine, zero-inserted by 2: every bin beyond the input band is a copy, energy share exactly 1."""
    n = torch.arange(8, dtype=torch.float64)
    x = torch.cos(2 * math.pi * (2 * n[:, None] / 8 + 1 * n[None, :] / 8))[None, None]
    spectrum = torch.fft.fft2(zero_insertion(x, 2))
    predicted = copy_locations(torch.tensor([[2, 1], [6, 7]]), (8, 8), 2)
    energy, bins = copy_energy_fraction(spectrum, predicted, (8, 8))
    assert abs(energy - 1.0) < 1e-12 and 0 < bins < 0.05
    assert signed_index(5).tolist() == [0, 1, 2, -2, -1]


def test_best_filter_error_closed_forms():
    """r = 0 is a gain and an offset: simple linear regression (numpy.polyfit, 1e-9); a target made by a
    3×3 circular conv plus a constant is fitted exactly with r = 1 (< 1e-9) and not with r = 0; a kernel
    covering the whole 7×7 grid is any circulant, so any y is fitted (< 1e-9)."""
    import numpy as np

    from inr.experiments.conv.training import best_filter_error

    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 7, 7, generator=g, dtype=torch.float64)
    y = torch.randn(1, 7, 7, generator=g, dtype=torch.float64)
    a, c = np.polyfit(x.flatten().numpy(), y.flatten().numpy(), 1)
    expected = np.linalg.norm(y.flatten().numpy() - a * x.flatten().numpy() - c) / np.linalg.norm(y.numpy())
    assert abs(best_filter_error(x, y, radius=0) - expected) < 1e-9
    w = torch.randn(1, 1, 3, 3, generator=g, dtype=torch.float64)
    conv = torch.nn.functional.conv2d(torch.nn.functional.pad(x[None], (1, 1, 1, 1), mode="circular"), w)[0] + 0.7
    assert best_filter_error(x, conv, radius=1) < 1e-9 and best_filter_error(x, conv, radius=0) > 0.1
    assert best_filter_error(x, y, radius=3) < 1e-9


def test_shifted_targets_are_out_of_reach_of_small_linear_filters():
    """The floor of a 9×9 filter on a smooth image is far above 0 for Δ ≠ 0 and 0 for Δ = 0; Δ = W/2
    is the Nyquist shift, where modulation is multiplication by (−1)^n."""
    from inr.experiments.conv.training import best_filter_error

    n = torch.arange(16, dtype=torch.float64)
    x = (1 + torch.cos(2 * math.pi * n[:, None] / 16) * torch.sin(2 * math.pi * 2 * n[None, :] / 16))[None]
    assert best_filter_error(x, modulate(x, 0), radius=4) < 1e-9
    assert torch.allclose(modulate(x, 8), x * (-1.0) ** n, atol=1e-12)
    for shift in (1, 3, 8):
        assert best_filter_error(x, modulate(x, shift), radius=4) > 0.5
