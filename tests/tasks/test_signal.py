"""``SignalFitting``: its metrics against closed forms, a tiny training through the CLI, bad input refused."""

import math

import numpy as np
import pytest
import torch
from scipy.io import wavfile

from inr.run.cli import cli_main
from inr.tasks.signal import SignalFitting


@pytest.fixture
def run(tiny_flags):
    """``run(save_dir, *extra)``: 150 steps on two sinusoids of 2 and 5 cycles through the command line -> the CLI."""
    data = ("--data.init_args.generator", "sinusoids", "--data.init_args.length", 128, "--data.init_args.frequencies", "[2, 5]")
    model = ("--model.init_args.encoder.init_args.sigma", 4, "--model.init_args.network.init_args.depth", 2)
    optimizer = ("--model.init_args.optimizer.init_args.lr", 0.005)
    tiny = tiny_flags("signal.yaml", None, *data, *model, *optimizer, width=64, features=32, steps=150, bar=False)
    return lambda save_dir, *extra: cli_main([*tiny, "--trainer.logger.init_args.save_dir", str(save_dir), *extra])


def test_psnr_uses_the_peak_to_peak_range_of_minus_one_to_one():
    target = torch.linspace(-1, 1, 50)[:, None]
    metrics = SignalFitting(out_channels=1).make_metrics()
    result = metrics(target + 0.1, target)
    torch.testing.assert_close(result["mse"], torch.tensor(0.01))
    assert abs(float(result["psnr"]) - 10 * math.log10(2.0**2 / 0.01)) < 1e-3


@pytest.mark.slow
def test_tiny_signal_trains_end_to_end_through_the_cli(tmp_path, capsys, run):
    cli = run(tmp_path)
    summary = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("summary:")]
    assert len(summary) == 1 and "test/psnr" in summary[0]
    results = cli.model.evaluate()
    # two sinusoids of 2 and 5 cycles, 64 training samples: learned well within 150 steps
    assert results["train/psnr"] > 30 and results["test/psnr"] > 30
    assert cli.model.render().shape == (1, 128)


def test_stereo_wav_with_two_output_channels(tmp_path, run):
    t = np.arange(256) / 256
    stereo = np.stack([np.sin(2 * np.pi * 3 * t), np.cos(2 * np.pi * 4 * t)], axis=1)
    wavfile.write(tmp_path / "s.wav", 8000, (stereo * 20000).astype(np.int16))
    cli = run(
        tmp_path,
        "--data.init_args.path",
        str(tmp_path / "s.wav"),
        "--data.init_args.channels",
        "keep",
        "--data.init_args.length",
        "null",
        "--trainer.max_steps",
        "5",
    )
    assert cli.model.out_channels == 2 and cli.model.render().shape == (2, 256)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--data.init_args.path", "{empty}"], "file is empty"),
        (["--data.init_args.path", "{tmp}/clip.flac"], "unsupported audio extension"),
        (["--model.init_args.encoder.init_args.in_dim", "2"], "in_dim: 1"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, run, refusal, extra, message):
    (tmp_path / "empty.wav").write_bytes(b"")
    extra = [a.format(empty=tmp_path / "empty.wav", tmp=tmp_path) for a in extra]
    assert message in refusal(run, tmp_path, *extra)
