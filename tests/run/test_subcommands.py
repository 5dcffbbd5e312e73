"""The subcommands on a trained checkpoint: validate and test score the held-out split as training did,
predict renders the field to files at any resolution, and bad input gets one line and exit 2."""

import math

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.io.video import read_video


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_run_args, cli_run):
    """A 10-step run: its save_dir, checkpoint, held-out PSNR from the closing evaluation and its target."""
    save_dir = tmp_path_factory.mktemp("runs")
    code, cli = cli_run(tiny_run_args(save_dir))
    assert code == 0
    dm = cli.datamodule
    target = dm.values_grid().permute(1, 2, 0).numpy()  # (C, H, W) -> (H, W, C)
    return {
        "save_dir": save_dir,
        "ckpt": save_dir / "image/version_0/checkpoints/last.ckpt",
        "test_psnr": cli.model.evaluate()["test/psnr"],
        "target": target,
    }


@pytest.mark.slow
def test_validate_and_test_score_the_checkpoint_on_the_held_out_split(trained, capsys, tiny_run_args, cli_run):
    code, validated = cli_run(["validate", *tiny_run_args(trained["save_dir"]), "--ckpt_path", "last"])
    assert code == 0
    code, tested = cli_run(["test", *tiny_run_args(trained["save_dir"]), "--ckpt_path", str(trained["ckpt"])])
    assert code == 0
    val = float(validated.trainer.callback_metrics["val/psnr"])
    test = float(tested.trainer.callback_metrics["test/psnr"])
    assert val == pytest.approx(trained["test_psnr"], abs=1e-4) and test == pytest.approx(val, abs=1e-6)
    assert "test/ssim" in tested.trainer.callback_metrics
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(("validate:", "test:"))]
    assert len(lines) == 2 and "val/psnr" in lines[0] and f"{trained['ckpt']} (step 10)" in lines[1]
    # each wrote a run directory of its own beside the training run, which it left unchanged
    assert (trained["save_dir"] / "image/version_1/config.yaml").is_file()
    assert (trained["save_dir"] / "image/version_2/config.yaml").is_file()


@pytest.mark.slow
def test_predict_renders_the_field_at_the_data_grid_and_at_twice_its_resolution(
    trained, tmp_path, capsys, tiny_run_args, cli_run
):
    out = tmp_path / "renders"
    assert (
        cli_run(["predict", *tiny_run_args(trained["save_dir"]), "--ckpt_path", str(trained["ckpt"]), "--out", str(out)])[0] == 0
    )
    field = np.load(out / "field.npy")
    assert field.shape == (16, 16, 3) and field.dtype == np.float32
    # the held-out pixels [1::2, 1::2] of the rendered field score the PSNR of training's own evaluation
    mse = np.mean((field[1::2, 1::2].astype(np.float64) - trained["target"][1::2, 1::2]) ** 2)
    assert -10 * math.log10(mse) == pytest.approx(trained["test_psnr"], abs=1e-3)
    assert np.array_equal(iio.imread(out / "image.png"), np.round(np.clip(field, 0, 1) * 255).astype(np.uint8))

    assert cli_run(["predict", *tiny_run_args(trained["save_dir"]), "--ckpt_path", "last", "--scale", "2"])[0] == 0
    (predictions,) = trained["save_dir"].glob("image/version_*/predictions")
    assert iio.imread(predictions / "image.png").shape == (32, 32, 3)
    assert np.load(predictions / "field.npy").shape == (32, 32, 3)
    summary = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("predict:")]
    assert len(summary) == 2 and summary[1].startswith("predict: 32×32 from ") and "image.png" in summary[1]


@pytest.mark.parametrize(
    "command, extra, message",
    [
        ("validate", [], "validate needs --ckpt_path"),
        ("predict", ["--ckpt_path", "last", "--shape", "[4]"], "--shape [4]: give 2 sizes"),
        ("predict", ["--ckpt_path", "last", "--scale", "0"], "--scale must be a finite number > 0"),
        ("test", ["--ckpt_path", "{bad}"], "not a readable checkpoint"),
        ("predict", ["--ckpt_path", "{ckpt}", "--model.init_args.encoder.init_args.num_features", "8"], "made by another model"),
        ("predict", ["--ckpt_path", "last", "--out", "{bad}/renders"], "is a file, not a directory"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(
    trained, tmp_path, capsys, command, extra, message, tiny_run_args, cli_run, files_under
):
    bad = tmp_path / "notes.ckpt"
    bad.write_text("not a checkpoint")
    before = files_under(trained["save_dir"])
    capsys.readouterr()
    code, _ = cli_run([command, *tiny_run_args(trained["save_dir"]), *[a.format(bad=bad, ckpt=trained["ckpt"]) for a in extra]])
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error:")]
    assert code == 2 and len(errors) == 1 and message in errors[0], errors
    assert files_under(trained["save_dir"]) == before


@pytest.mark.slow
def test_predict_of_a_video_run_writes_frames_and_an_mp4(tmp_path, cli_run, tiny_flags):
    frames = ("--data.init_args.frames", 4)
    video = tiny_flags("video.yaml", 12, *frames, width=16, features=16, bar=False, save_dir=tmp_path)
    # training also writes the reconstruction as a video when ImageLogger is asked to
    logger = ["--trainer.callbacks", "[{class_path: inr.callbacks.ImageLogger, init_args: {video: mp4, fps: 4}}]"]
    assert cli_run([*video, "--trainer.max_steps", "3", *logger])[0] == 0
    reconstruction = read_video(tmp_path / "video/version_0/media/reconstruction.mp4")
    assert reconstruction.shape == (4, 12, 12, 3)
    assert cli_run(["predict", *video, "--ckpt_path", "last", "--shape", "[8, 12, 12]", "--out", str(tmp_path / "out")])[0] == 0
    frames = sorted((tmp_path / "out/frames").glob("frame_*.png"))
    assert [p.name for p in frames] == [f"frame_{i:04d}.png" for i in range(8)]
    field = torch.from_numpy(np.load(tmp_path / "out/field.npy"))  # (T, H, W, C)
    decoded = read_video(tmp_path / "out/video.mp4").astype(np.float64) / 255
    assert decoded.shape == (8, 12, 12, 3)
    # H.264 at crf 18 in yuv420p: a mean error under 2 % of the range (measured on this clip: 0.6 %)
    assert np.abs(decoded - field.numpy()).mean() < 0.02


def test_sigterm_during_predict_exits_143_with_one_line_and_leaves_nothing(
    trained, tmp_path, capsys, monkeypatch, tiny_run_args, cli_run, files_under
):
    import os
    import signal

    import inr.tasks.base as base

    original = base.INRModule.predict_step

    def predict_step(self, batch, batch_idx):
        os.kill(os.getpid(), signal.SIGTERM)  # handled at once: nothing is rendered after it
        return original(self, batch, batch_idx)

    monkeypatch.setattr(base.INRModule, "predict_step", predict_step)
    before = files_under(trained["save_dir"])
    capsys.readouterr()
    code, _ = cli_run(["predict", *tiny_run_args(trained["save_dir"]), "--ckpt_path", "last", "--out", str(tmp_path / "out")])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("interrupted")]
    assert code == 143 and lines == ["interrupted by SIGTERM during predict: nothing was written"]
    assert files_under(trained["save_dir"]) == before and files_under(tmp_path / "out") == []
