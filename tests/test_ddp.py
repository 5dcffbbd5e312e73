"""Two-process DDP on CPU (gloo, localhost) through the real CLI, against one process.

A full batch (``batch_size: null``) is sharded: each rank trains on its share of the training split with the
weight that makes the averaged gradient the full batch's, and evaluates its share of the held-out split. The
run ends with the parameters of a single-process run, writes one set of logs whose losses are the
single process's, and its held-out metrics equal a single-process evaluation of its final parameters. An
inverse problem replicates its batch on every rank (its operator needs the whole field) and agrees too.
"""

import subprocess
import sys
from pathlib import Path

import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.cli import build_cli, cli_main, resolve_config_names

ROOT = Path(__file__).resolve().parents[1]
TWO_PROCESSES = ["--trainer.accelerator", "cpu", "--trainer.devices", "2", "--trainer.strategy", "ddp"]


def _common(save_dir: Path) -> list[str]:
    return [
        "--model.init_args.network.init_args.width",
        "32",
        "--model.init_args.encoder.init_args.num_features",
        "32",
        "--trainer.max_steps",
        "20",  # 20 Adam steps at the configs' lr 1e-3
        "--trainer.check_val_every_n_epoch",
        "1",  # an epoch is 10 full-batch steps: validation at steps 10 and 20
        "--trainer.enable_progress_bar",
        "false",
        "--trainer.logger.init_args.save_dir",
        str(save_dir),
    ]


def _ddp(tmp_path: Path, args: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args, *TWO_PROCESSES], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "MEMBER: 2/2" in proc.stderr + proc.stdout
    assert sum(line.startswith("summary:") for line in proc.stdout.splitlines()) == 1  # rank 0 only
    assert "sync_dist" not in proc.stderr  # held-out values are equal on every rank: no advice for them
    return proc


def _run_dir(save_dir: Path, name: str) -> Path:
    assert [p.name for p in (save_dir / name).iterdir()] == ["version_0"]  # one set of logs
    return save_dir / name / "version_0"


def _state(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]


def _max_difference(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float((a[k].float() - b[k].float()).abs().max()) for k in a)


def _scalars(run: Path) -> dict[str, list[tuple[int, float]]]:
    (event_file,) = run.glob("events.out.tfevents.*")
    acc = EventAccumulator(str(event_file))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _close_series(a, b, rtol: float) -> None:
    assert [s for s, _ in a] == [s for s, _ in b]
    for (step, x), (_, y) in zip(a, b):
        assert abs(x - y) <= rtol * abs(y), (step, x, y)


def _single_process_validation(args: list[str], state: dict, root: Path) -> dict[str, float]:
    # no logger: the saved config goes to default_root_dir (the cwd unless given), so give it a directory of the test's
    cli = build_cli(
        resolve_config_names(
            [
                *args,
                "--trainer.logger",
                "false",
                "--trainer.default_root_dir",
                str(root),
                "--trainer.accelerator",
                "cpu",
                "--trainer.devices",
                "1",
            ]
        )
    )
    cli.model.load_state_dict(state)
    (metrics,) = cli.trainer.validate(cli.model, datamodule=cli.datamodule, verbose=False)
    return metrics


def test_sharded_full_batch_trains_and_evaluates_as_one_process(tmp_path):
    # 30² every_other: 225 training and 225 held-out points, shared 113 / 112: unequal shares, weighted
    args = ["--config", "image.yaml", "--data.init_args.resolution", "30", "--data.init_args.batch_size", "null"]
    cli_main([*args, *_common(tmp_path / "one"), "--trainer.accelerator", "cpu", "--trainer.devices", "1"])
    _ddp(tmp_path, [*args, *_common(tmp_path / "two")])
    one, two = _run_dir(tmp_path / "one", "image"), _run_dir(tmp_path / "two", "image")

    assert _max_difference(_state(one), _state(two)) <= 1e-5  # max |Δθ| after 20 Adam steps

    logs_one, logs_two = _scalars(one), _scalars(two)
    assert len(logs_two["val/psnr"]) == 2  # one value per validation, not one per rank
    assert len(logs_two["train/psnr_epoch"]) == 2  # one per epoch, from the states of both ranks
    assert "spectral/rel_err/low" in logs_two  # rank 0's callbacks render the grid the shares do not hold
    for tag in ("train/loss", "train/psnr_step", "train/psnr_epoch", "val/psnr", "val/ssim"):
        _close_series(logs_two[tag], logs_one[tag], rtol=1e-5)  # the full batch's values, not rank 0's share

    # held-out metrics of the sharded evaluation = one process evaluating the same final parameters
    single = _single_process_validation(args + _common(tmp_path / "eval"), _state(two), tmp_path / "eval")
    assert abs(logs_two["val/psnr"][-1][1] - single["val/psnr"]) <= 1e-4  # dB; float32 sums in another order
    assert abs(logs_two["val/ssim"][-1][1] - single["val/ssim"]) <= 1e-5  # SSIM of the gathered held-out grid


def test_inverse_problem_replicates_its_batch_and_trains_as_one_process(tmp_path):
    # CT at 15²: every rank projects the whole field; the held-out grid (all 225 points) is evaluated in shares
    args = [
        "--config",
        "ct.yaml",
        "--data.init_args.resolution",
        "15",
        "--data.init_args.angles",
        "8",
        "--trainer.callbacks",
        "null",
    ]
    cli_main([*args, *_common(tmp_path / "one"), "--trainer.accelerator", "cpu", "--trainer.devices", "1"])
    _ddp(tmp_path, [*args, *_common(tmp_path / "two")])
    one, two = _run_dir(tmp_path / "one", "ct"), _run_dir(tmp_path / "two", "ct")
    assert _max_difference(_state(one), _state(two)) <= 1e-6  # equal gradients on both ranks: their mean is each
    logs_one, logs_two = _scalars(one), _scalars(two)
    for tag in ("train/loss", "train/residual_epoch", "val/psnr", "val/ssim"):
        _close_series(logs_two[tag], logs_one[tag], rtol=1e-5)
