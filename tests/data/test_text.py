"""Tests of the text-image generator and TextImageDataModule."""

import numpy as np
import pytest
import torch

from inr.data.image import DEFAULT_IMAGE, read_image, resize_image
from inr.data.text import FONT_FACES, TextImageDataModule, load_font, main, render_text_image, save_text_image
from inr.errors import InputError
from inr.spectral import aliased_energy_fraction


def test_image_is_coloured_text_on_white():
    img = render_text_image(128, seed=3)
    assert img.shape == (128, 128, 3) and img.dtype == torch.float32
    assert img.min() >= 0 and img.max() == 1
    white = (img == 1).all(-1).float().mean()
    ink = (img.min(-1).values < 0.9).float().mean()
    assert 0.7 < white < 0.95 and 0.05 < ink < 0.3, (white, ink)  # mostly background, with real ink on it
    assert (img.max(-1).values - img.min(-1).values).max() > 0.3  # saturated colours, not only gray


def test_fonts_are_the_bundled_dejavu_faces():
    families = {load_font(face, 20).getname() for face in FONT_FACES}
    assert families == {
        ("DejaVu Sans", "Book"),
        ("DejaVu Sans", "Bold"),
        ("DejaVu Serif", "Book"),
        ("DejaVu Serif", "Bold"),
        ("DejaVu Sans Mono", "Book"),
        ("DejaVu Sans Mono", "Bold"),
    }


def test_deterministic_per_seed_and_shape():
    a, b, c = render_text_image(64, seed=0), render_text_image(64, seed=0), render_text_image(64, seed=1)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert render_text_image((48, 80), seed=0).shape == (48, 80, 3)


def test_same_page_at_every_resolution():
    # sizes are fractions of the height: the 512² image averaged over 2×2 blocks is the 256² one, up to the
    # glyphs' pixel rounding (measured: mean |difference| 0.008–0.017 for seeds 0–2)
    big, small = render_text_image(512, seed=1), render_text_image(256, seed=1)
    pooled = big.reshape(256, 2, 256, 2, 3).mean(dim=(1, 3))  # (512, 512, 3) -> (256, 256, 3)
    assert (pooled - small).abs().mean() < 0.03


def test_energy_above_the_training_nyquist_is_small_but_above_a_photo():
    # the calibration: at the CPU protocol's 256², the share of non-DC energy that the [::2, ::2] training
    # pixels cannot hold is a few per cent (measured 3.9–6.0 % for seeds 0–5), more than a photograph's
    # (astronaut: 1.0 %) because of the glyphs' sharp edges, and it halves at 512²
    photo = aliased_energy_fraction(resize_image(read_image(DEFAULT_IMAGE), 256).permute(2, 0, 1))
    for seed in (0, 1, 2):
        at_256 = aliased_energy_fraction(render_text_image(256, seed).permute(2, 0, 1))
        at_512 = aliased_energy_fraction(render_text_image(512, seed).permute(2, 0, 1))
        assert 0.02 < at_256 < 0.1 and at_256 > 2 * photo, (seed, at_256, photo)
        assert at_512 < 0.7 * at_256, (seed, at_512, at_256)


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
