"""Tests of inr.spectral against numpy.fft, Parseval and closed forms (float64 unless stated)."""

import math

import numpy as np
import pytest
import torch

from inr.data.image import DEFAULT_IMAGE, read_image, resize_image
from inr.spectral import (
    BandPartition,
    aliased_energy_fraction,
    band_edges,
    band_relative_error,
    dc_energies,
    dc_relative_error,
    grid_dft,
    grid_frequencies,
    radial_frequency,
    radial_power_spectrum,
    radial_spectra,
    spectral_summary,
)

SHAPES = [(64,), (24, 33), (8, 10, 12)]  # 1D, 2D non-square with an odd axis, 3D


def numpy_radius(shape):
    ks = np.meshgrid(*[np.fft.fftfreq(n) * n for n in shape], indexing="ij")
    return np.sqrt(sum(k**2 for k in ks))


def numpy_masks(shape, edges):
    """Band masks from numpy, written independently of the torch bucketing: [e_b, e_{b+1}), last closed,
    the DC bin (r = 0) in none of them."""
    r = numpy_radius(shape)
    last = len(edges) - 2
    return [(r > 0) & (r >= edges[b]) & ((r <= edges[b + 1]) if b == last else (r < edges[b + 1])) for b in range(last + 1)]


def numpy_band_errors(pred, target, edges):
    axes = tuple(range(1, pred.ndim))
    res = np.abs(np.fft.fftn(pred - target, axes=axes)) ** 2  # unnormalised: the scale cancels in the ratio
    tgt = np.abs(np.fft.fftn(target, axes=axes)) ** 2
    with np.errstate(invalid="ignore"):  # a band without bins is 0/0 = NaN, as in the module
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
    # every bin but DC is in a band up to the corner, so band energies + DC add up to mean |x|² per channel
    _, dc = dc_energies(x, x)
    total = bands.sum(grid_dft(x).abs().square()).sum() + dc
    torch.testing.assert_close(total, x.square().mean(dim=tuple(range(1, x.ndim))).sum(), rtol=1e-12, atol=0)
    assert int(bands.counts.sum()) == math.prod(shape) - 1
    # and the pooled band error over all bins but DC is the relative L2 error of the mean-free signals
    pred = x + torch.randn_like(x)
    bands1 = BandPartition(shape, num_bands=1, max_frequency="corner")
    res = bands1.sum(grid_dft(pred - x).abs().square())
    tgt = bands1.sum(grid_dft(x).abs().square())
    axes = tuple(range(1, x.ndim))
    centred = lambda t: t - t.mean(dim=axes, keepdim=True)  # noqa: E731
    ref = (centred(pred) - centred(x)).norm() / centred(x).norm()
    torch.testing.assert_close((res / tgt).sqrt()[0], ref, rtol=1e-12, atol=0)


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


def test_dc_is_apart_from_the_bands():
    target = torch.full((1, 16, 16), 0.7, dtype=torch.float64)
    errors, _ = band_relative_error(target + 0.07, target, num_bands=4)
    assert torch.isnan(errors).all()  # a constant has no energy in any band
    assert dc_relative_error(target + 0.07, target).item() == pytest.approx(0.1, rel=1e-12)
    assert BandPartition((16, 16), num_bands=4).assignment[0] == 4  # the DC bin belongs to no band


@pytest.mark.parametrize("source", ["noise", "image"])
def test_prediction_of_the_mean_has_learned_no_band(source):
    # a constant equal to the target's mean (per channel): Δ = 1 in every band, 0 at DC, low = high = all = 1
    if source == "noise":
        target = torch.rand(3, 24, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    else:
        target = resize_image(read_image(DEFAULT_IMAGE), 64).permute(2, 0, 1).double()  # (H, W, 3) -> (3, H, W)
    pred = target.mean(dim=(1, 2), keepdim=True).expand_as(target)
    for spacing in ("linear", "log"):
        s = spectral_summary(pred, target, num_bands=8, spacing=spacing)
        finite = s["errors"][torch.isfinite(s["errors"])]
        assert len(finite) >= 6
        torch.testing.assert_close(finite, torch.ones_like(finite), rtol=1e-12, atol=0)
        assert abs(float(s["dc"])) < 1e-12
        for key in ("low", "high", "all"):
            assert float(s[key]) == pytest.approx(1.0, rel=1e-12), key
    # and the DC error of a wrong mean against numpy.fft's bin 0, channels pooled
    shifted = pred + torch.tensor([0.1, -0.2, 0.05], dtype=torch.float64)[:, None, None]
    c0 = np.fft.fft2(target.numpy())[:, 0, 0] / target[0].numel()
    r0 = np.fft.fft2((shifted - target).numpy())[:, 0, 0] / target[0].numel()
    ref = np.sqrt((np.abs(r0) ** 2).sum() / (np.abs(c0) ** 2).sum())
    assert dc_relative_error(shifted, target).item() == pytest.approx(ref, rel=1e-12)


def test_summary_agrees_with_band_errors_and_pools_energies():
    gen = torch.Generator().manual_seed(3)
    target = torch.randn(2, 30, 30, generator=gen, dtype=torch.float64) + 1.0
    pred = target + 0.2 * torch.randn(2, 30, 30, generator=gen, dtype=torch.float64)
    s = spectral_summary(pred, target, num_bands=6)
    errors, edges = band_relative_error(pred, target, num_bands=6)
    torch.testing.assert_close(s["errors"], errors, rtol=0, atol=0)
    torch.testing.assert_close(s["edges"], edges)
    masks = numpy_masks((30, 30), edges.numpy())
    res = np.abs(np.fft.fft2((pred - target).numpy())) ** 2
    tgt = np.abs(np.fft.fft2(target.numpy())) ** 2
    pooled = lambda ms: np.sqrt(sum(res[:, m].sum() for m in ms) / sum(tgt[:, m].sum() for m in ms))  # noqa: E731
    assert float(s["low"]) == pytest.approx(pooled(masks[:3]), rel=1e-10)
    assert float(s["high"]) == pytest.approx(pooled(masks[3:]), rel=1e-10)
    assert float(s["all"]) == pytest.approx(pooled(masks), rel=1e-10)


@pytest.mark.parametrize("shape,step", [((64, 64), 2), ((48, 40), 2), ((36,), 3), ((12, 12, 16), 2)])
def test_aliased_energy_fraction_matches_numpy(shape, step):
    x = torch.rand(2, *shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    power = (np.abs(np.fft.fftn(x.numpy(), axes=tuple(range(1, x.ndim)))) ** 2).sum(0)
    ks = np.meshgrid(*[np.abs(np.fft.fftfreq(n) * n) for n in shape], indexing="ij")
    outside = np.zeros(shape, dtype=bool)
    for k, n in zip(ks, shape):
        outside |= k >= n / (2 * step)
    power.flat[0] = 0.0
    assert aliased_energy_fraction(x, step) == pytest.approx(power[outside].sum() / power.sum(), rel=1e-10)
    # a signal sampled finely enough for the subsampled grid has none; a frequency above its Nyquist is all
    v = torch.arange(shape[0], dtype=torch.float64) / shape[0]
    low = torch.cos(2 * math.pi * 2 * v)[None]
    high = torch.cos(2 * math.pi * (shape[0] // (2 * step) + 1) * v)[None]
    assert aliased_energy_fraction(low, step) == pytest.approx(0.0, abs=1e-20) and aliased_energy_fraction(
        high, step
    ) == pytest.approx(1.0)


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
    assert torch.isnan(e0[0]) and torch.isfinite(e0[1:4]).all()  # band 0 = [0, 1) would hold DC only


def test_radial_power_matches_numpy_annulus_mean():
    x = torch.randn(3, 20, 20, dtype=torch.float64)
    power, edges = radial_power_spectrum(x)
    assert len(power) == 10 and edges[-1] == 10
    spec = np.abs(np.fft.fftn(x.numpy(), axes=(1, 2)) / 400) ** 2
    masks = numpy_masks((20, 20), edges.numpy())
    assert not masks[0].any() and torch.isnan(power[0])  # [0, 1) would hold DC alone: an empty band
    ref = [spec[:, m].mean() for m in masks[1:]]
    np.testing.assert_allclose(power[1:].numpy(), ref, rtol=1e-12)


def test_radial_spectra_of_exact_prediction():
    target = torch.rand(1, 16, 16, dtype=torch.float64)
    out = radial_spectra(target, target)
    assert set(out) == {"target", "prediction", "residual", "edges"}
    torch.testing.assert_close(out["prediction"], out["target"], equal_nan=True)
    assert (out["residual"][1:] == 0).all() and torch.isnan(out["residual"][0])


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
