"""Upsampling in the frequency domain: closed forms against fft2 of the upsampled maps."""

import pytest
import torch
import torch.nn.functional as F

from inr.conv_decoders import copy_hit_rate, copy_locations, filter_response, upsample_spectrum
from inr.networks import zero_insertion

TOL = 1e-10  # float64 throughout


def rel(a, b):
    return float((a - b).abs().max() / a.abs().max())


@pytest.mark.parametrize("size, s", [((5, 7), 2), ((4, 6), 3), ((6, 3), 4)])
def test_zero_insertion_tiles_the_spectrum(size, s):
    """fft2(zero_insertion(x, s))[u, v] = fft2(x)[u mod H, v mod W], to 1e-10."""
    x = torch.randn(2, 3, *size, dtype=torch.float64)
    Y = torch.fft.fft2(zero_insertion(x, s))
    X = torch.fft.fft2(x)
    assert rel(Y, X.repeat(1, 1, s, s)) < TOL
    assert rel(Y, upsample_spectrum(X, s, "zero")) < TOL


@pytest.mark.parametrize("size, s", [((5, 7), 2), ((4, 6), 3)])
def test_nearest_is_zero_insertion_then_box_filter(size, s):
    """Nearest = zero insertion followed by the s×s box h = 1 on {0 … s−1}²: in space (circular sum of shifted
    copies) and in frequency (tile × H_box(u) H_box(v)), both to 1e-10."""
    x = torch.randn(2, 2, *size, dtype=torch.float64)
    nearest = F.interpolate(x, scale_factor=s, mode="nearest")
    z = zero_insertion(x, s)
    boxed = sum(torch.roll(z, (a, b), dims=(2, 3)) for a in range(s) for b in range(s))
    assert rel(nearest, boxed) < TOL
    assert rel(torch.fft.fft2(nearest), upsample_spectrum(torch.fft.fft2(x), s, "nearest")) < TOL


def test_nearest_removes_the_copies_of_dc():
    """The box response vanishes at (aH, bW), (a, b) ≠ (0, 0): a constant map has no copies after nearest."""
    size, s = (4, 6), 2
    response = filter_response((s * size[0], s * size[1]), s, "nearest")
    dc_copies = copy_locations(torch.tensor([[0, 0]]), size, s)[0, 1:]
    assert float(response[dc_copies[:, 0], dc_copies[:, 1]].abs().max()) < 1e-12
    assert abs(float(response[0, 0].real) - s * s) < 1e-12


def test_bilinear_closed_form_is_exact_for_a_periodic_border():
    """PyTorch's bilinear (align_corners=False) applied to the circularly padded map and cropped equals the
    triangle-filter closed form to 1e-10; with PyTorch's clamped border the deviation is reported."""
    size, s = (6, 8), 2
    x = torch.randn(1, 2, *size, dtype=torch.float64)
    padded = F.pad(x, (1, 1, 1, 1), mode="circular")
    periodic = F.interpolate(padded, scale_factor=s, mode="bilinear", align_corners=False)[:, :, s:-s, s:-s]
    predicted = upsample_spectrum(torch.fft.fft2(x), s, "bilinear")
    assert rel(torch.fft.fft2(periodic), predicted) < TOL
    clamped = torch.fft.fft2(F.interpolate(x, scale_factor=s, mode="bilinear", align_corners=False))
    print(f"bilinear with clamped border: relative spectral deviation {rel(clamped, predicted):.3g}")
    interior = F.interpolate(x, scale_factor=s, mode="bilinear", align_corners=False)[:, :, 1:-1, 1:-1]
    assert rel(interior, periodic[:, :, 1:-1, 1:-1]) < TOL  # the two differ only on the border samples


@pytest.mark.parametrize("mode", ["zero", "nearest"])
def test_strong_components_reappear_at_the_predicted_copies(mode):
    """A map of two cosines plus 1% noise: the 4·s² strongest output bins are exactly their predicted
    copies (for nearest the box weakens the copies far from DC, by ≈10× here, yet they stay far above the noise)."""
    torch.manual_seed(0)
    h, w, s = 16, 12, 2
    n0, n1 = torch.meshgrid(torch.arange(h, dtype=torch.float64), torch.arange(w, dtype=torch.float64), indexing="ij")
    x = sum(torch.cos(2 * torch.pi * (u * n0 / h + v * n1 / w)) for u, v in [(1, 2), (3, 1)])[None, None]
    x = x + 0.01 * torch.randn_like(x)
    up = zero_insertion(x, s) if mode == "zero" else F.interpolate(x, scale_factor=s, mode="nearest")
    freqs = torch.tensor([[1, 2], [h - 1, w - 2], [3, 1], [h - 3, w - 1]])  # each cosine has ± frequencies
    predicted = copy_locations(freqs, (h, w), s)
    assert copy_hit_rate(torch.fft.fft2(up), predicted) == 1.0
