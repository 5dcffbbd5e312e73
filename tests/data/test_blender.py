"""The blender reader (NeRF's synthetic scenes: ``transforms_{train,val,test}.json`` + RGBA PNGs) on a tiny scene
written here: views composited onto the background and then downscaled by area averaging (checked against numpy
in float64), the camera of the downscaled views, the splits and which held-out views are kept, the poses as
written, and its memory bound, taken at the final size before the other frames are read."""

import functools
import json
import math
import shutil

import imageio.v3 as iio
import numpy as np
import pytest
import torch

import inr.errors
from inr.data import RaysDataModule, posed_images
from inr.data.cameras import look_at
from inr.data.posed_images import evenly_spaced, read_blender
from inr.errors import InputError

SIDE, FOV = 32, 0.6911112070083618  # lego's camera_angle_x
COUNTS = {"train": 6, "val": 3, "test": 8}
BLACK, WHITE = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)


def _pose(split: str, k: int) -> np.ndarray:
    """A distinct camera per frame on a sphere of radius 4 around the origin, looking at it."""
    offset = {"train": 0.0, "val": 0.3, "test": 0.6}[split]
    angle = 2 * math.pi * (k + offset) / 8
    eye = [4 * math.cos(angle), 4 * math.sin(angle), 1.0 + 0.1 * k]
    return look_at(
        torch.tensor(eye, dtype=torch.float64),
        torch.zeros(3, dtype=torch.float64),
        torch.tensor([0.0, 0, 1], dtype=torch.float64),
    ).numpy()


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """Per split, its frames' RGBA images (uint8, random colours and alpha) and poses, written in the blender
    layout (NeRF's: ``file_path`` without the extension)."""
    root = tmp_path_factory.mktemp("blender") / "scene"
    rng = np.random.default_rng(0)
    written = {}
    for split, count in COUNTS.items():
        (root / split).mkdir(parents=True)
        images = rng.integers(0, 256, size=(count, SIDE, SIDE, 4), dtype=np.uint8)
        images[:, : SIDE // 4, :, 3] = 0  # a transparent band, as the scenes' background is
        poses = np.stack([_pose(split, k) for k in range(count)])
        frames = []
        for k in range(count):
            iio.imwrite(root / split / f"r_{k}.png", images[k])
            frames.append({"file_path": f"./{split}/r_{k}", "rotation": 0.0, "transform_matrix": poses[k].tolist()})
        (root / f"transforms_{split}.json").write_text(json.dumps({"camera_angle_x": FOV, "frames": frames}))
        written[split] = (images, poses)
    return root, written


def _expected(rgba: np.ndarray, background, factor: int) -> np.ndarray:
    """c' = α c + (1 − α) b in float64, then the mean of each factor × factor block: (N, H, W, 4) -> (N, h, w, 3)."""
    x = rgba.astype(np.float64) / 255
    composited = x[..., :3] * x[..., 3:] + (1 - x[..., 3:]) * np.asarray(background)
    n, h, w, _ = composited.shape
    return composited.reshape(n, h // factor, factor, w // factor, factor, 3).mean(axis=(2, 4))


def test_views_are_composited_then_downscaled_by_area_and_the_camera_follows(scene):
    root, written = scene
    images, poses, camera, count = read_blender(root, "test", BLACK, width=8, heldout_views=None)
    assert images.shape == (6 + 8, 8, 8, 3) and count == 6
    expected = np.concatenate([_expected(written["train"][0], BLACK, 4), _expected(written["test"][0], BLACK, 4)])
    np.testing.assert_allclose(images.double().numpy(), expected, atol=1e-6, rtol=0)
    # the focal length of the 8-pixel camera: ½ w / tan(½ fov), a quarter of the stored views'
    assert camera.fx == pytest.approx(0.5 * 8 / math.tan(FOV / 2), rel=1e-12) and camera.fx == camera.fy
    assert (camera.width, camera.height, camera.cx, camera.cy) == (8, 8, 4.0, 4.0)
    full = read_blender(root, "test", WHITE)[0]
    np.testing.assert_allclose(full[:6].double().numpy(), _expected(written["train"][0], WHITE, 1), atol=1e-6, rtol=0)


def test_lego_focal_length_at_400_pixels_is_the_notebooks():
    # 3d_simple_nerf.ipynb prints focal 555.5555155968841 for lego_400.npz; lego's camera_angle_x gives it
    assert 0.5 * 400 / math.tan(FOV / 2) == pytest.approx(555.5555155968841, rel=1e-7)


def test_the_splits_keep_their_frames_in_order_and_the_held_out_ones_evenly_spaced(scene):
    root, written = scene
    images, poses, _, count = read_blender(root, "test", BLACK, width=16, heldout_views=3)
    kept = evenly_spaced(8, 3).tolist()
    assert kept == [0, 4, 7] and count == 6 and images.shape == (9, 16, 16, 3)
    np.testing.assert_allclose(poses[:6].double().numpy(), written["train"][1], atol=1e-6, rtol=0)
    np.testing.assert_allclose(poses[6:].double().numpy(), written["test"][1][kept], atol=1e-6, rtol=0)
    np.testing.assert_allclose(images[6:].double().numpy(), _expected(written["test"][0][kept], BLACK, 2), atol=1e-6, rtol=0)
    val = read_blender(root, "val", BLACK, width=16)
    assert val[0].shape == (9, 16, 16, 3) and val[3] == 6
    np.testing.assert_allclose(val[1][6:].double().numpy(), written["val"][1], atol=1e-6, rtol=0)


def test_held_out_frames_left_out_are_never_read(scene, tmp_path):
    root, _ = scene
    copy = tmp_path / "scene"
    shutil.copytree(root, copy)
    (copy / "test" / "r_2.png").unlink()  # not among the 3 kept of 8
    assert read_blender(copy, "test", BLACK, width=8, heldout_views=3)[0].shape == (9, 8, 8, 3)
    with pytest.raises(InputError, match=r"transforms_test.json: frame 2: image .*r_2.png not found"):
        read_blender(copy, "test", BLACK, width=8)


def test_the_memory_bound_is_taken_at_the_final_size_before_the_frames_are_read(scene, monkeypatch):
    root, _ = scene
    # 6 training frames at 8² (9 KiB) and one stored frame (24 KiB) fit under half of 80 KiB; 6 at 32² (144 KiB) do not
    # (the reader's own bound: each image file's header is checked by read_image against the host's memory)
    monkeypatch.setattr(posed_images, "check_memory", functools.partial(inr.errors.check_memory, available=80 * 2**10))
    assert read_blender(root, "test", BLACK, width=8, heldout_views=1)[0].shape == (7, 8, 8, 3)
    with pytest.raises(InputError, match=r"transforms_train.json: 6 frames of 32×32 needs an estimated .*data.resolution"):
        read_blender(root, "test", BLACK)


def test_the_data_module_serves_the_notebooks_split_at_a_chosen_size(scene):
    root, written = scene
    dm = RaysDataModule(path=str(root), resolution=8, heldout_views=3, background="black", batch_size=16)
    dm.setup("fit")
    assert dm.train_shape == (6, 8, 8) and dm.test_shape == (3, 8, 8) and dm.background == BLACK
    assert dm.intrinsics.fx == pytest.approx(0.5 * 8 / math.tan(FOV / 2), rel=1e-12)
    expected = _expected(written["test"][0][[0, 4, 7]], BLACK, 4)  # (3, 8, 8, 3)
    np.testing.assert_allclose(dm.heldout_images().permute(0, 2, 3, 1).double().numpy(), expected, atol=1e-6, rtol=0)
