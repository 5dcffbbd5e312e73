"""``RaysDataModule``: splits by view, rays gathered on the device, and the blender / npz readers read back
what the writers wrote."""

import math

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.data import RaysDataModule
from inr.data.cameras import pixel_rays
from inr.data.posed_images import write_blender, write_npz
from inr.data.rays import evenly_spaced

SMALL = dict(resolution=16, views=6, heldout_views=3, batch_size=32, steps_per_epoch=2)


@pytest.fixture(scope="module")
def synthetic():
    dm = RaysDataModule(**SMALL)
    dm.setup("fit")
    return dm


def test_the_grid_is_every_pixel_of_every_view_split_by_view(synthetic):
    dm = synthetic
    assert dm.shape == (9, 16, 16) and dm.out_channels == 3
    assert dm.train_shape == (6, 16, 16) and dm.test_shape == (3, 16, 16)
    train_views = set((dm.train_index // 256).tolist())
    test_views = set((dm.test_index // 256).tolist())
    assert train_views == set(range(6)) and test_views == {6, 7, 8}
    torch.testing.assert_close(dm.values_grid(dm.test_index, dm.test_shape).transpose(0, 1), dm.heldout_images())
    # held-out views are cameras the training set does not contain
    assert torch.cdist(dm.poses[6:, :3, 3], dm.poses[:6, :3, 3]).min() > 1e-3


def test_a_batch_is_rays_of_its_pixels_with_their_colours(synthetic):
    dm = synthetic
    index = torch.tensor([0, 17, 255, 256 * 5 + 100])
    batch = dm.gather(index, torch.device("cpu"))
    view, pixel = index // 256, index % 256
    origins, directions = pixel_rays(dm.poses, view, pixel // 16, pixel % 16, dm.intrinsics)
    torch.testing.assert_close(batch["origins"], origins)
    torch.testing.assert_close(batch["directions"], directions)
    torch.testing.assert_close(batch["values"], dm.posed.images[view, pixel // 16, pixel % 16])
    # the synthetic scene's ground truth: a pixel that shows a surface has a finite depth on its ray
    depth = dm.posed.depths[view, pixel // 16, pixel % 16]
    assert batch["coords"].shape == (4, 3) and depth.isfinite().any()


def test_blender_layout_round_trip(tmp_path, synthetic):
    dm = synthetic
    write_blender(
        tmp_path / "scene",
        dm.posed.images,
        dm.poses,
        dm.intrinsics,
        {"train": torch.arange(6), "test": torch.arange(6, 9), "val": torch.tensor([8])},
    )
    read = RaysDataModule(path=str(tmp_path / "scene"), resolution=None, heldout_views=None)
    read.setup("fit")
    assert read.shape == (9, 16, 16) and read.test_shape == (3, 16, 16)
    # PNGs hold 8 bits: every colour within half a quantisation step
    torch.testing.assert_close(read.posed.images, dm.posed.images, atol=0.5 / 255 + 1e-6, rtol=0)
    torch.testing.assert_close(read.poses, dm.poses, atol=1e-6, rtol=0)
    assert math.isclose(read.intrinsics.fx, dm.intrinsics.fx, rel_tol=1e-9) and read.intrinsics.cx == 8.0
    assert (read.near, read.far, read.bound, read.background) == (2.0, 6.0, 1.5, (1.0, 1.0, 1.0))
    val = RaysDataModule(path=str(tmp_path / "scene"), resolution=None, heldout_split="val")
    val.setup("fit")
    assert val.test_shape == (1, 16, 16)


def test_blender_rgba_is_composited_onto_the_background_and_views_are_resized(tmp_path, synthetic):
    dm = synthetic
    write_blender(tmp_path / "s", dm.posed.images, dm.poses, dm.intrinsics, {"train": torch.arange(2), "test": torch.tensor([2])})
    rgba = np.zeros((16, 16, 4), dtype=np.uint8)
    rgba[:8, :, :3], rgba[:8, :, 3] = 200, 255  # top half opaque gray, bottom half transparent
    iio.imwrite(tmp_path / "s" / "train" / "r_0.png", rgba)
    black = RaysDataModule(path=str(tmp_path / "s"), resolution=8, background="black")
    black.setup("fit")
    image = black.posed.images[0]  # 16 -> 8 pixels by area averaging
    torch.testing.assert_close(image[:4], torch.full((4, 8, 3), 200 / 255))
    torch.testing.assert_close(image[4:], torch.zeros(4, 8, 3))
    assert black.intrinsics.fx == pytest.approx(dm.intrinsics.fx / 2) and black.intrinsics.width == 8
    white = RaysDataModule(path=str(tmp_path / "s"), resolution=None)
    white.setup("fit")
    torch.testing.assert_close(white.posed.images[0, 8:], torch.ones(8, 16, 3))


def test_npz_round_trip_holds_out_every_eighth_view(tmp_path):
    gen = torch.Generator().manual_seed(0)
    images = torch.rand(17, 8, 10, 3, generator=gen)
    poses = RaysDataModule(resolution=8, views=16, heldout_views=1).poses  # 17 cameras of the synthetic scene
    write_npz(tmp_path / "views.npz", images, poses, 12.5)
    read = RaysDataModule(path=str(tmp_path / "views.npz"), resolution=None, heldout_views=None)
    read.setup("fit")
    torch.testing.assert_close(read.posed.images, images)
    assert read.posed.heldout_views.tolist() == [7, 15] and len(read.posed.train_views) == 15
    assert (read.intrinsics.fx, read.intrinsics.cx, read.intrinsics.cy) == (12.5, 5.0, 4.0)
    assert read.background == (0.0, 0.0, 0.0)  # tiny_nerf_data's images are composited onto black


def test_evenly_spaced_keeps_the_ends():
    assert evenly_spaced(5, None).tolist() == [0, 1, 2, 3, 4]
    assert evenly_spaced(9, 3).tolist() == [0, 4, 8]
