"""``VideoFitting``: per-frame SSIM, a tiny training through the CLI on a GIF written here, bad input."""

import imageio.v3 as iio
import numpy as np
import pytest
import torch
from torchmetrics.functional.image import structural_similarity_index_measure as ssim

from inr.run.cli import cli_main
from inr.tasks.video import VideoFitting

TINY = [
    "--config",
    "video.yaml",
    "--data.init_args.resolution",
    "12",
    "--data.init_args.frames",
    "4",
    "--model.init_args.encoder.init_args.num_features",
    "32",
    "--model.init_args.network.init_args.width",
    "32",
    "--model.init_args.network.init_args.depth",
    "2",
    "--trainer.max_steps",
    "20",
    "--trainer.check_val_every_n_epoch",
    "1",
    "--trainer.enable_progress_bar",
    "false",
]


def run(tmp_path, *extra):
    return cli_main(TINY + ["--trainer.logger.init_args.save_dir", str(tmp_path), *extra])


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


def test_tiny_video_from_a_gif_trains_end_to_end(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frames = np.stack([np.roll(rng.integers(0, 256, size=(12, 12, 3), dtype=np.uint8), t, axis=1) for t in range(4)])
    iio.imwrite(tmp_path / "clip.gif", frames, loop=0)
    cli = run(tmp_path, "--data.init_args.path", str(tmp_path / "clip.gif"))
    summary = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("summary:")]
    assert len(summary) == 1 and {"test/psnr", "full/psnr", "full/ssim"} <= {p.split()[0] for p in summary[0][9:].split(" | ")}
    assert cli.model.render().shape == (3, 4, 12, 12)
    assert cli.model.data.train_shape == (2, 6, 6)


@pytest.mark.slow
def test_builtin_clip_trains_and_improves_with_steps(tmp_path):
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
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, extra, message):
    (tmp_path / "empty.gif").write_bytes(b"")
    (tmp_path / "clip.mp4").write_bytes(b"x")
    (tmp_path / "clip.mpg").write_bytes(b"x")
    with pytest.raises(SystemExit) as exc:
        run(tmp_path, *[a.format(tmp=tmp_path) for a in extra])
    assert exc.value.code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and message in err[0], err
