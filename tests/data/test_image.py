"""Image reading: bit depths and channel layouts are converted as documented; bad files are refused."""

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.data import ImageDataModule, read_image
from inr.errors import InputError


def _write(tmp_path, name, array):
    path = tmp_path / name
    iio.imwrite(path, array)
    return path


def test_uint8_rgb_scaled_by_255(tmp_path):
    array = np.random.default_rng(0).integers(0, 256, (5, 6, 3), dtype=np.uint8)
    image = read_image(_write(tmp_path, "a.png", array))
    assert image.shape == (5, 6, 3) and image.dtype == torch.float32
    np.testing.assert_allclose(image.numpy(), array / 255.0, atol=1e-7)


def test_uint16_gray_scaled_by_65535_and_repeated(tmp_path):
    array = np.array([[0, 65535], [1000, 30000]], dtype=np.uint16)
    image = read_image(_write(tmp_path, "g16.png", array))
    assert image.shape == (2, 2, 3)
    np.testing.assert_allclose(image[..., 0].numpy(), array / 65535.0, atol=1e-7)
    assert torch.equal(image[..., 0], image[..., 2])


def test_gray_kept_as_one_channel(tmp_path):
    array = np.arange(16, dtype=np.uint8).reshape(4, 4) * 10
    assert read_image(_write(tmp_path, "g.png", array), channels="keep").shape == (4, 4, 1)


def test_rgba_composited_on_white(tmp_path):
    array = np.zeros((2, 2, 4), dtype=np.uint8)
    array[..., 0] = 255  # red
    array[0, 0, 3] = 255  # opaque
    array[0, 1, 3] = 0  # transparent -> white
    array[1, :, 3] = 51  # α = 0.2 -> 0.2·(1,0,0) + 0.8·(1,1,1)
    image = read_image(_write(tmp_path, "rgba.png", array)).numpy()
    np.testing.assert_allclose(image[0, 0], [1, 0, 0], atol=1e-6)
    np.testing.assert_allclose(image[0, 1], [1, 1, 1], atol=1e-6)
    np.testing.assert_allclose(image[1, 0], [1, 0.8, 0.8], atol=1e-6)
    assert read_image(tmp_path / "rgba.png", channels="keep").shape == (2, 2, 4)


def test_rgb_to_gray_luma(tmp_path):
    array = np.zeros((2, 2, 3), dtype=np.uint8)
    array[..., 1] = 255
    image = read_image(_write(tmp_path, "green.png", array), channels="gray")
    assert image.shape == (2, 2, 1)
    np.testing.assert_allclose(image.numpy(), 0.587, atol=1e-6)


def test_tiff_and_jpeg_read(tmp_path):
    array = np.random.default_rng(1).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    assert read_image(_write(tmp_path, "a.tif", array)).shape == (8, 8, 3)
    assert read_image(_write(tmp_path, "a.jpg", array)).shape == (8, 8, 3)


def test_resize_square_crop(tmp_path):
    array = np.random.default_rng(2).integers(0, 256, (20, 30, 3), dtype=np.uint8)
    path = _write(tmp_path, "wide.png", array)
    dm = ImageDataModule(path=str(path), resolution=10)
    assert dm.shape == (10, 10)
    assert ImageDataModule(path=str(path), resolution=[5, 15]).shape == (5, 15)
    assert 0 <= dm.values.min() and dm.values.max() <= 1


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.png", None, "file not found"),
        ("empty.png", b"", "file is empty"),
        ("notimage.png", b"this is text, not a PNG", "not a readable image"),
        ("data.xyz", b"abc", "unsupported image extension"),
    ],
)
def test_bad_files_refused_with_name(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message) as err:
        read_image(path)
    assert name in str(err.value) and "\n" not in str(err.value)


def test_constant_image_refused(tmp_path):
    path = _write(tmp_path, "flat.png", np.full((8, 8, 3), 7, dtype=np.uint8))
    with pytest.raises(InputError, match="constant"):
        _ = ImageDataModule(path=str(path)).values


def test_huge_resolution_refused_before_allocating():
    with pytest.raises(InputError, match="GiB"):
        _ = ImageDataModule(resolution=1_000_000).values


def _smooth_rgb(side=64):
    """An 8-bit RGB image of smooth ramps (JPEG keeps such an image within a level or two at quality 95)."""
    y, x = np.mgrid[0:side, 0:side] / side
    return (np.stack([y, x, 0.5 + 0.5 * np.sin(6 * x * y)], axis=-1) * 255).round().astype(np.uint8)


def test_a_cmyk_jpeg_reads_as_the_rgb_it_was_made_from(tmp_path):
    """Pillow writes CMYK JPEGs as Adobe does (inverted, with an APP14 marker) and un-inverts them when reading; its
    conversion to RGB then gives back the RGB image the CMYK one was made from (c = 255 − r, k = 0), within JPEG's
    loss at quality 95: at most 3 levels, 0.5 on average (measured: 1 and 0.06). Read as stored, the four channels
    were taken for RGB + alpha: a white image. The codec's reader takes the same path."""
    from PIL import Image

    from inr.codec.encode import read_codec_image

    rgb = _smooth_rgb()
    path = tmp_path / "print.jpg"
    Image.fromarray(rgb).convert("CMYK").save(path, quality=95)
    with Image.open(path) as stored:
        assert stored.mode == "CMYK" and "adobe" in stored.info
    image = read_image(path, channels="keep")
    assert image.shape == (64, 64, 3)
    error = np.abs(image.numpy() * 255 - rgb)
    assert error.max() <= 3 and error.mean() <= 0.5, (error.max(), error.mean())
    assert torch.equal(read_codec_image(path), image)


def test_cmyk_palette_and_min_is_white_tiffs_read_as_their_colours(tmp_path):
    """tifffile returns a TIFF's values as stored: CMYK inks, palette indices, inverted gray; Pillow's conversion
    gives the colours (a CMYK TIFF made from RGB with k = 0 converts back exactly)."""
    import tifffile
    from PIL import Image

    rgb = _smooth_rgb(16)
    Image.fromarray(rgb).convert("CMYK").save(tmp_path / "cmyk.tif")
    np.testing.assert_allclose(read_image(tmp_path / "cmyk.tif").numpy(), rgb / 255.0, atol=1e-7)
    palette = Image.fromarray(rgb).quantize(colors=8)
    palette.save(tmp_path / "palette.tif")
    np.testing.assert_allclose(
        read_image(tmp_path / "palette.tif").numpy(), np.asarray(palette.convert("RGB")) / 255.0, atol=1e-7
    )
    gray = rgb[..., 0]
    tifffile.imwrite(tmp_path / "white.tif", 255 - gray, photometric="miniswhite")  # stored 0 is white
    np.testing.assert_allclose(read_image(tmp_path / "white.tif", channels="gray").numpy()[..., 0], gray / 255.0, atol=1e-7)


def test_an_image_of_lab_colours_is_refused(tmp_path):
    from PIL import Image

    path = tmp_path / "lab.tif"
    Image.fromarray(_smooth_rgb(8)).convert("LAB").save(path)
    with pytest.raises(InputError) as info:
        read_image(path)
    assert str(info.value) == f"{path}: its pixels are CIE L*a*b* colour, not RGB; convert it to RGB first"
