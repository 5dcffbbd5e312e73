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
