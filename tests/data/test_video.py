"""Video: GIF and image-sequence readers on files written here, the (t, y, x) grid, its split, bad input."""

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.data.grid import grid_coordinates
from inr.data.video import VideoDataModule, read_gif, read_sequence
from inr.errors import InputError


def _frames(t=4, h=8, w=9, seed=0):
    # distinct frames: GIF writers merge identical consecutive ones
    return np.random.default_rng(seed).integers(0, 256, size=(t, h, w, 3), dtype=np.uint8)


def test_gif_frames_are_read_exactly(tmp_path):
    frames = _frames()
    iio.imwrite(tmp_path / "c.gif", frames, loop=0, duration=100)
    clip = read_gif(tmp_path / "c.gif")
    # a 72-pixel frame has fewer than 256 colours, so the GIF palette is lossless
    assert clip.shape == (4, 8, 9, 3)
    assert torch.equal(clip, torch.from_numpy(frames).float() / 255)
    gray = read_gif(tmp_path / "c.gif", "gray")
    torch.testing.assert_close(gray[..., 0], clip @ torch.tensor([0.299, 0.587, 0.114]))


def test_image_sequence_from_a_folder_or_a_pattern(tmp_path):
    frames = _frames(3)
    for i, f in enumerate(frames):
        iio.imwrite(tmp_path / f"frame_{i:03d}.png", f)
    (tmp_path / "notes.txt").write_text("not a frame")
    for source in (tmp_path, tmp_path / "frame_*.png"):
        assert torch.equal(read_sequence(source), torch.from_numpy(frames).float() / 255)


def test_video_grid_coordinates_and_every_other_split(tmp_path):
    iio.imwrite(tmp_path / "c.gif", _frames(), loop=0)
    dm = VideoDataModule(path=str(tmp_path / "c.gif"), resolution=None, frames=None)
    assert dm.shape == (4, 8, 9) and dm.out_channels == 3
    index = torch.tensor([0, 2 * 72 + 3 * 9 + 4])  # (t, y, x) = (0, 0, 0), (2, 3, 4)
    assert torch.equal(dm.grid.coords(index), torch.tensor([[0.0, 0.0, 0.0], [2 / 4, 3 / 8, 4 / 9]]))
    everything = torch.arange(dm.grid.numel)
    assert torch.equal(dm.gather(everything, torch.device("cpu"))["coords"], grid_coordinates(dm.shape).reshape(-1, 3))
    # every_other thins t, y and x: train even frames at even pixels, test odd frames at odd pixels
    assert dm.train_shape == (2, 4, 5) and dm.test_shape == (2, 4, 4)
    t, y, x = dm.grid.unravel(dm.train_index).T
    assert bool((t % 2 == 0).all() & (y % 2 == 0).all() & (x % 2 == 0).all())
    t, y, x = dm.grid.unravel(dm.test_index).T
    assert bool((t % 2 == 1).all() & (y % 2 == 1).all() & (x % 2 == 1).all())


def test_frame_stride_limit_and_resize(tmp_path):
    frames = _frames(6, 12, 12)
    iio.imwrite(tmp_path / "c.gif", frames, loop=0)
    dm = VideoDataModule(path=str(tmp_path / "c.gif"), resolution=None, frames=2, frame_stride=2)
    assert torch.equal(dm.values_grid().permute(1, 2, 3, 0), torch.from_numpy(frames[[0, 2]]).float() / 255)
    assert VideoDataModule(path=str(tmp_path / "c.gif"), resolution=[6, 4], frames=None).shape == (6, 6, 4)


def test_builtin_pan_moves_the_window_over_the_photograph():
    dm = VideoDataModule(resolution=None, frames=3, split="all")
    clip = dm.values_grid()  # (3, T, S, S)
    assert clip.shape[1] == 3 and clip.shape[2] == clip.shape[3]
    assert not torch.equal(clip[:, 0], clip[:, 2])


@pytest.mark.parametrize(
    "make, path, message",
    [
        (lambda p: (p / "e.gif").write_bytes(b""), "e.gif", "file is empty"),
        (lambda p: (p / "e.gif").write_bytes(b"GIF89a broken"), "e.gif", "not a readable GIF"),
        (lambda p: (p / "e.mp4").write_bytes(b"x"), "e.mp4", "not a readable video"),
        (lambda p: (p / "e.mpg").write_bytes(b"x"), "e.mpg", "unsupported video source"),
        (lambda p: iio.imwrite(p / "e.gif", _frames(1)), "e.gif", "at least 2"),
        (lambda p: None, "missing.gif", "file not found"),
        (lambda p: None, "nothing_*.png", "no image files"),
    ],
)
def test_bad_video_sources_are_refused(tmp_path, make, path, message):
    make(tmp_path)
    with pytest.raises(InputError, match=message):
        VideoDataModule(path=str(tmp_path / path), resolution=None).setup("fit")


def test_frames_of_different_sizes_are_refused(tmp_path):
    iio.imwrite(tmp_path / "a.png", _frames(1, 8, 8)[0])
    iio.imwrite(tmp_path / "b.png", _frames(1, 8, 9)[0])
    with pytest.raises(InputError, match="differ in size"):
        VideoDataModule(path=str(tmp_path), resolution=None).setup("fit")
