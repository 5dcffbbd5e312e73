"""``VolumeFitting``: IoU and BCE against closed forms, tiny occupancy and density trainings through the CLI,
and bad input refused with exit code 2."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.data.volume import VolumeDataModule
from inr.errors import InputError
from inr.run.cli import build_cli, cli_main, resolve_config_names
from inr.tasks.volume import VolumeFitting

# the suite's tiny sphere run (tests/conftest.py), validating every third epoch
VALIDATE_EVERY_3 = ["--trainer.check_val_every_n_epoch", "3"]


@pytest.fixture
def run(tiny_sphere_args):
    """``run(save_dir, *extra)``: the tiny sphere run through the command line -> the CLI."""
    return lambda save_dir, *extra: cli_main(tiny_sphere_args(save_dir, *VALIDATE_EVERY_3, *extra))


def sphere_occupancy(n=16):
    return VolumeDataModule(builtin="sphere", resolution=n, split="all").values  # (N, 1) in {0, 1}


def test_iou_of_a_perfect_prediction_is_one_and_of_the_empty_prediction_zero():
    target = sphere_occupancy()
    iou = VolumeFitting().make_metrics()["iou"]
    assert float(iou(target.clone(), target)) == 1.0
    iou.reset()
    assert float(iou(torch.zeros_like(target), target)) == 0.0


def test_iou_of_a_shifted_prediction_equals_the_set_ratio():
    target = sphere_occupancy()
    grid = target.reshape(16, 16, 16)
    pred = torch.roll(grid, 2, dims=2).reshape(-1, 1) * 0.8 + 0.1  # probabilities 0.1 / 0.9
    t, p = grid.numpy().astype(bool).ravel(), (pred.numpy() > 0.5).ravel()
    expected = (t & p).sum() / (t | p).sum()
    assert abs(float(VolumeFitting().make_metrics()["iou"](pred, target)) - expected) < 1e-6


def test_occupancy_loss_is_bce_on_logits_and_postprocess_is_sigmoid():
    task = VolumeFitting(mode="occupancy")
    logits = torch.linspace(-4, 4, 9, dtype=torch.float64)[:, None]
    target = (torch.arange(9) % 2).double()[:, None]
    p = 1 / (1 + np.exp(-logits.numpy()))
    expected = -(target.numpy() * np.log(p) + (1 - target.numpy()) * np.log(1 - p)).mean()
    assert abs(float(task.loss(logits, target)) - expected) < 1e-12
    torch.testing.assert_close(task.postprocess(logits), torch.sigmoid(logits))
    dens = VolumeFitting(mode="density")
    torch.testing.assert_close(dens.loss(logits, target), F.mse_loss(logits, target))
    assert set(dens.make_metrics().keys()) == {"mse", "psnr"}


def test_occupancy_network_ending_in_a_sigmoid_is_refused():
    from functools import partial

    from inr.networks import MLP

    with pytest.raises(InputError, match="output_activation: none"):
        VolumeFitting(network=partial(MLP, width=8, depth=1, output_activation="sigmoid"), mode="occupancy")


def test_tiny_occupancy_trains_end_to_end_and_logs_central_slices(tmp_path, capsys, run):
    cli = run(tmp_path)
    summary = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("summary:")]
    assert len(summary) == 1 and "test/iou" in summary[0]
    results = cli.model.evaluate()
    assert results["test/iou"] > 0.8, results  # a sphere from 8³ training voxels, 60 steps
    (events,) = tmp_path.glob("volume/version_0/events.out.tfevents.*")
    acc = EventAccumulator(str(events), size_guidance={"images": 0, "scalars": 0})
    acc.Reload()
    assert {"val/iou", "train/loss"} <= set(acc.Tags()["scalars"])
    assert {f"images/reconstruction/slice_{i}" for i in range(3)} <= set(acc.Tags()["images"])
    pred = cli.model.render()
    assert pred.shape == (1, 16, 16, 16) and float(pred.min()) >= 0 and float(pred.max()) <= 1


def test_tiny_density_trains_end_to_end(tmp_path, run):
    cli = run(
        tmp_path,
        "--data.init_args.mode",
        "density",
        "--model.init_args.mode",
        "density",
        "--model.init_args.network.init_args.output_activation",
        "sigmoid",
        "--trainer.max_steps",
        "20",
    )
    results = cli.model.evaluate()
    assert {"train/psnr", "test/psnr", "train/mse", "test/mse"} <= set(results)
    assert results["test/psnr"] > 10  # above the ≈5 dB of predicting 0.5 everywhere for a 0/1-like target


def _bad(tmp_path):
    np.save(tmp_path / "flat.npy", np.zeros((8, 8)))
    nan = np.ones((6, 6, 6))
    nan[2, 3, 4] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    (tmp_path / "empty.npy").write_bytes(b"")
    (tmp_path / "v.nrrd").write_bytes(b"x")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--data.init_args.path", "{tmp}/flat.npy"], "2-D array"),
        (["--data.init_args.path", "{tmp}/nan.npy"], "NaN"),
        (["--data.init_args.path", "{tmp}/empty.npy"], "file is empty"),
        (["--data.init_args.path", "{tmp}/v.nrrd"], "unsupported extension"),
        (["--data.init_args.mode", "density", "--model.init_args.mode", "occupancy"], "model.mode"),
        (["--data.init_args.batch_size", "null", "--data.init_args.full_batch_limit", "100"], "data.batch_size"),
        (["--model.init_args.network.init_args.output_activation", "sigmoid"], "output_activation: none"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, run, refusal, extra, message):
    _bad(tmp_path)
    error = refusal(run, tmp_path, *[a.format(tmp=tmp_path) for a in extra])
    assert message in error, error
    assert not list(tmp_path.glob("volume/version_*/config.yaml"))  # no run directory left claiming a result


@pytest.mark.slow
def test_the_model_takes_its_mode_from_the_data(tmp_path, tiny_sphere_args):
    """The config says the mode once, in the data; the task follows it (metrics, loss, default network)."""
    cli = build_cli(resolve_config_names(tiny_sphere_args(tmp_path, *VALIDATE_EVERY_3, "--data.init_args.mode", "density")))
    assert cli.datamodule.mode == cli.model.mode == "density"
    assert set(cli.model.make_metrics()) == {"mse", "psnr"}
    occupancy = build_cli(resolve_config_names(tiny_sphere_args(tmp_path, *VALIDATE_EVERY_3)))
    assert occupancy.model.mode == "occupancy" and set(occupancy.model.make_metrics()) == {"iou"}
