"""Video files: MP4/WebM written and read back close to the frames, GIF exactly, a clip as a target, the
missing extra refused in one line, and rendered fields as files that are whole or absent."""

import imageio.v3 as iio
import numpy as np
import pytest
import torch

import inr.export.render as render
import inr.io.video as video
from inr.data.video import VideoDataModule
from inr.errors import InputError
from inr.export.render import write_field
from inr.io.video import read_video, write_video


def smooth_clip(t=6, h=20, w=24):
    """A moving colour ramp in [0, 1], (T, H, W, 3): smooth, as video codecs expect."""
    tt, yy, xx = np.meshgrid(np.arange(t) / t, np.arange(h) / h, np.arange(w) / w, indexing="ij")
    return np.stack([(xx + tt) % 1.0, yy, 0.5 + 0.4 * np.sin(2 * np.pi * (xx + yy + tt))], axis=-1).astype(np.float32)


@pytest.mark.parametrize("suffix", [".mp4", ".webm"])
def test_mp4_and_webm_round_trip_close_to_the_frames(tmp_path, suffix):
    clip = smooth_clip()
    path = write_video(tmp_path / f"clip{suffix}", clip, fps=6)
    decoded = read_video(path).astype(np.float64) / 255
    assert decoded.shape == clip.shape
    # lossy codecs in 4:2:0 colour; a tolerance of 3 % of the range on average, 25 % at worst
    error = np.abs(decoded - clip)
    assert error.mean() < 0.03 and error.max() < 0.25, (error.mean(), error.max())
    assert read_video(path, max_frames=2).shape == (2, 20, 24, 3)  # decoding stops early
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_gif_round_trips_exactly_and_odd_sides_are_padded_for_mp4(tmp_path):
    frames = np.zeros((3, 5, 7, 3), np.uint8)
    frames[1, :, :, 0], frames[2, :, :, 2] = 255, 128
    assert np.array_equal(iio.imread(write_video(tmp_path / "c.gif", frames), index=None)[..., :3], frames)
    assert read_video(write_video(tmp_path / "c.mp4", frames)).shape == (3, 6, 8, 3)  # yuv420p needs even sides


def test_a_clip_from_an_mp4_is_a_video_target(tmp_path):
    clip = smooth_clip(t=8, h=16, w=16)
    write_video(tmp_path / "clip.mp4", clip, fps=8)
    dm = VideoDataModule(path=str(tmp_path / "clip.mp4"), resolution=None, frames=4, frame_stride=2)
    dm.setup("fit")
    assert dm.shape == (4, 16, 16) and dm.out_channels == 3
    values = dm.values_grid().permute(1, 2, 3, 0).numpy()  # (C, T, H, W) -> (T, H, W, C)
    np.testing.assert_allclose(values, read_video(tmp_path / "clip.mp4")[::2][:4] / 255.0, atol=1e-7)  # frames 0, 2, 4, 6


def test_without_the_extra_mp4_is_refused_in_one_line_and_gif_still_works(tmp_path, monkeypatch):
    monkeypatch.setattr(video, "pyav_available", lambda: False)
    with pytest.raises(InputError, match=r"writing \.mp4 needs the video extra: pip install av"):
        write_video(tmp_path / "c.mp4", smooth_clip())
    assert not list(tmp_path.iterdir())
    write_video(tmp_path / "c.gif", smooth_clip())
    monkeypatch.setattr(render, "pyav_available", lambda: False)
    assert render.choose_video("auto") == "gif"  # a video all the same
    with pytest.raises(InputError, match="--video webm needs the video extra"):
        render.choose_video("webm")


def test_a_volume_becomes_slices_and_a_sweep_and_a_failed_write_changes_nothing(tmp_path, monkeypatch):
    sdf = torch.linspace(-1, 1, 4 * 6 * 8).reshape(1, 4, 6, 8)  # leaves [0, 1]: shown from its own range
    written = write_field(sdf, tmp_path, "volume", video="gif", fps=4)
    assert [p.name for p in written] == ["field.npy", "slices", "slices.gif"]
    assert np.array_equal(np.load(tmp_path / "field.npy"), sdf.numpy()[0][..., None])
    first, last = iio.imread(tmp_path / "slices/slice_0000.png"), iio.imread(tmp_path / "slices/slice_0003.png")
    assert first.shape == (6, 8) and first.min() == 0 and last.max() == 255  # the field's min and max

    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(render, "write_video", broken)
    with pytest.raises(OSError):
        write_field(sdf * 2, tmp_path, "volume", video="mp4")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # nothing staged is left
