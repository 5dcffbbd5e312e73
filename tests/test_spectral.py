"""Tests of inr.spectral against numpy.fft, Parseval and closed forms (float64 unless stated)."""
import math

import numpy as np
import pytest
import torch

from inr.spectral import (
    BandPartition,
    band_edges,
    band_relative_error,
    grid_dft,
    grid_frequencies,
    radial_frequency,
    radial_power_spectrum,
    radial_spectra,
)

SHAPES = [(64,), (24, 33), (8, 10, 12)]  # 1D, 2D non-square with an odd axis, 3D


def numpy_radius(shape):
    ks = np.meshgrid(*[np.fft.fftfreq(n) * n for n in shape], indexing="ij")
    return np.sqrt(sum(k**2 for k in ks))


def numpy_masks(shape, edges):
    """Band masks from numpy, written independently of the torch bucketing: [e_b, e_{b+1}), last closed."""
    r = numpy_radius(shape)
    last = len(edges) - 2
    return [(r >= edges[b]) & ((r <= edges[b + 1]) if b == last else (r < edges[b + 1])) for b in range(last + 1)]


def numpy_band_errors(pred, target, edges):
    axes = tuple(range(1, pred.ndim))
    res = np.abs(np.fft.fftn(pred - target, axes=axes)) ** 2  # unnormalised: the scale cancels in the ratio
    tgt = np.abs(np.fft.fftn(target, axes=axes)) ** 2
    return np.array([np.sqrt(res[:, m].sum() / tgt[:, m].sum()) for m in numpy_masks(pred.shape[1:], edges)])


def grid_signal(shape, fn):
    """fn(*coords) on the [0,1)^d grid v = i/N, as a float64 (1, *shape) tensor."""
    axes = [torch.arange(n, dtype=torch.float64) / n for n in shape]
    return fn(*torch.meshgrid(*axes, indexing="ij"))[None]


@pytest.mark.parametrize("shape", SHAPES)
def test_dft_matches_numpy(shape):
    x = torch.randn(2, *shape, dtype=torch.float64)
    ref = np.fft.fftn(x.numpy(), axes=tuple(range(1, x.ndim))) / math.prod(shape)
    np.testing.assert_allclose(grid_dft(x).numpy(), ref, atol=1e-12)


@pytest.mark.parametrize("n", [1, 7, 8, 33])
def test_frequencies_are_cycles_per_unit(n):
    k = grid_frequencies((n,))[0].numpy()
    np.testing.assert_allclose(k, np.fft.fftfreq(n, d=1.0 / n), atol=1e-12)
    np.testing.assert_array_equal(k, np.round(k))


def test_radial_frequency_matches_numpy():
    np.testing.assert_allclose(radial_frequency((6, 9, 4)).numpy(), numpy_radius((6, 9, 4)), atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("spacing,max_frequency", [("linear", "nyquist"), ("log", "nyquist"), ("linear", "corner")])
def test_band_errors_match_numpy(shape, spacing, max_frequency):
    gen = torch.Generator().manual_seed(0)
    target = torch.randn(3, *shape, generator=gen, dtype=torch.float64)
    pred = target + 0.3 * torch.randn(3, *shape, generator=gen, dtype=torch.float64)
    errors, edges = band_relative_error(pred, target, num_bands=5, spacing=spacing, max_frequency=max_frequency)
    ref = numpy_band_errors(pred.numpy(), target.numpy(), edges.numpy())
    np.testing.assert_allclose(errors.numpy(), ref, rtol=1e-10)
    assert edges[0] == 0 and errors.shape == (5,) and edges.shape == (6,)


@pytest.mark.parametrize("shape", SHAPES)
def test_parseval(shape):
    x = torch.randn(2, *shape, dtype=torch.float64)
    bands = BandPartition(shape, num_bands=7, max_frequency="corner")
    # every bin is in a band up to the corner, so the band energies add up to mean |x|² per channel
    total = bands.sum(grid_dft(x).abs().square()).sum()
    torch.testing.assert_close(total, x.square().mean(dim=tuple(range(1, x.ndim))).sum(), rtol=1e-12, atol=0)
    assert int(bands.counts.sum()) == math.prod(shape)
    # and the pooled band error over all bins is the plain relative L2 error
    pred = x + torch.randn_like(x)
    bands1 = BandPartition(shape, num_bands=1, max_frequency="corner")
    res = bands1.sum(grid_dft(pred - x).abs().square())
    tgt = bands1.sum(grid_dft(x).abs().square())
    torch.testing.assert_close((res / tgt).sqrt()[0], (pred - x).norm() / x.norm(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(
    "shape,fn,radius",
    [
        ((64,), lambda x: torch.cos(2 * math.pi * 9 * x), 9.0),
        ((64, 64), lambda y, x: torch.cos(2 * math.pi * (3 * y + 4 * x)), 5.0),
        ((16, 16, 16), lambda z, y, x: torch.sin(2 * math.pi * (1 * z + 2 * y - 2 * x) + 0.3), 3.0),
    ],
)
def test_sinusoid_lands_in_its_band(shape, fn, radius, dtype):
    target = grid_signal(shape, fn).to(dtype)
    errors, edges = band_relative_error(torch.zeros_like(target), target, num_bands=8)
    band = int(np.searchsorted(edges.numpy(), radius, side="right")) - 1  # e_b ≤ |k| < e_{b+1}
    assert errors[band].item() == pytest.approx(1.0, abs=1e-5)  # predicting 0 leaves the whole band
    others = torch.ones(8, dtype=torch.bool)
    others[band] = False
    assert torch.isnan(errors[others]).all(), f"bands without target energy must be NaN, got {errors}"
    assert errors.dtype == dtype


def test_sinusoid_log_band():
    target = grid_signal((128,), lambda x: torch.sin(2 * math.pi * 10 * x))
    errors, edges = band_relative_error(0.5 * target, target, num_bands=12, spacing="log")
    band = int(np.searchsorted(edges.numpy(), 10.0, side="right")) - 1
    assert edges[band] <= 10 < edges[band + 1]
    assert errors[band].item() == pytest.approx(0.5, rel=1e-12)
    assert torch.isnan(errors).sum() == 11


def test_dc_is_in_band_zero():
    target = torch.full((1, 16, 16), 0.7, dtype=torch.float64)
    errors, _ = band_relative_error(target + 0.07, target, num_bands=4)
    assert errors[0].item() == pytest.approx(0.1, rel=1e-12)
    assert torch.isnan(errors[1:]).all()


def test_band_without_bins_is_nan():
    # log edges 16^{b/16} = 2^{b/4}: band [2^{1/4}, 2^{1/2}) holds no integer frequency of a 1D grid
    bands = BandPartition((32,), num_bands=16, spacing="log")
    assert bands.counts[1] == 0
    errors, _ = band_relative_error(torch.randn(1, 32), torch.randn(1, 32), num_bands=16, spacing="log")
    assert torch.isnan(errors[1]) and torch.isfinite(errors[0])


def test_phase_error_counts():
    # cos and sin have the same magnitude spectrum; the complex difference sees them apart:
    # c(cos) = (½, ½), c(sin) = (−i/2, i/2) at k = ∓3, so |Δc|² = ½ per bin and Δ = (1 / ½)^½ = √2
    cos = grid_signal((32,), lambda x: torch.cos(2 * math.pi * 3 * x))
    sin = grid_signal((32,), lambda x: torch.sin(2 * math.pi * 3 * x))
    errors, _ = band_relative_error(sin, cos, num_bands=2)
    assert errors[0].item() == pytest.approx(math.sqrt(2), rel=1e-12)


def test_channels_pooled_before_ratio():
    # channel 0 amplitude 1 predicted exactly, channel 1 amplitude 2 predicted as 0: Δ = (4 / (1 + 4))^½
    wave = grid_signal((16, 16), lambda y, x: torch.cos(2 * math.pi * 2 * x))[0]
    target = torch.stack([wave, 2 * wave])
    pred = torch.stack([wave, torch.zeros_like(wave)])
    errors, _ = band_relative_error(pred, target, num_bands=4)
    assert errors[1].item() == pytest.approx(math.sqrt(4 / 5), rel=1e-12)


def band_limited(shape, kmax, seed):
    """A random real signal whose Fourier coefficients vanish above |k| = kmax, sampled on ``shape``."""
    gen = torch.Generator().manual_seed(seed)
    freqs = [torch.arange(-kmax, kmax + 1, dtype=torch.float64)] * len(shape)
    ks = torch.stack(torch.meshgrid(*freqs, indexing="ij"), -1).reshape(-1, len(shape))  # (K, d)
    ks = ks[ks.norm(dim=1) <= kmax]
    amp, phase = torch.randn(len(ks), generator=gen, dtype=torch.float64), torch.rand(len(ks), generator=gen) * 6.3
    axes = [torch.arange(n, dtype=torch.float64) / n for n in shape]
    v = torch.stack(torch.meshgrid(*axes, indexing="ij"), -1)  # (*shape, d)
    return (amp * torch.cos(2 * math.pi * v @ ks.T + phase.double())).sum(-1)[None]  # (1, *shape)


@pytest.mark.parametrize("shapes", [[(32,), (96,)], [(24, 24), (48, 48)], [(14, 14, 14), (16, 16, 16)]])
def test_resolution_independent_for_band_limited_signals(shapes):
    # every grid holds the whole shell |k| ≤ 6 (N/2 > 6), so each band holds the same bins at both sizes
    results = []
    for shape in shapes:
        target, pred = band_limited(shape, 5, seed=1), band_limited(shape, 5, seed=2) * 0.2
        pred = target + pred
        errors, edges = band_relative_error(pred, target, num_bands=6, max_frequency=6.0)
        power, _ = radial_power_spectrum(target, num_bands=6, max_frequency=6.0)
        results.append((errors, edges, power))
    (e0, k0, p0), (e1, k1, p1) = results
    torch.testing.assert_close(k0, k1)
    # same bands, same coefficients: equal up to float64 rounding (and NaN in the same bands)
    torch.testing.assert_close(e0, e1, rtol=1e-9, atol=0, equal_nan=True)
    torch.testing.assert_close(p0, p1, rtol=1e-9, atol=1e-15, equal_nan=True)
    assert torch.isfinite(e0[:3]).all()


def test_radial_power_matches_numpy_annulus_mean():
    x = torch.randn(3, 20, 20, dtype=torch.float64)
    power, edges = radial_power_spectrum(x)
    assert len(power) == 10 and edges[-1] == 10
    spec = np.abs(np.fft.fftn(x.numpy(), axes=(1, 2)) / 400) ** 2
    ref = [spec[:, m].mean() for m in numpy_masks((20, 20), edges.numpy())]
    np.testing.assert_allclose(power.numpy(), ref, rtol=1e-12)


def test_radial_spectra_of_exact_prediction():
    target = torch.rand(1, 16, 16, dtype=torch.float64)
    out = radial_spectra(target, target)
    assert set(out) == {"target", "prediction", "residual", "edges"}
    torch.testing.assert_close(out["prediction"], out["target"])
    assert (out["residual"] == 0).all()


def test_bad_inputs():
    with pytest.raises(ValueError, match="spatial"):
        band_relative_error(torch.zeros(4), torch.zeros(4))
    with pytest.raises(ValueError, match="shapes differ"):
        band_relative_error(torch.zeros(1, 4), torch.zeros(1, 5))
    with pytest.raises(ValueError, match="spacing"):
        band_edges(4, 8.0, "cubic")
    with pytest.raises(ValueError, match="num_bands"):
        band_edges(0, 8.0)
    with pytest.raises(ValueError, match="max_frequency"):
        band_relative_error(torch.zeros(1, 4), torch.ones(1, 4), max_frequency="half")
