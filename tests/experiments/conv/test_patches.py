"""The checkerboard patch split: training crops and held-out patches never share a pixel, and the held-out
patches tile their blocks exactly."""

import numpy as np
import torch

from inr.experiments.conv.patches import PatchSet, block_origins, gather_patches


def parity_image(shape, block):
    """Each pixel labelled with its block's checkerboard colour (0 training, 1 held out) and a unique id."""
    i, j = np.meshgrid(np.arange(shape[0]) // block, np.arange(shape[1]) // block, indexing="ij")
    return torch.tensor((i + j) % 2, dtype=torch.float32)


def test_block_origins_split_the_grid_into_two_colours():
    train, test = block_origins((12, 20), 4, held_out=False), block_origins((12, 20), 4, held_out=True)
    assert len(train) + len(test) == 3 * 5
    assert {tuple(o) for o in train.tolist()}.isdisjoint({tuple(o) for o in test.tolist()})
    assert all((a // 4 + b // 4) % 2 == 1 for a, b in test.tolist())


def test_gather_matches_numpy_slicing():
    image = torch.arange(70.0).reshape(7, 10)
    origins = torch.tensor([[0, 0], [2, 5], [4, 7]])
    got = gather_patches(image, origins, 3)
    expected = np.stack([image.numpy()[a : a + 3, b : b + 3] for a, b in origins.tolist()])
    assert np.array_equal(got.numpy(), expected)


def test_crops_only_see_training_blocks_and_heldout_tiles_the_rest():
    shape, block, patch = (24, 40), 8, 4
    labels = parity_image(shape, block)
    ids = torch.arange(float(shape[0] * shape[1])).reshape(shape)
    ps = PatchSet([labels, labels.clone()], patch=patch, block=block)
    crops = ps.crops(500, torch.Generator().manual_seed(0))
    assert crops.shape == (500, 1, patch, patch) and float(crops.max()) == 0.0  # never a held-out pixel
    held = ps.heldout()
    assert float(held.min()) == 1.0  # only held-out pixels
    n_heldout_pixels = int(labels.sum()) * 2
    assert held.numel() == n_heldout_pixels  # the held-out blocks exactly, twice (two images)
    tiles = PatchSet([ids], patch=patch, block=block).heldout()
    assert len(torch.unique(tiles)) == tiles.numel()  # no pixel twice: the tiles do not overlap


def test_crops_cover_every_offset_inside_a_block():
    """Random offsets reach both ends of the slack block − patch."""
    image = torch.arange(16.0 * 16).reshape(16, 16)
    ps = PatchSet([image], patch=4, block=8)
    corners = ps.crops(2000, torch.Generator().manual_seed(1))[:, 0, 0, 0]  # top-left value = 16 row + col
    rows, cols = corners // 16, corners % 16
    assert set((rows % 8).long().tolist()) == set(range(5)) and set((cols % 8).long().tolist()) == set(range(5))
