"""The grid convention (v = i/N) and the splits are exact."""

import numpy as np
import pytest
import torch

from inr.data.grid import Grid, grid_coordinates, split_indices


@pytest.mark.parametrize("shape", [(8,), (4, 6), (3, 4, 5)])
def test_lazy_coordinates_equal_materialised(shape):
    grid = Grid(shape)
    full = grid_coordinates(shape).reshape(-1, len(shape))
    index = torch.randperm(grid.numel)[:10]
    torch.testing.assert_close(grid.coords(index), full[index], rtol=0, atol=0)
    torch.testing.assert_close(grid.all_coords(), full, rtol=0, atol=0)


def test_coordinates_are_lower_corners_in_unit_interval():
    coords = grid_coordinates((4, 8))
    np.testing.assert_array_equal(coords[:, 0, 0].numpy(), [0, 0.25, 0.5, 0.75])
    np.testing.assert_array_equal(coords[0, :, 1].numpy(), np.arange(8) / 8)
    assert coords.min() == 0 and coords.max() < 1


def test_every_other_split_is_the_paper_protocol():
    shape = (6, 8)
    split = split_indices(shape, "every_other")
    (train, train_shape), (test, test_shape) = split["train"], split["test"]
    ref = np.arange(48).reshape(shape)
    np.testing.assert_array_equal(train.numpy(), ref[::2, ::2].ravel())
    np.testing.assert_array_equal(test.numpy(), ref[1::2, 1::2].ravel())
    assert train_shape == (3, 4) and test_shape == (3, 4)
    assert len(set(train.tolist()) & set(test.tolist())) == 0


def test_every_other_on_odd_sizes():
    split = split_indices((5, 7), "every_other")
    assert split["train"][1] == (3, 4) and split["test"][1] == (2, 3)
    assert len(split["train"][0]) == 12 and len(split["test"][0]) == 6


def test_all_split_covers_grid():
    split = split_indices((3, 3), "all")
    assert torch.equal(split["train"][0], torch.arange(9)) and split["test"][1] == (3, 3)


def test_unknown_split():
    with pytest.raises(ValueError, match="every_other"):
        split_indices((4, 4), "random")
