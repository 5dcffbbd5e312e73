"""The comparison pictures: the right field in the right cell (read back from the PNG), volumes as their middle slice."""

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.experiments.figures import picture, reconstruction_grid


def test_each_cell_shows_its_method_and_signal(tmp_path):
    truths = [torch.zeros(1, 8, 8), torch.zeros(1, 8, 8)]
    recons = {"white": [torch.ones(1, 8, 8), torch.ones(1, 8, 8)], "gray": [torch.full((1, 8, 8), 0.5)]}  # gray: one signal
    path = reconstruction_grid(truths, recons, ["seed 0", "seed 1"], tmp_path / "grid.png")
    image = iio.imread(path)[..., :3].mean(axis=-1)
    height, width = image.shape

    def centre(row, col):  # the centre pixel of a cell of the 2 × 3 layout (labels shift it by a few pixels only)
        return image[int((row + 0.55) * height / 2), int((col + 0.55) * width / 3)]

    assert centre(0, 0) < 40 and centre(1, 0) < 40  # ground truth: black
    assert centre(0, 1) > 215 and centre(1, 1) > 215  # "white"
    assert 90 < centre(0, 2) < 170  # "gray" of signal 0
    assert centre(1, 2) > 215  # no reconstruction of signal 1: an empty (white) cell, not a copy of another


def test_a_volume_shows_its_middle_slice_and_colour_keeps_three_channels():
    volume = torch.zeros(1, 5, 4, 4)
    volume[0, 2] = 0.7
    assert np.allclose(picture(volume), 0.7)
    assert picture(torch.rand(3, 4, 6)).shape == (4, 6, 3)
    with pytest.raises(ValueError, match="shape"):
        picture(torch.zeros(4, 4))
