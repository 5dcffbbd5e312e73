"""inr.fit: the three documented lines work on a file and on arrays of each kind, the model is the command line's
(same task, registry settings and Trainer: the same numbers as train.py with the method's overlay), and bad
input is refused in one line."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

import inr
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.methods.fitting import fit
from inr.methods.registry import METHODS, Setting
from inr.run.cli import cli_main
from inr.tasks import ImageFitting, SignalFitting, VolumeFitting


def test_the_three_lines_on_an_image_file():
    model = inr.fit("data/astronaut.png", method="gaussian", steps=10, resolution=16, width=16)
    image = model.render((32, 32))
    assert isinstance(model, ImageFitting) and tuple(image.shape) == (3, 32, 32)
    assert 0.0 <= float(image.min()) and float(image.max()) <= 1.0  # the sigmoid's range
    summary = model.summary
    assert set(summary) == {"train/psnr", "test/psnr", "full/psnr", "full/ssim", "seconds", "steps"}
    assert summary["steps"] == 10 and all(math.isfinite(v) for v in summary.values())
    assert model.render().shape == (3, 16, 16) and not model.training  # the data's grid; eval mode
    assert model.evaluate()["test/psnr"] == pytest.approx(summary["test/psnr"], rel=1e-6)  # its data attached
    spec = METHODS["gaussian"].resolve(Setting(in_dim=2, train_side=8, width=16, steps=10))
    assert isinstance(model.encoder, GaussianEncoding) and model.network[0].out_features == 16
    sigma = spec.encoder.init_args["sigma"]
    assert float(model.encoder.b.std()) == pytest.approx(sigma, rel=0.2)  # the registry's σ for an 8² training grid


@pytest.mark.slow
def test_the_same_numbers_as_train_py_with_the_methods_overlay(tmp_path):
    """No second engine: the command line, given the registry's settings for this grid as an overlay, trains the
    same model to the same closing metrics."""
    spec = METHODS["gaussian"].resolve(Setting(in_dim=2, train_side=8, width=16, steps=10))
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"model": {"init_args": spec.overlay()}}))
    args = ["--config", "image.yaml", "--config", str(overlay), "--data.init_args.resolution", "16"]
    args += ["--trainer.max_steps", "10", "--trainer.callbacks", "null", "--trainer.logger", "false"]
    cli_main([*args, "--trainer.default_root_dir", str(tmp_path), "--trainer.enable_progress_bar", "false"])
    command = json.loads((tmp_path / "metrics.json").read_text())["metrics"]
    model = fit("data/astronaut.png", method="gaussian", steps=10, resolution=16, width=16)
    for key, value in command.items():
        assert model.summary[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key


def test_arrays_of_each_kind_fit_and_improve():
    x = np.arange(64) / 64
    wave = np.sin(2 * np.pi * 3 * x) + 0.5 * np.cos(2 * np.pi * 5 * x)  # (N,): a signal of any real values
    short, long = (fit(wave, method="positional", steps=n, width=32) for n in (1, 150))
    assert isinstance(long, SignalFitting) and long.data_range == pytest.approx(float(wave.max() - wave.min()))
    assert long.summary["test/psnr"] > short.summary["test/psnr"] + 10
    assert tuple(long.predict(torch.rand(7, 1)).shape) == (7, 1)
    image = (np.random.default_rng(0).random((12, 10, 3)) * 255).astype(np.uint8)  # uint8: scaled to [0, 1]
    model = fit(torch.from_numpy(image), method="siren", steps=5, width=16)
    assert isinstance(model, ImageFitting) and model.render().shape == (3, 12, 10)
    torch.testing.assert_close(model.data.values_grid(), torch.from_numpy(image).permute(2, 0, 1).float() / 255)
    volume = np.random.default_rng(1).random((12, 12, 12))
    model = fit(volume, method="gaussian", steps=5, width=16)
    assert isinstance(model, VolumeFitting) and model.mode == "density" and model.render((4, 4, 4)).shape == (1, 4, 4, 4)
    channels = fit(np.stack([wave, -wave], axis=1), kind="signal", method="none", steps=3, width=8)  # (N, C)
    assert channels.out_channels == 2 and channels.data.shape == (64,)


def test_bad_input_is_one_line(tmp_path):
    cases = [
        ((np.zeros((8, 8)),), {}, "the array is constant"),
        ((np.full((8, 8), 2.0) + np.eye(8),), {}, r"image values must lie in \[0, 1\]"),
        ((np.random.rand(8, 8),), {"method": "nope"}, "unknown method 'nope'; choose one of none, basic"),
        ((np.random.rand(8),), {"method": "mfn"}, "defined for 2-D coordinates only"),
        ((np.random.rand(8, 8),), {"steps": 0}, "steps must be a whole number ≥ 1"),
        ((np.random.rand(2, 2, 2, 2, 2),), {}, "5 dimensions"),
        ((np.random.rand(8, 8),), {"resolution": 4}, "an array is fitted on its own grid"),
        ((str(tmp_path / "missing.png"),), {}, "missing.png"),
        ((str(tmp_path / "notes.txt"),), {}, r"cannot read a \.txt"),
    ]
    (tmp_path / "notes.txt").write_text("not a signal")
    for args, kwargs, message in cases:
        with pytest.raises(InputError, match=message):
            fit(*args, **{"steps": 1, **kwargs})


def test_the_loggers_given_get_the_closing_metrics_and_settings_in_one_event_file(tmp_path):
    tensorboard, table = TensorBoardLogger(tmp_path, name="tb"), CSVLogger(tmp_path, name="csv")
    image = np.random.default_rng(0).random((16, 16, 3))
    model = fit(image, method="gaussian", steps=6, width=16, logger=[tensorboard, table])
    closing = {k: v for k, v in model.summary.items() if "/" in k}
    run = Path(tensorboard.log_dir)
    assert len(list(run.glob("events.out.tfevents.*"))) == 1  # closed after the closing metrics, not reopened
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    (hp,) = acc.Scalars("hp_metric")  # once, at the end: the held-out PSNR
    assert hp.step == 6 and hp.value == pytest.approx(closing["test/psnr"], rel=1e-6)
    for key, value in closing.items():
        (event,) = acc.Scalars(key)
        assert event.step == 6 and event.value == pytest.approx(value, rel=1e-6), key
    content = acc.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    start = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    assert start.hparams["method"].string_value == "gaussian" and start.hparams["steps"].number_value == 6
    with open(Path(table.log_dir) / "metrics.csv") as f:
        (last,) = [r for r in csv.DictReader(f) if r.get("test/psnr")]
    assert int(last["step"]) == 6 and float(last["full/ssim"]) == pytest.approx(closing["full/ssim"], rel=1e-6)
