"""Per-band errors of patch sets against numpy.fft, the copy bins, and the classical reconstructions."""

import math

import numpy as np
import torch

from inr.experiments.conv.patch_metrics import (
    band_groups,
    bins_relative_error,
    copy_bins,
    mean_reconstruct,
    patch_band_errors,
    pca_basis,
    pca_reconstruct,
    resample_reconstruct,
)


def numpy_band_errors(pred, target, edges):
    """Reference: numpy.fft.fft2 per patch, |k| from numpy.fft.fftfreq in cycles per patch, energies pooled;
    DC alone, then the bands without it (the first from |k| > 0)."""
    p = target.shape[-1]
    k = np.fft.fftfreq(p) * p
    radius = np.sqrt(k[:, None] ** 2 + k[None, :] ** 2)
    R = np.abs(np.fft.fft2(pred - target)) ** 2
    T = np.abs(np.fft.fft2(target)) ** 2
    dc = math.sqrt(R[..., 0, 0].sum() / T[..., 0, 0].sum())
    out = []
    for b, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        last = b == len(edges) - 2
        mask = (radius > 0) & ((radius >= lo) if b else True) & ((radius <= hi) if last else (radius < hi))
        out.append(math.sqrt(R[..., mask].sum() / T[..., mask].sum()))
    return dc, np.array(out)


def test_band_errors_match_numpy_fft():
    """To 1e-10 relative (float64), 16×16 patches, two channels; DC apart, first band from the lowest bins."""
    g = torch.Generator().manual_seed(0)
    target = torch.rand(6, 2, 16, 16, generator=g, dtype=torch.float64)
    pred = target + 0.1 * torch.randn(6, 2, 16, 16, generator=g, dtype=torch.float64)
    edges = [1.0, 2.5, 5.0, 8.0]
    dc, bands = patch_band_errors(pred, target, torch.tensor(edges))
    dc_ref, bands_ref = numpy_band_errors(pred.numpy(), target.numpy(), edges)
    assert abs(float(dc) - dc_ref) < 1e-10 * dc_ref
    np.testing.assert_allclose(bands.numpy(), bands_ref, rtol=1e-10)


def test_patch_mean_is_exact_at_dc_and_learns_nothing_else():
    x = torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    dc, errors = patch_band_errors(mean_reconstruct(x), x, torch.arange(1.0, 5.0))
    assert abs(float(dc)) < 1e-12 and len(errors) == 3 and torch.allclose(errors, torch.ones(3, dtype=torch.float64), atol=1e-12)
    assert band_groups([1, 2.5, 4]) == ["1–2.5", "2.5–4"]


def test_copy_bins_and_their_error_against_numpy():
    bins = copy_bins(16, 4)
    assert len(bins) == 15 and {tuple(b) for b in bins.tolist()} == {(4 * a, 4 * b) for a in range(4) for b in range(4)} - {
        (0, 0)
    }
    g = torch.Generator().manual_seed(3)
    target = torch.rand(3, 1, 16, 16, generator=g, dtype=torch.float64)
    pred = target + torch.randn(3, 1, 16, 16, generator=g, dtype=torch.float64)
    R = np.abs(np.fft.fft2((pred - target).numpy())) ** 2
    T = np.abs(np.fft.fft2(target.numpy())) ** 2
    rows, cols = bins[:, 0].numpy(), bins[:, 1].numpy()
    expected = math.sqrt(R[..., rows, cols].sum() / T[..., rows, cols].sum())
    assert abs(bins_relative_error(pred, target, bins) - expected) < 1e-12 * expected


def test_pca_reconstruction_is_the_projection_on_the_top_singular_vectors():
    """Against numpy.linalg.svd of the centred data (1e-8), and exact with every component."""
    g = torch.Generator().manual_seed(4)
    train = torch.randn(300, 1, 4, 4, generator=g, dtype=torch.float64) * torch.linspace(0.1, 2, 16, dtype=torch.float64).reshape(
        1, 1, 4, 4
    )
    test = torch.randn(20, 1, 4, 4, generator=g, dtype=torch.float64)
    mean, basis = pca_basis(train)
    x = train.reshape(300, -1).numpy()
    _, _, vt = np.linalg.svd(x - x.mean(0), full_matrices=False)
    v = vt[:5].T
    flat = test.reshape(20, -1).numpy() - x.mean(0)
    expected = flat @ v @ v.T + x.mean(0)
    np.testing.assert_allclose(pca_reconstruct(test, mean, basis, 5).reshape(20, -1).numpy(), expected, atol=1e-8)
    assert float((pca_reconstruct(test, mean, basis, 16) - test).abs().max()) < 1e-10


def test_resampling_keeps_constants_and_downsamples_by_block_means():
    """A constant patch comes back exactly; a patch constant on 2×2 blocks comes back from its block means
    exactly at the block centres' average (area ↓2 is the block mean, numpy reference)."""
    const = torch.full((2, 1, 8, 8), 0.3)
    for mode in ("bilinear", "bicubic"):
        assert float((resample_reconstruct(const, 2, mode) - const).abs().max()) < 1e-6
    x = torch.rand(1, 1, 8, 8, generator=torch.Generator().manual_seed(5))
    small = torch.nn.functional.interpolate(x, scale_factor=0.5, mode="area")
    np.testing.assert_allclose(small[0, 0].numpy(), x[0, 0].numpy().reshape(4, 2, 4, 2).mean((1, 3)), rtol=1e-6)
