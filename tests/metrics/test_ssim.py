"""``ssim`` against independent references: the closed form of constant images, a float64 numpy/scipy
implementation of the documented formula (reflection padding, mean over every pixel), and scikit-image, whose map
agrees with that implementation wherever the window lies inside the image; and its one minimum size and
empty-set rule."""

import math

import numpy as np
import pytest
import torch
from scipy import ndimage
from skimage.metrics import structural_similarity

from inr.metrics import SSIM_MIN_SIDE, ssim

C1, C2 = 0.01**2, 0.03**2  # (K R)² for R = 1
HALF = 5  # the 11-tap window's half-width


def gaussian_window(dims: int) -> np.ndarray:
    """The normalised separable Gaussian window, σ = 1.5, 11 taps per axis."""
    x = np.arange(-HALF, HALF + 1, dtype=np.float64)
    g = np.exp(-0.5 * (x / 1.5) ** 2)
    g /= g.sum()
    window = g
    for _ in range(dims - 1):
        window = np.multiply.outer(window, g)
    return window


def reference_map(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The SSIM map of two single-channel grids, float64: moments under the window over the grid padded by
    (whole-sample) reflection, then the formula of the module docstring."""
    w = gaussian_window(x.ndim)
    moment = lambda a: ndimage.correlate(np.pad(a, HALF, mode="reflect"), w, mode="constant")[(slice(HALF, -HALF),) * a.ndim]
    mx, my = moment(x), moment(y)
    vx, vy = np.maximum(moment(x * x) - mx**2, 0), np.maximum(moment(y * y) - my**2, 0)
    cxy = moment(x * y) - mx * my
    return ((2 * mx * my + C1) * (2 * cxy + C2)) / ((mx**2 + my**2 + C1) * (vx + vy + C2))


def noisy_pair(shape, seed):
    gen = np.random.default_rng(seed)
    target = gen.random(shape)
    return np.clip(target + 0.1 * gen.standard_normal(shape), -0.2, 1.2), target  # unclipped to [0, 1] on purpose


@pytest.mark.parametrize("a, b", [(0.5, 0.25), (0.0, 1.0), (0.9, 0.9)])
@pytest.mark.parametrize("dims", [2, 3])
def test_constant_grids_score_the_closed_form(a, b, dims):
    """σ = 0 everywhere: SSIM = (2ab + C₁) / (a² + b² + C₁) (float64, within 1e-10: E[x²] − μ² leaves a rounding residue of the order 1e-16 beside C₂ ≈ 1e-3)."""
    shape = (1,) + (7,) * dims
    value = ssim(torch.full(shape, a, dtype=torch.float64), torch.full(shape, b, dtype=torch.float64), dims=dims)
    assert value == pytest.approx((2 * a * b + C1) / (a * a + b * b + C1), abs=1e-10)


@pytest.mark.parametrize("shape", [(16, 16), (23, 12), (6, 9)])
def test_images_equal_the_float64_reference(shape):
    pred, target = noisy_pair((3, *shape), 0)
    expected = np.mean([reference_map(p, t).mean() for p, t in zip(pred, target)])
    assert ssim(torch.from_numpy(pred), torch.from_numpy(target)) == pytest.approx(expected, abs=1e-10)
    # a float32 caller gets the float64 score of its values
    got32 = ssim(torch.from_numpy(pred).float(), torch.from_numpy(target).float())
    assert got32 == pytest.approx(ssim(torch.from_numpy(pred).float().double(), torch.from_numpy(target).float().double()), abs=0)


def test_volumes_equal_the_float64_reference():
    pred, target = noisy_pair((2, 9, 12, 10), 1)
    expected = np.mean([reference_map(p, t).mean() for p, t in zip(pred, target)])
    assert ssim(torch.from_numpy(pred), torch.from_numpy(target), dims=3) == pytest.approx(expected, abs=1e-10)


def test_the_reference_map_is_scikit_image_s_where_the_window_lies_inside():
    """scikit-image (Gaussian window σ = 1.5, population covariance) crops the border it pads; inside, where no
    padding is read, its map and the reference's agree to 1e-10."""
    pred, target = noisy_pair((40, 33), 2)
    _, skimage_map = structural_similarity(
        pred, target, data_range=1.0, gaussian_weights=True, sigma=1.5, use_sample_covariance=False, full=True
    )
    inside = (slice(HALF, -HALF),) * 2
    np.testing.assert_allclose(reference_map(pred, target)[inside], skimage_map[inside], rtol=0, atol=1e-10)


def test_a_batch_scores_the_mean_of_its_images():
    pred, target = (torch.from_numpy(a) for a in noisy_pair((4, 3, 12, 12), 3))  # (T, C, H, W)
    alone = [ssim(p, t) for p, t in zip(pred, target)]
    assert ssim(pred, target) == pytest.approx(float(np.mean(alone)), abs=1e-12)


def test_predictions_are_scored_unclipped():
    pred, target = (torch.from_numpy(a) for a in noisy_pair((1, 16, 16), 4))
    assert pred.max() > 1 and ssim(pred, target) != ssim(pred.clamp(0, 1), target)


def test_one_minimum_size_and_one_empty_set_rule():
    big, small = torch.rand(1, SSIM_MIN_SIDE, SSIM_MIN_SIDE), torch.rand(1, SSIM_MIN_SIDE - 1, 12)
    assert math.isfinite(ssim(big, big.flip(-1)))
    with pytest.warns(UserWarning, match=r"val/ssim: SSIM needs at least 6×6 pixels and this grid is 5×12"):
        assert ssim(small, small, name="val/ssim") is None
    with pytest.warns(UserWarning, match=r"SSIM needs at least 6×6×6 voxels and this grid is 6×5×8"):
        assert ssim(torch.rand(1, 6, 5, 8), torch.rand(1, 6, 5, 8), dims=3) is None
    with pytest.warns(UserWarning, match=r"this grid is 8×8"):
        assert ssim(torch.rand(0, 3, 8, 8), torch.rand(0, 3, 8, 8)) is None  # no image at all
    with pytest.raises(ValueError, match="differ in shape"):
        ssim(torch.rand(1, 8, 8), torch.rand(1, 8, 9))
