"""Signals under two-process DDP (CPU, gloo). Through the real command: ``kill <pid>`` of the process the
user started (rank 0, which started rank 1) delivers SIGTERM to rank 0 alone; every rank stops after the
same step, one complete ``last.ckpt`` is written, the command exits 143 within seconds, and ``--ckpt_path
last`` resumes from it. A launch that does not end is killed after a bound, so a hang fails the test instead
of blocking the suite. Then, without processes, the pieces a launch cannot time: the ranks' agreement after a
batch, a Ctrl-C that reaches every process of the group (as Ctrl-C in a terminal does; torchrun and SLURM
also signal every rank) together with the SIGTERM rank 0 passes on, and the checkpoint path read without a
collective.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from lightning.pytorch.loggers import TensorBoardLogger

from inr.run.checkpoints import read_checkpoint
from inr.run.cli import cli_main
from inr.run.signals import GracefulStop, interrupt_checkpoint_path

ROOT = Path(__file__).resolve().parents[2]
TWO_PROCESSES = ["--trainer.accelerator", "cpu", "--trainer.devices", "2", "--trainer.strategy", "ddp"]
EVERY_EPOCH = ["--checkpoint.every_n_epochs", "1"]  # a checkpoint at every epoch's end, not every few minutes
STOP_BOUND = 60  # seconds from the signal to the exit of every rank; a step here takes milliseconds


@pytest.fixture(scope="module")
def tiny(tiny_flags):
    """``tiny(save_dir, *extra)``: a 16² image run on random batches of 16 points, 5 steps an epoch, no callbacks
    but the checkpoints."""
    batches = ("--data.init_args.batch_size", 16, "--data.init_args.steps_per_epoch", 5)
    run = tiny_flags("image.yaml", 16, *batches, width=16, features=16, quiet=True)
    return lambda save_dir, *extra: [*run, "--trainer.logger.init_args.save_dir", str(save_dir), *extra]


class Launch:
    """``train.py`` on 2 processes in a process group of its own, training until stopped."""

    def __init__(self, tmp_path: Path, name: str, tiny) -> None:
        self.save_dir, self.err = tmp_path / name, tmp_path / f"{name}.err"
        self.run = self.save_dir / "image" / "version_0"
        with open(self.err, "w") as err:  # a file, not a pipe: nothing blocks on a full pipe
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "train.py"),
                    *tiny(self.save_dir, "--trainer.max_steps", "1000000", *EVERY_EPOCH),
                    *TWO_PROCESSES,
                ],
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,  # rank 0 leads a group of its own, rank 1 (its child) in it
            )

    def wait_for_training(self, timeout: float = 300) -> None:
        """Until the first epoch's checkpoint is written: both ranks are training."""
        start = time.monotonic()
        while not (self.run / "checkpoints" / "last.ckpt").exists():
            assert self.proc.poll() is None, self.err.read_text()[-3000:]
            assert time.monotonic() - start < timeout, "training never started"
            time.sleep(0.2)

    def stop(self, signum: int, group: bool) -> float:
        """Sends ``signum`` to rank 0 (or to the whole group) and waits for every rank to exit; seconds taken
        (None: still running after STOP_BOUND, then killed)."""
        start = time.monotonic()
        (os.killpg if group else os.kill)(self.proc.pid, signum)
        while time.monotonic() - start < STOP_BOUND:
            if self.proc.poll() is not None and not self.ranks_left():
                return time.monotonic() - start
            time.sleep(0.1)
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        return None

    def ranks_left(self) -> bool:
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return False
        return True


@pytest.mark.slow
def test_sigterm_to_the_launcher_stops_every_rank_after_one_step_with_one_checkpoint(tmp_path, tiny):
    launch = Launch(tmp_path, "kill", tiny)
    launch.wait_for_training()
    seconds = launch.stop(signal.SIGTERM, group=False)  # kill <pid>: rank 0 alone receives it
    stderr = launch.err.read_text()
    assert seconds is not None, f"still running {STOP_BOUND} s after the signal: {stderr[-3000:]}"
    assert launch.proc.returncode == 143, f"exit {launch.proc.returncode}: {stderr[-3000:]}"
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith("interrupted")]
    saved = launch.run / "checkpoints" / "last.ckpt"
    assert len(lines) == 1, stderr[-3000:]  # rank 0 says it, once
    assert lines[0].startswith("interrupted by SIGTERM at step ") and lines[0].endswith(f"--ckpt_path {saved}"), lines[0]

    # one complete checkpoint, of the step the line names; nothing half-written, no lock left
    checkpoint = read_checkpoint(saved)
    step = checkpoint["global_step"]
    assert f"at step {step}: saved" in lines[0]
    assert step >= 5 and checkpoint["optimizer_states"] and checkpoint["loops"]["fit_loop"]
    files = [p.name for p in launch.run.rglob("*")]
    assert not [f for f in files if f.endswith(".tmp")] and "train.lock" not in files, files

    # it resumes: one process takes the run two steps further from there
    cli_main(tiny(launch.save_dir, "--trainer.max_steps", str(step + 2), "--ckpt_path", "last"))
    assert read_checkpoint(saved)["global_step"] == step + 2


class Collective:
    """Stand-in for the DDP strategy of ``ranks`` threads: ``reduce(max)`` waits for every rank's value and
    answers each with the largest, as an all-reduce does."""

    def __init__(self, ranks: int) -> None:
        self.root_device, self.values, self.barrier = torch.device("cpu"), [], threading.Barrier(ranks)

    def reduce(self, tensor, reduce_op):
        assert reduce_op == "max"
        self.values.append(tensor)
        self.barrier.wait()
        return torch.stack(self.values).max(dim=0).values


def rank_trainer(strategy) -> SimpleNamespace:
    batch_progress = SimpleNamespace(is_last_batch=False)
    return SimpleNamespace(
        world_size=2,
        strategy=strategy,
        _signal_connector=SimpleNamespace(received_sigterm=False),
        fit_loop=SimpleNamespace(epoch_loop=SimpleNamespace(batch_progress=batch_progress)),
    )


def test_the_ranks_agree_after_a_batch_and_a_rank_without_a_signal_takes_the_others():
    strategy = Collective(2)
    stops, trainers = [GracefulStop(), GracefulStop()], [rank_trainer(strategy), rank_trainer(strategy)]
    for stop, trainer in zip(stops, trainers):
        stop.on_train_start(trainer, None)
    stops[0]._handle(signal.SIGTERM, None)  # kill <pid>: rank 0 alone
    assert stops[0].requested and not stops[0].pending  # a signal alone decides nothing
    assert not trainers[0]._signal_connector.received_sigterm
    ranks = [threading.Thread(target=stop.on_train_batch_end, args=(t,)) for stop, t in zip(stops, trainers)]
    for rank in ranks:
        rank.start()
    for rank in ranks:
        rank.join(timeout=10)
    assert all(stop.pending for stop in stops)  # both stop after this batch
    assert all(t._signal_connector.received_sigterm for t in trainers)  # Lightning raises after it on both
    assert stops[1].signum == signal.SIGTERM and stops[1].exit_code == 143


def test_a_sigterm_passed_on_by_rank_0_and_the_terminals_ctrl_c_are_not_two_ctrl_cs():
    stop = GracefulStop()
    stop.on_train_start(SimpleNamespace(_signal_connector=SimpleNamespace(received_sigterm=False)), None)
    stop._handle(signal.SIGTERM, None)  # passed on by rank 0
    stop._handle(signal.SIGINT, None)  # the Ctrl-C that reached every process of the group
    assert stop.requested and not stop.forced and stop.exit_code == 143
    with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C still stops at once
        stop._handle(signal.SIGINT, None)
    assert stop.forced


def test_the_interrupt_checkpoint_path_asks_no_other_rank(tmp_path):
    class NoCollectives(SimpleNamespace):
        @property
        def log_dir(self):  # Trainer.log_dir broadcasts: a rank calling it alone would wait forever
            raise AssertionError("Trainer.log_dir called")

    logger = TensorBoardLogger(tmp_path, name="run")
    trainer = NoCollectives(
        checkpoint_callbacks=[], loggers=[logger], logger=logger, default_root_dir=str(tmp_path), is_global_zero=True
    )
    assert interrupt_checkpoint_path(trainer) == str(Path(logger.log_dir) / "checkpoints" / "last.ckpt")
