"""SIGUSR1 under SLURM (the warning ``#SBATCH --signal=USR1@90`` sends before a job's end), through the real
command with SLURM's environment set and ``scontrol`` faked on PATH (it records its arguments).

The signal arrives between two optimizer steps of a group (a callback of the run sends it to its own process at a
step inside a group, so the moment is exact): the command saves ``last.ckpt`` there, records it for the job in
``requeue.json``, runs ``scontrol requeue <job id>`` and exits 138 with one line. The same command started again in
the same job (as SLURM does after a requeue) resumes from that checkpoint in the same run directory, with a note,
and ends bit for bit where an uninterrupted run ends. Without SLURM nothing changes (SIGUSR1 is not taken).
"""

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from inr.run.cli import cli_main
from inr.run.requeue import requeued_checkpoint
from inr.run.signals import GracefulStop

ROOT = Path(__file__).resolve().parents[2]
SLURM = {
    "SLURM_JOB_ID": "4242",
    "SLURM_JOB_NAME": "train",
    "SLURM_NTASKS": "1",
    "SLURM_NTASKS_PER_NODE": "1",
    "SLURM_NNODES": "1",
    "SLURM_PROCID": "0",
    "SLURM_LOCALID": "0",
    "SLURM_NODEID": "0",
}
SIGNAL_STEP = 33  # inside the second group of 20 steps (steps 21..40)

SENDER = '''
import os, signal
import lightning as L


class SendAtStep(L.Callback):
    """Sends SIGUSR1 to this process right after optimizer step ``step`` (between two steps of a group)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_inner_step_end(self, trainer, pl_module) -> None:
        if trainer.global_step == self.step:
            os.kill(os.getpid(), signal.SIGUSR1)
'''


@pytest.fixture(scope="module")
def tiny(tiny_flags):
    """``tiny(save_dir, max_steps, *extra)``: a 16² full-batch image run, epochs of 40 steps taken 20 per Lightning
    step, no callbacks."""
    groups = ("--data.init_args.steps_per_epoch", 40, "--model.init_args.inner_steps", 20)

    def args(save_dir: Path, max_steps: int, *extra: str) -> list[str]:
        run = tiny_flags("image.yaml", 16, *groups, width=16, features=16, steps=max_steps, quiet=True)
        return [*run, "--trainer.accelerator", "cpu", "--trainer.logger.init_args.save_dir", str(save_dir), *extra]

    return args


def command(cwd: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_sigusr1_under_slurm_saves_mid_group_requeues_and_the_job_started_again_resumes_exactly(
    tmp_path, tiny, assert_same_training_state
):
    fake = tmp_path / "bin" / "scontrol"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "scontrol.log"}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "sender.py").write_text(SENDER)  # the command imports the working directory's modules
    env = {**SLURM, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    save_dir = tmp_path / "runs"
    run = save_dir / "image" / "version_0"
    last = run / "checkpoints" / "last.ckpt"

    sent = command(
        tmp_path,
        tiny(save_dir, 1000, "--trainer.callbacks+=sender.SendAtStep", "--trainer.callbacks.step", str(SIGNAL_STEP)),
        env,
    )
    assert sent.returncode == 138, sent.stderr[-3000:]  # 128 + SIGUSR1
    lines = [line for line in sent.stderr.splitlines() if line.startswith("interrupted")]
    assert lines == [
        f"interrupted by SIGUSR1 at step {SIGNAL_STEP}: saved {last}; requeued SLURM job 4242 (scontrol requeue 4242); "
        "started again, it resumes from there"
    ], sent.stderr[-3000:]
    assert (tmp_path / "scontrol.log").read_text() == "requeue 4242\n"
    assert json.loads((run / "requeue.json").read_text()) == {"job": "4242", "checkpoint": str(last), "step": SIGNAL_STEP}
    assert torch.load(last, weights_only=True)["global_step"] == SIGNAL_STEP  # saved between two steps of a group

    # SLURM starts the job again: the same command (here with the job's remaining steps as its limit), no --ckpt_path
    again = command(tmp_path, tiny(save_dir, SIGNAL_STEP + 17), {**env, "SLURM_RESTART_COUNT": "1"})
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"note: SLURM job 4242 was requeued at step {SIGNAL_STEP}: resuming from {last}" in again.stderr
    assert [p.name for p in run.parent.iterdir()] == ["version_0"] and (run / "config.resume-1.yaml").is_file()

    cli_main(tiny(tmp_path / "straight", SIGNAL_STEP + 17))  # uninterrupted, in this process (no SLURM here)
    a = torch.load(tmp_path / "straight" / "image" / "version_0" / "checkpoints" / "last.ckpt", weights_only=True)
    assert a["global_step"] == SIGNAL_STEP + 17
    assert_same_training_state(a, torch.load(last, weights_only=True))


def test_sigusr1_is_taken_only_under_slurm_and_a_record_of_another_job_is_not_resumed(tmp_path, monkeypatch):
    for key in ("SLURM_NTASKS", "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID"):
        monkeypatch.delenv(key, raising=False)
    before = signal.getsignal(signal.SIGUSR1)
    stop = GracefulStop().install()
    try:
        assert signal.getsignal(signal.SIGUSR1) == before  # outside SLURM: SIGUSR1 keeps its handler
    finally:
        stop.uninstall()
    for key, value in SLURM.items():
        monkeypatch.setenv(key, value)
    stop = GracefulStop().install()
    try:
        assert signal.getsignal(signal.SIGUSR1) == stop._handle
    finally:
        stop.uninstall()
    assert signal.getsignal(signal.SIGUSR1) == before

    run = tmp_path / "image" / "version_3"
    (run / "checkpoints").mkdir(parents=True)
    checkpoint = run / "checkpoints" / "last.ckpt"
    checkpoint.write_bytes(b"")
    (run / "requeue.json").write_text(json.dumps({"job": "4242", "checkpoint": str(checkpoint), "step": 7}))
    assert requeued_checkpoint(tmp_path / "image") == (str(checkpoint), 7)
    monkeypatch.setenv("SLURM_JOB_ID", "5151")  # another job: a new run
    assert requeued_checkpoint(tmp_path / "image") is None
    monkeypatch.delenv("SLURM_NTASKS")  # not under SLURM
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    assert requeued_checkpoint(tmp_path / "image") is None
