"""The real command line, as a subprocess: a tiny training run end to end, and bad input refused."""

import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.run.cli import cli_main

ROOT = Path(__file__).resolve().parents[2]
# image.yaml at 32², a 32-wide network on 32 features, 20 steps, validating every epoch; image.yaml logs every 50
# steps: a 20-step run needs a finer cadence for a training curve
TINY = ("image.yaml", 32, "--trainer.check_val_every_n_epoch", 1, "--trainer.log_every_n_steps", 5)


@pytest.fixture(scope="module")
def tiny(tiny_flags):
    return tiny_flags(*TINY, width=32, features=32, steps=20, bar=False)


def run_train(args, cwd=ROOT, timeout=300):
    return subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_tiny_training_logs_scalars_images_and_summary(tmp_path, tiny):
    proc = run_train(tiny + ["--trainer.logger.init_args.save_dir", str(tmp_path)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = [line for line in proc.stdout.splitlines() if line.startswith("summary:")]
    assert len(summary) == 1 and "test/psnr" in summary[0] and "train/psnr" in summary[0]
    (event_file,) = tmp_path.glob("image/version_0/events.out.tfevents.*")
    acc = EventAccumulator(str(event_file), size_guidance={"images": 0, "scalars": 0})
    acc.Reload()
    scalars, images = set(acc.Tags()["scalars"]), set(acc.Tags()["images"])
    assert {"train/loss", "train/psnr_step", "train/psnr_epoch", "val/psnr", "val/ssim"} <= scalars
    assert {"images/reconstruction", "images/abs_error", "images/target"} <= images
    # the default config measures spectral bias every epoch and keeps its history in the run directory
    assert {"spectral/rel_err/dc", "spectral/rel_err/low", "spectral/rel_err/high", "spectral/rel_err/band_02"} <= scalars
    assert "spectral/heatmap" in images
    assert (tmp_path / "image/version_0/spectral_history.npz").exists()
    losses = [e.value for e in acc.Scalars("train/loss")]
    assert losses[-1] < losses[0]  # it learned something in 20 steps
    assert (tmp_path / "image/version_0/config.yaml").exists()
    assert list(tmp_path.glob("image/version_0/checkpoints/*.ckpt"))


BAD_INPUTS = {
    "missing file": (["--data.init_args.path", "no/such/image.png"], "file not found"),
    "not an image": (["--data.init_args.path", "{text_png}"], "not a readable image"),
    "unknown key": (["--model.init_args.encoder.init_args.sigmaa", "3"], "sigmaa"),
    "unknown encoder": (["--model.init_args.encoder.class_path", "inr.encoders.NoSuchEncoding"], "NoSuchEncoding"),
    "unknown top-level key": (["--trainer.max_stepz", "3"], "max_stepz"),
    "empty file": (["--data.init_args.path", "{empty_png}"], "file is empty"),
    "constant image": (["--data.init_args.path", "{flat_png}"], "constant"),
    "unsupported extension": (["--data.init_args.path", "{text_png}.webm"], "unsupported image extension"),
    "resolution beyond memory": (["--data.init_args.resolution", "2000000"], "GiB"),
}


def _bad_input_files(tmp_path):
    text_png = tmp_path / "text.png"
    text_png.write_text("not an image at all")
    (tmp_path / "text.png.webm").write_text("x")
    empty_png = tmp_path / "empty.png"
    empty_png.write_bytes(b"")
    flat_png = tmp_path / "flat.png"
    iio.imwrite(flat_png, np.full((16, 16), 128, dtype=np.uint8))
    return {"text_png": text_png, "empty_png": empty_png, "flat_png": flat_png}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, capsys, name, tiny):
    """Each bad input through ``cli_main`` (in process: the same code path as train.py, without start-up)."""
    args, expected = BAD_INPUTS[name]
    args = [a.format(**_bad_input_files(tmp_path)) for a in args]
    out = tmp_path / "runs"
    with pytest.raises(SystemExit) as exit_info:
        cli_main([*tiny, "--trainer.logger.init_args.save_dir", str(out), *args])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert exit_info.value.code == 2
    assert len(errors) == 1 and expected in errors[0], errors
    assert not out.exists() or not any(out.rglob("*")), "left files behind"


@pytest.mark.slow
def test_bad_input_through_the_real_script(tmp_path, tiny):
    """Two bad inputs as real subprocesses: one line on stderr, no traceback, exit 2."""
    procs = []
    for name in ("missing file", "unknown encoder"):
        cmd = [
            sys.executable,
            str(ROOT / "train.py"),
            *tiny,
            "--trainer.logger.init_args.save_dir",
            str(tmp_path),
            *BAD_INPUTS[name][0],
        ]
        procs.append((name, subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for name, proc in procs:
        _, stderr = proc.communicate(timeout=300)
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert proc.returncode == 2 and len(errors) == 1 and BAD_INPUTS[name][1] in errors[0], (name, stderr[-2000:])
        assert "Traceback" not in stderr
    assert not any(tmp_path.rglob("*"))


def test_print_config_round_trips(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli_main(["--config", "image.yaml", "--print_config"])
    printed = capsys.readouterr().out
    cfg = tmp_path / "printed.yaml"
    cfg.write_text(printed)
    with pytest.raises(SystemExit):
        cli_main(["--config", str(cfg), "--print_config"])
    assert capsys.readouterr().out == printed and "GaussianEncoding" in printed
