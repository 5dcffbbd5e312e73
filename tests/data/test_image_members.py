"""Several images as the targets of a stacked model's members: a list or a directory, one size, one target each."""

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.data import ImageDataModule
from inr.errors import InputError


def _write(folder, name, array):
    iio.imwrite(folder / name, array)
    return str(folder / name)


def test_a_list_of_images_holds_one_target_each_side_by_side(tmp_path):
    rng = np.random.default_rng(0)
    arrays = [rng.integers(0, 256, (6, 8, 3), dtype=np.uint8) for _ in range(3)]
    paths = [_write(tmp_path, f"{i}.png", a) for i, a in enumerate(arrays)]
    dm = ImageDataModule(path=paths, split="all")
    assert dm.targets == 3 and dm.out_channels == 3 and dm.shape == (6, 8) and dm.values.shape == (48, 9)
    for k, array in enumerate(arrays):
        expected = torch.from_numpy(array.astype(np.float32) / 255).permute(2, 0, 1)  # (C, H, W)
        assert torch.equal(dm.values_grid()[3 * k : 3 * k + 3], expected)
        member = dm.member_data(k)
        assert member.targets == 1 and member.path == dm.files[k] and torch.equal(member.values_grid(), expected)
        assert torch.equal(member.train_index, dm.train_index)
    assert dm.member_data(0).values_grid().data_ptr() != dm.values.data_ptr()  # its own copy
    assert "and 2 more images" in dm.describe()


def test_a_directory_gives_its_images_by_name_and_one_image_stays_a_single_target(tmp_path):
    rng = np.random.default_rng(1)
    for name in ("b.png", "a.jpg", "c.bmp"):
        _write(tmp_path, name, rng.integers(0, 256, (8, 8, 3), dtype=np.uint8))
    (tmp_path / "notes.txt").write_text("not an image")
    dm = ImageDataModule(path=str(tmp_path), resolution=4)
    assert [p.name for p in dm.files] == ["a.jpg", "b.png", "c.bmp"] and dm.targets == 3 and dm.values.shape == (16, 9)
    single = ImageDataModule(path=str(tmp_path / "b.png"))
    assert single.targets == 1 and single.member_data(0) is single and single.out_channels == 3


def test_images_of_different_sizes_or_none_at_all_are_refused(tmp_path):
    a = _write(tmp_path, "a.png", np.zeros((4, 4, 3), np.uint8) + np.arange(4, dtype=np.uint8)[:, None, None])
    b = _write(tmp_path, "b.png", np.zeros((4, 6, 3), np.uint8) + np.arange(4, dtype=np.uint8)[:, None, None])
    with pytest.raises(InputError, match=r"b.png: 6×4×3 after resizing, but .*a.png is 4×4×3; .*set data.resolution"):
        ImageDataModule(path=[a, b]).setup("fit")
    assert ImageDataModule(path=[a, b], resolution=[4, 4]).values.shape == (16, 6)  # resized to one size
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=r"empty: the directory holds no image"):
        ImageDataModule(path=str(empty))
    with pytest.raises(InputError, match=r"the list of images is empty"):
        ImageDataModule(path=[])
    with pytest.raises(InputError, match=r"no target 2; the data holds targets 0..1"):
        ImageDataModule(path=[a, a], resolution=4).member_data(2)
