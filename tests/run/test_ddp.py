"""Two-process DDP on CPU (gloo, localhost) through the real CLI, against one process.

A full batch (``batch_size: null``) is sharded: each rank trains on its share of the training split with the
weight that makes the averaged gradient the full batch's, and evaluates its share of the held-out split. The
run ends with the parameters of a single-process run, writes one set of logs whose losses are the
single process's, and its held-out metrics equal a single-process evaluation of its final parameters. An
inverse problem replicates its batch on every rank (its operator needs the whole field) and agrees too.
A two-process run killed after a mid-epoch checkpoint and resumed with ``--ckpt_path last`` ends bit for bit
as the uninterrupted one, with random batches (each rank draws its own) and with the sharded full batch. With four
optimizer steps per Lightning step (``model.inner_steps``) the sharded full batch ends bit for bit as with one,
and resumes exactly from a checkpoint both ranks wrote between two inner steps.

Each 2-process launch costs two interpreter starts one after the other (rank 0 starts rank 1 in
``Trainer.fit``), leaving a core idle meanwhile: independent launches run at the same time, and the
single-process references run in this process while they are under way.
"""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.run.cli import build_cli, cli_main, resolve_config_names

ROOT = Path(__file__).resolve().parents[2]
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
        "1",  # an epoch of 10 full-batch steps: validation at steps 10 and 20
        "--trainer.log_every_n_steps",
        "10",
        "--trainer.enable_progress_bar",
        "false",
        "--trainer.logger.init_args.save_dir",
        str(save_dir),
    ]


class Launch:
    """``train.py args`` on 2 processes, started now; ``finish()`` waits for it and checks it ended as one run."""

    def __init__(self, tmp_path: Path, args: list[str], name: str) -> None:
        self.out, self.err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:  # files, not pipes: nothing blocks on a full pipe
            self.proc = subprocess.Popen(
                [sys.executable, str(ROOT / "train.py"), *args, *TWO_PROCESSES],
                cwd=tmp_path,
                stdout=out,
                stderr=err,
                start_new_session=True,  # rank 1 is rank 0's child: one process group to kill if they hang
            )

    def finish(self, timeout: float = 300) -> tuple[str, str]:
        try:
            code = self.proc.wait(timeout)  # a launch takes 20-40 s on the loaded 2-core machine; a hang, forever
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            code = None
        stdout, stderr = self.out.read_text(), self.err.read_text()
        assert code == 0, f"exit {code}: {stderr[-4000:]}"
        assert "MEMBER: 2/2" in stderr + stdout
        assert sum(line.startswith("summary:") for line in stdout.splitlines()) == 1  # rank 0 only
        assert "sync_dist" not in stderr  # held-out values are equal on every rank: no advice for them
        return stdout, stderr


def _run_dir(save_dir: Path, name: str) -> Path:
    assert [p.name for p in (save_dir / name).iterdir()] == ["version_0"]  # one set of logs
    return save_dir / name / "version_0"


def _state(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]


def _stopped_copy(run: Path, step: int, save_dir: Path) -> Path:
    """``run`` as it stood when killed right after its step-``step`` checkpoint: a copy under ``save_dir``
    without its later checkpoints (``last.ckpt`` among them) or its event file (the resumed run logs its own).
    Modification times are kept, so the step-``step`` file is the newest that ``--ckpt_path last`` finds."""
    copy = save_dir / run.parent.name / run.name
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("events.out.tfevents.*"))
    for path in (copy / "checkpoints").glob("*.ckpt"):
        if torch.load(path, weights_only=True)["global_step"] > step:
            path.unlink()
    return copy


def _assert_resumed_exactly(straight: Path, resumed: Path, output: str, step: int, same) -> None:
    """The resumed run restored the step-``step`` checkpoint in place and ended with the uninterrupted run's
    parameters and Adam moments, bit for bit: both ranks draw the same batches in both runs, each gradient
    element is the mean of two ranks' values (a sum of two floats: the same whichever comes first), and
    the optimizer state is restored exactly, so no rounding differs."""
    (restored,) = (resumed / "checkpoints").glob(f"*-step={step}.ckpt")
    assert f"Restoring states from the checkpoint path at {restored}" in output
    assert (resumed / "config.resume-1.yaml").is_file()  # recorded on rank 0 once the checkpoint had loaded
    same(*(torch.load(run / "checkpoints" / "last.ckpt", weights_only=True) for run in (straight, resumed)))


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


@pytest.mark.slow
def test_sharded_full_batch_trains_as_one_process_and_both_batchings_resume_exactly(
    tmp_path, tiny_run_args, assert_same_training_state
):
    # sharded full batch, 30² every_other: 225 training and 225 held-out points, shared 113 / 112: unequal
    # shares, weighted; random batches: each rank draws its own 16 of the 64 training points of the tiny run
    # per step (seeded by seed, epoch and rank), 5 steps an epoch, 10 steps. The two 2-process runs and the
    # single-process reference run at the same time: a launch leaves a core idle while each rank starts.
    args = ["--config", "image.yaml", "--data.init_args.resolution", "30", "--data.init_args.batch_size", "null"]
    # 10-step epochs, one optimizer step per Lightning step (against `inner` below)
    args += ["--data.init_args.steps_per_epoch", "10", "--model.init_args.inner_steps", "1"]
    every_5 = ["--checkpoint.every_n_train_steps", "5", "--checkpoint.save_top_k", "-1"]  # kept: steps 5, 10, 15, 20
    random_args = lambda save_dir, *extra: tiny_run_args(
        save_dir, "--data.init_args.batch_size", "16", "--checkpoint.every_n_train_steps", "2", *extra
    )
    inner = ["--model.init_args.inner_steps", "4"]  # epochs of 10 steps: groups of 4, 4, 2; steps 5 and 15 inside one
    full = Launch(tmp_path, [*args, *_common(tmp_path / "two"), *every_5], "two")
    random = Launch(tmp_path, random_args(tmp_path / "random", "--checkpoint.save_top_k", "-1"), "random")
    grouped = Launch(tmp_path, [*args, *_common(tmp_path / "grouped"), *every_5, *inner], "grouped")
    cli_main([*args, *_common(tmp_path / "one"), "--trainer.accelerator", "cpu", "--trainer.devices", "1"])
    full.finish()
    random.finish()
    grouped.finish()
    one, two = _run_dir(tmp_path / "one", "image"), _run_dir(tmp_path / "two", "image")
    random_run = _run_dir(tmp_path / "random", "image")
    grouped_run = _run_dir(tmp_path / "grouped", "image")

    # both killed after a mid-epoch checkpoint and resumed: the full batch after step 15 (the middle of the
    # second 10-step epoch), random batches after step 8 (the third batch of the second epoch)
    full_stopped = _stopped_copy(two, 15, tmp_path / "two_resumed")
    full_resume = Launch(tmp_path, [*args, *_common(tmp_path / "two_resumed"), *every_5, "--ckpt_path", "last"], "two_resumed")
    random_stopped = _stopped_copy(random_run, 8, tmp_path / "random_resumed")
    random_resume = Launch(tmp_path, random_args(tmp_path / "random_resumed", "--ckpt_path", "last"), "random_resumed")
    grouped_stopped = _stopped_copy(grouped_run, 15, tmp_path / "grouped_resumed")
    grouped_args = [*args, *_common(tmp_path / "grouped_resumed"), *every_5, *inner, "--ckpt_path", "last"]
    grouped_resume = Launch(tmp_path, grouped_args, "grouped_resumed")

    # four inner steps per Lightning step: the two-process run's parameters, moments and logs are K = 1's, exactly
    a, b = (torch.load(run / "checkpoints" / "last.ckpt", weights_only=True) for run in (two, grouped_run))
    assert a["global_step"] == b["global_step"] == 20
    assert all(torch.equal(value, b["state_dict"][key]) for key, value in a["state_dict"].items())
    assert _scalars(grouped_run)["train/loss"] == _scalars(two)["train/loss"]

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

    _assert_resumed_exactly(two, full_stopped, "".join(full_resume.finish()), 15, assert_same_training_state)
    _assert_resumed_exactly(random_run, random_stopped, "".join(random_resume.finish()), 8, assert_same_training_state)
    _assert_resumed_exactly(grouped_run, grouped_stopped, "".join(grouped_resume.finish()), 15, assert_same_training_state)
    for resumed in (full_stopped, random_stopped, grouped_stopped):
        assert [p.name for p in resumed.parent.iterdir()] == ["version_0"]  # continued in place


@pytest.mark.slow
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
    launch = Launch(tmp_path, [*args, *_common(tmp_path / "two")], "two")
    cli_main([*args, *_common(tmp_path / "one"), "--trainer.accelerator", "cpu", "--trainer.devices", "1"])
    launch.finish()
    one, two = _run_dir(tmp_path / "one", "ct"), _run_dir(tmp_path / "two", "ct")
    assert _max_difference(_state(one), _state(two)) <= 1e-6  # equal gradients on both ranks: their mean is each
    logs_one, logs_two = _scalars(one), _scalars(two)
    for tag in ("train/loss", "train/residual_epoch", "val/psnr", "val/ssim"):
        _close_series(logs_two[tag], logs_one[tag], rtol=1e-5)
