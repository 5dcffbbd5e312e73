"""Integer NeRF views are scaled by the bit depth their values fit, not by their type's maximum."""

import numpy as np
import pytest
import torch

from inr.data.image import integers_to_unit
from inr.data.posed_images import read_npz
from inr.errors import InputError


def _npz(path, images):
    poses = np.tile(np.eye(4, dtype=np.float32), (len(images), 1, 1))
    poses[:, 2, 3] = 3.0
    np.savez(path, images=images, poses=poses, focal=np.float64(10.0))
    return path


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_8_bit_values_in_a_wide_integer_type_are_divided_by_255(tmp_path, dtype):
    pixels = np.random.default_rng(0).integers(0, 256, size=(2, 8, 8, 3)).astype(dtype)
    images, _, _ = read_npz(_npz(tmp_path / "views.npz", pixels))
    assert torch.allclose(images, torch.from_numpy(pixels.astype(np.float32) / 255))


def test_uint8_and_16_bit_values_keep_their_scales():
    assert integers_to_unit(np.array([0, 255], dtype=np.uint8), "x").tolist() == [0.0, 1.0]
    assert integers_to_unit(np.array([0, 65535], dtype=np.uint16), "x").tolist() == [0.0, 1.0]
    assert integers_to_unit(np.array([0, 1000], dtype=np.int32), "x").tolist() == [0.0, pytest.approx(1000 / 65535)]


@pytest.mark.parametrize("values", [[-1, 5], [0, 70000]])
def test_integers_outside_8_and_16_bits_are_refused(tmp_path, values):
    pixels = np.zeros((2, 8, 8, 3), dtype=np.int32)
    pixels.flat[: len(values)] = values
    with pytest.raises(InputError, match=r"integer images must hold 8-bit"):
        read_npz(_npz(tmp_path / "views.npz", pixels))
