"""``VideoFitting``: per-frame SSIM, a tiny training through the CLI on a GIF written here, bad input."""

import imageio.v3 as iio
import numpy as np
import pytest
import torch
from torchmetrics.functional.image import structural_similarity_index_measure as ssim

from inr.run.cli import cli_main
from inr.tasks.video import VideoFitting


@pytest.fixture
def run(tiny_flags):
    """``run(save_dir, *extra)``: 20 steps on a 4-frame 12² clip through the command line -> the CLI."""
    clip = ("--data.init_args.frames", 4, "--model.init_args.network.init_args.depth", 2, "--trainer.check_val_every_n_epoch", 1)
    tiny = tiny_flags("video.yaml", 12, *clip, width=32, features=32, steps=20, bar=False)
    return lambda save_dir, *extra: cli_main([*tiny, "--trainer.logger.init_args.save_dir", str(save_dir), *extra])


def test_a_clip_s_ssim_is_the_mean_of_each_frame_scored_alone():
    """torchmetrics' SSIM of each frame (C, H, W) alone, float64, against the task's held-out SSIM of the clip."""
    gen = torch.Generator().manual_seed(0)
    target = torch.rand(3, 4, 8, 8, generator=gen, dtype=torch.float64)
    pred = (target + 0.1 * torch.randn(3, 4, 8, 8, generator=gen, dtype=torch.float64)).clamp(0, 1)
    alone = torch.stack([ssim(pred[:, t][None], target[:, t][None], data_range=1.0) for t in range(4)]).mean()
    task = VideoFitting()
    assert task.on_heldout_grid(pred, target)["ssim"] == pytest.approx(float(alone), abs=1e-12)
    assert task.on_heldout_grid(target, target)["ssim"] == pytest.approx(1.0, abs=1e-12)
    with pytest.warns(UserWarning, match="val/ssim: SSIM needs at least 6×6 pixels and this grid is 5×5"):
        assert task.on_heldout_grid(pred[..., :5, :5], target[..., :5, :5]) == {}


def test_tiny_video_from_a_gif_trains_end_to_end(tmp_path, capsys, run):
    rng = np.random.default_rng(0)
    frames = np.stack([np.roll(rng.integers(0, 256, size=(12, 12, 3), dtype=np.uint8), t, axis=1) for t in range(4)])
    iio.imwrite(tmp_path / "clip.gif", frames, loop=0)
    cli = run(tmp_path, "--data.init_args.path", str(tmp_path / "clip.gif"))
    summary = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("summary:")]
    assert len(summary) == 1 and {"test/psnr", "full/psnr", "full/ssim"} <= {p.split()[0] for p in summary[0][9:].split(" | ")}
    assert cli.model.render().shape == (3, 4, 12, 12)
    assert cli.model.data.train_shape == (2, 6, 6)


@pytest.mark.slow
def test_builtin_clip_trains_and_improves_with_steps(tmp_path, run):
    short = run(tmp_path, "--trainer.max_steps", "2").model.evaluate()
    longer = run(tmp_path, "--trainer.max_steps", "60").model.evaluate()
    assert longer["train/psnr"] > short["train/psnr"] + 3 and longer["test/psnr"] > short["test/psnr"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--data.init_args.path", "{tmp}/empty.gif"], "file is empty"),
        (["--data.init_args.path", "{tmp}/clip.mp4"], "clip.mp4: not a readable video"),
        (["--data.init_args.path", "{tmp}/clip.mpg"], "unsupported video source"),
        (["--data.init_args.frames", "1"], "data.frames must be ≥ 2"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, run, refusal, extra, message):
    (tmp_path / "empty.gif").write_bytes(b"")
    (tmp_path / "clip.mp4").write_bytes(b"x")
    (tmp_path / "clip.mpg").write_bytes(b"x")
    error = refusal(run, tmp_path, *[a.format(tmp=tmp_path) for a in extra])
    assert message in error, error
