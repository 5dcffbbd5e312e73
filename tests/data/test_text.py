"""Tests of the text-image generator and TextImageDataModule."""
import numpy as np
import pytest
import torch

from inr.data.image import DEFAULT_IMAGE, read_image, resize_image
from inr.data.text import TextImageDataModule, main, render_text_image, save_text_image
from inr.errors import InputError
from inr.spectral import BandPartition, grid_dft


def test_image_is_dark_text_on_white():
    img = render_text_image(128, seed=3)
    assert img.shape == (128, 128, 3) and img.dtype == torch.float32
    assert img.min() >= 0 and img.max() == 1
    white = (img == 1).all(-1).float().mean()
    dark = (img.max(-1).values < 0.75).float().mean()
    assert 0.4 < white < 0.97 and dark > 0.02, (white, dark)  # mostly background, with real ink on it
    assert (img.std(-1) > 0.05).any()  # coloured, not only gray


def test_deterministic_per_seed_and_shape():
    a, b, c = render_text_image(64, seed=0), render_text_image(64, seed=0), render_text_image(64, seed=1)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert render_text_image((48, 80), seed=0).shape == (48, 80, 3)


def test_high_frequencies_unlike_a_natural_image():
    # the point of the dataset: far more energy near Nyquist than a photograph (mean removed, 4 bands)
    def upper_half_fraction(hwc):
        x = hwc.permute(2, 0, 1).double()
        x = x - x.mean(dim=(1, 2), keepdim=True)
        energy = BandPartition(x.shape[1:], num_bands=4).sum(grid_dft(x).abs().square())
        return float(energy[2:].sum() / energy.sum())

    text = upper_half_fraction(render_text_image(128, seed=0))
    photo = upper_half_fraction(resize_image(read_image(DEFAULT_IMAGE), 128))
    assert text > 0.2 and text > 5 * photo, (text, photo)


def test_saved_png_reads_back(tmp_path):
    path = save_text_image(tmp_path / "t.png", 40, seed=2)
    back = read_image(path)
    np.testing.assert_allclose(back.numpy(), render_text_image(40, seed=2).numpy(), atol=0.5 / 255)
    main(["--out", str(tmp_path / "cli.png"), "--size", "24", "--seed", "2"])
    assert read_image(tmp_path / "cli.png").shape == (24, 24, 3)


def test_datamodule():
    dm = TextImageDataModule(resolution=[32, 24], text_seed=5, split="every_other")
    assert dm.shape == (32, 24) and dm.out_channels == 3 and dm.train_shape == (16, 12)
    np.testing.assert_array_equal(dm.values_grid().permute(1, 2, 0).numpy(), render_text_image((32, 24), 5).numpy())
    assert "seed 5" in dm.describe()


def test_bad_inputs(tmp_path):
    with pytest.raises(InputError, match="resolution"):
        TextImageDataModule(resolution=4).setup("fit")
    with pytest.raises(InputError, match="PNG"):
        save_text_image(tmp_path / "t.jpg")
