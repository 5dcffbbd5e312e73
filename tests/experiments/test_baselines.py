"""Interpolation baselines against closed forms and an independent numpy filter; the rows they produce."""

import math

import numpy as np
import pytest
import torch

from inr.data import ImageDataModule
from inr.experiments.baselines import BASELINES, baseline_rows, constant_mean, interpolate_every_other, main, score_prediction

# Keys' cubic kernel, W(x) = (a+2)|x|³ − (a+3)|x|² + 1 on |x| ≤ 1 and a(|x|³ − 5|x|² + 8|x| − 4) on 1 < |x| < 2,
# with PyTorch's a = −0.75, at the half-pixel offsets ±0.5 and ±1.5 of a held-out pixel from its neighbours
A = -0.75
W_HALF = (A + 2) * 0.125 - (A + 3) * 0.25 + 1
W_THREE_HALVES = A * (3.375 - 5 * 2.25 + 8 * 1.5 - 4)
KEYS_HALF = np.array([W_THREE_HALVES, W_HALF, W_HALF, W_THREE_HALVES])  # taps at x − 1.5, −0.5, +0.5, +1.5


def test_training_pixels_reproduced_and_shapes():
    train = torch.rand(3, 9, 7, dtype=torch.float64)
    for mode in ("linear", "cubic"):
        full = interpolate_every_other(train, (18, 14), mode, (0.0, 1.0))
        assert full.shape == (3, 18, 14)
        torch.testing.assert_close(full[:, ::2, ::2], train.clamp(0, 1), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="not the"):
        interpolate_every_other(train, (32, 14), "linear")


def test_bilinear_is_the_mean_of_the_four_neighbours():
    train = torch.rand(2, 8, 8, dtype=torch.float64)
    full = BASELINES["bilinear"](train, (16, 16), (0.0, 1.0))
    t = train.numpy()
    corner_mean = (t[:, :-1, :-1] + t[:, 1:, :-1] + t[:, :-1, 1:] + t[:, 1:, 1:]) / 4  # held-out (2i+1, 2j+1)
    np.testing.assert_allclose(full[:, 1:-1:2, 1:-1:2].numpy(), corner_mean, rtol=0, atol=1e-12)
    # the last odd row and column are outside the training pixels: edge replication
    torch.testing.assert_close(full[:, -1], full[:, -2])
    torch.testing.assert_close(full[:, :, -1], full[:, :, -2])


def test_bicubic_matches_keys_kernel_at_half_pixels():
    assert KEYS_HALF.sum() == pytest.approx(1.0)  # partition of unity
    train = torch.rand(1, 12, 12, dtype=torch.float64) * 0.6 + 0.2  # away from the clamp
    full = BASELINES["bicubic"](train, (24, 24), (0.0, 1.0))
    t = train[0].numpy()
    # separable filter on the interior held-out pixels (2i+1, 2j+1), i, j = 1..9: taps at rows i−1..i+2
    rows = np.stack([KEYS_HALF @ t[i - 1 : i + 3] for i in range(1, 10)])  # (9, 12)
    ref = np.stack([rows[:, j - 1 : j + 3] @ KEYS_HALF for j in range(1, 10)], axis=1)  # (9, 9)
    np.testing.assert_allclose(full[0, 3:21:2, 3:21:2].numpy(), ref, rtol=0, atol=1e-12)
    # a linear ramp is reproduced exactly between the training pixels (symmetric taps)
    ramp = torch.linspace(0.1, 0.9, 12, dtype=torch.float64)[None, :, None].expand(1, 12, 12)
    up = BASELINES["bicubic"](ramp, (24, 24), (0.0, 1.0))
    step = (0.8 / 11) / 2
    torch.testing.assert_close(up[0, 3:21:2, 5], ramp[0, 1:10, 0] + step, rtol=0, atol=1e-12)


def test_constant_is_the_training_mean():
    train = torch.rand(3, 5, 5)
    c = constant_mean(train, (10, 10))
    assert c.shape == (3, 10, 10)
    torch.testing.assert_close(c[:, 3, 7], train.mean(dim=(1, 2)))


def test_rows_scored_like_models():
    dm = ImageDataModule(resolution=32, split="every_other")
    dm.setup("fit")
    rows = baseline_rows(dm, num_bands=8)  # an image: clamped to [0, 1]
    assert [r["method"] for r in rows] == list(BASELINES) == ["constant", "bilinear", "bicubic"]
    by = {r["method"]: r for r in rows}
    for name in ("bilinear", "bicubic"):
        assert math.isinf(by[name]["train_psnr"]) and by[name]["train_low"] == 0.0  # the training pixels, exactly
        assert 15 < by[name]["psnr"] < 40
    # the constant has learned no frequency: Δ = 1 in every band on both grids, a small DC error on held-out pixels
    constant = by["constant"]
    for key in ("train_low", "train_high", "low", "high"):
        assert constant[key] == pytest.approx(1.0, rel=1e-9), key
    assert constant["train_dc"] == pytest.approx(0.0, abs=1e-6)  # float32 mean and constant["dc"] < 0.1
    assert constant["psnr"] < by["bilinear"]["psnr"]
    # score_prediction is what the rows hold: the target itself scores ∞ and zero errors
    target = dm.values_grid()
    exact = score_prediction(target, target, dm, num_bands=8)
    assert math.isinf(exact["psnr"]) and exact["high"] == 0 and exact["ssim"] == pytest.approx(1.0)


def test_refuses_other_splits():
    dm = ImageDataModule(resolution=16, split="all")
    dm.setup("fit")
    with pytest.raises(ValueError, match="every_other"):
        baseline_rows(dm)


def test_command_prints_share_and_baselines(tmp_path, capsys):
    out = main(["--image", "data/camera.png", "--text", "0", "--resolution", "32"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 4 and "training Nyquist" in lines[0] and "| text image (seed 0) |" in lines[3]
    assert [r["image"] for r in out] == ["data/camera.png", "text image (seed 0)"]
    for r in out:
        assert 0 < r["above_nyquist"] < 1 and r["constant_test_psnr"] < r["bicubic_test_psnr"]
    with pytest.raises(SystemExit) as exc:
        main(["--image", str(tmp_path / "missing.png")])
    assert exc.value.code == 2 and "missing.png" in capsys.readouterr().err
