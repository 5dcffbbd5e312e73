"""Gain maps and their expectation over initialisations: closed form vs Monte-Carlo, and the low-pass claim."""

import math

import torch

from inr.conv_decoders import (
    band_ratio,
    conv_transfer,
    expected_frobenius_gain,
    expected_gain,
    gain_map,
    power_gain,
    radial_bins,
    radial_profile,
    random_cascade,
)
from inr.networks import ConvDecoder


def test_radial_bins_partition_the_disc():
    """Every frequency with r ≤ ½ is in exactly one band; the corners beyond ½ are in none."""
    mask, edges = radial_bins((12, 9), num_bins=5)
    counts = mask.sum(0)
    assert set(counts.tolist()) <= {0.0, 1.0}
    assert len(edges) == 6 and float(mask.sum()) < 12 * 9  # corners excluded


def test_depth_one_closed_form():
    """Depth 1: E‖Ŵ(u,v)‖_F² = C_out C_in (μ² D_H(u)² D_W(v)² + σ² k²), checked at DC and Nyquist by hand."""
    mu, sigma, k, c = 0.1, 0.2, 3, 4
    g = expected_frobenius_gain((8, 8), 1, channels=c, kernel_size=k, mean=mu, std=sigma)
    assert math.isclose(float(g[0, 0]), c * c * (mu**2 * k**4 + sigma**2 * k**2), rel_tol=1e-12)
    # D(4) on n = 8 with k = 3: 1 + 2 cos(π) = −1, so D_H D_W = 1 at (4, 4)
    assert math.isclose(float(g[4, 4]), c * c * (mu**2 + sigma**2 * k**2), rel_tol=1e-12)


def test_expected_frobenius_gain_matches_monte_carlo():
    """Closed-form E‖T‖_F² vs the mean of ‖T‖_F² over 300 random cascades, per radial band: within 5
    standard errors of the Monte-Carlo mean (depth 3, channels 3-4-2-3, kernels 3/5/1, μ = 0.05)."""
    size, depth, chans, kernels, mu = (10, 8), 3, [3, 4, 2, 3], [3, 5, 1], 0.05
    samples = []
    for seed in range(300):
        w = random_cascade(depth, chans, kernels, mean=mu, generator=torch.Generator().manual_seed(seed))
        samples.append(gain_map(conv_transfer(w, size), "frobenius") ** 2)
    stack = torch.stack(samples)  # (S, H, W)
    per_seed, _ = radial_profile(stack, num_bins=5)  # (S, bands)
    mc, sem = per_seed.mean(0), per_seed.std(0) / math.sqrt(len(samples))
    exact, _ = radial_profile(expected_frobenius_gain(size, depth, chans, kernels, mean=mu), num_bins=5)
    assert bool(((mc - exact).abs() < 5 * sem).all()), (mc, exact, sem)


def test_zero_mean_weights_have_a_flat_expected_power_gain():
    """μ = 0: E‖T(u,v)‖_F² is the same at every frequency (exactly, from the closed form)."""
    g = expected_frobenius_gain((9, 12), 4, channels=5, kernel_size=[3, 5, 7, 1], mean=0.0)
    assert float((g - g[0, 0]).abs().max() / g[0, 0]) < 1e-12


def test_nonzero_mean_weakens_high_frequencies_more_with_depth():
    """μ = 0.1, LeCun std (≈0.12 for C = 8, k = 3), 16×16 maps, spectral-norm gain, 24 seeds per depth.

    Per seed r_L = log(gain of the lowest band / gain of the highest band). Asserted: r_1 > 0 by more than
    4 standard errors, and r_1 < r_2 < r_4, each step by more than 4 combined standard errors.
    """
    stats = {}
    for depth in (1, 2, 4):
        ratios = []
        for seed in range(24):
            w = random_cascade(depth, 8, 3, mean=0.1, generator=torch.Generator().manual_seed(1000 * depth + seed))
            profile, _ = radial_profile(gain_map(conv_transfer(w, (16, 16))), num_bins=8)
            ratios.append(torch.log(band_ratio(profile)))
        r = torch.stack(ratios)
        stats[depth] = (float(r.mean()), float(r.std() / math.sqrt(len(r))))
    print("log low/high gain ratio (mean, sem) by depth:", stats)
    assert stats[1][0] > 4 * stats[1][1]
    for a, b in ((1, 2), (2, 4)):
        assert stats[b][0] - stats[a][0] > 4 * math.hypot(stats[a][1], stats[b][1])


def test_expected_gain_returns_mean_and_standard_error():
    mean, sem = expected_gain((8, 8), depth=2, channels=3, mean=0.1, seeds=6)
    assert mean.shape == sem.shape == (8, 8) and bool((sem > 0).all())
    assert float(mean[0, 0]) > float(mean[4, 4])  # DC above Nyquist already for 6 seeds at μ = 0.1


def test_power_gain_of_white_noise_is_the_frobenius_norm():
    """For a linear circular decoder, the measured power gain of white noise (512 inputs) averaged over
    each radial band is ‖T‖_F² averaged over that band, within 10% (per bin the estimate has ≈4% noise)."""
    net = ConvDecoder(2, 3, width=4, depth=3, relu=False, weight_mean=0.05).double()
    size = (12, 12)
    measured, _ = radial_profile(power_gain(net, size, 2, inputs=512, generator=torch.Generator().manual_seed(0)), 4)
    exact, _ = radial_profile(gain_map(conv_transfer([c.weight.detach() for c in net.convs()], size), "frobenius") ** 2, 4)
    assert bool(((measured - exact).abs() < 0.1 * exact).all()), (measured, exact)
