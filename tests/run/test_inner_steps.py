"""Runs of the command with K optimizer steps per Lightning step (``model.inner_steps``) resume bit for bit: from a
checkpoint written between the steps of one Lightning step, from one written at its end, from a run whose
max_steps cut a group short (also the last of its epoch), across a change of K, and after a SIGTERM that arrives between two inner steps."""

import os
import shutil
import signal
from pathlib import Path

import pytest

import inr.tasks.base as base
from inr.run.checkpoints import read_checkpoint
from inr.run.cli import cli_main

K = ["--model.init_args.inner_steps", "4"]  # epochs of 5 steps (the tiny run): groups [0, 4), [4, 5), [5, 9), ...
EVERY_3 = ["--checkpoint.every_n_train_steps", "3", "--checkpoint.save_top_k", "-1"]  # steps 3, 6 (mid-group), 9 (an end)


def run(args: list[str]) -> int:
    try:
        cli_main(args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def last(save_dir: Path) -> dict:
    return read_checkpoint(save_dir / "image" / "version_0" / "checkpoints" / "last.ckpt")


def stopped_after(run_dir: Path, step: int, save_dir: Path) -> Path:
    """``run_dir`` as it stood when killed right after its step-``step`` checkpoint (later ones and last.ckpt
    removed, modification times kept: that checkpoint is the newest ``--ckpt_path last`` finds)."""
    copy = save_dir / "image" / "version_0"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("events.out.tfevents.*"))
    for path in (copy / "checkpoints").glob("*.ckpt"):
        if path.name == "last.ckpt" or read_checkpoint(path)["global_step"] > step:
            path.unlink()
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", ["16", "null"], ids=["random batches", "full batch"])
def test_resumes_from_between_the_inner_steps_and_from_a_group_end_are_bitwise_equal(
    tmp_path, tiny_run_args, batch_size, assert_same_training_state
):
    args = lambda save_dir, *extra: tiny_run_args(
        save_dir, "--data.init_args.batch_size", batch_size, "--trainer.max_steps", "12", *K, *extra
    )
    assert run(args(tmp_path / "straight", *EVERY_3)) == 0
    straight = tmp_path / "straight" / "image" / "version_0"
    written = {read_checkpoint(p)["global_step"] for p in (straight / "checkpoints").glob("epoch=*.ckpt")}
    assert written == {3, 6, 9, 12}  # steps 3, 6 and 12 lie inside groups: saved between two optimizer steps
    for step in (6, 9):
        save_dir = tmp_path / f"from_{step}"
        stopped_after(straight, step, save_dir)
        assert run(args(save_dir, "--ckpt_path", "last")) == 0
        assert_same_training_state(last(tmp_path / "straight"), last(save_dir))


@pytest.mark.slow
def test_a_group_cut_by_max_steps_and_a_change_of_k_resume_exactly(tmp_path, tiny_run_args, assert_same_training_state):
    args = lambda save_dir, steps, *extra: tiny_run_args(
        save_dir, "--data.init_args.batch_size", "16", "--trainer.max_steps", str(steps), *extra
    )
    assert run(args(tmp_path / "straight", 12)) == 0  # K = 1
    # K = 4 stopped at step 6, inside the group [5, 9) of epoch 1, resumed with K = 4 and with K = 1
    for name, resumed_k in (("same_k", K), ("k_to_1", [])):
        assert run(args(tmp_path / name, 6, *K)) == 0
        assert last(tmp_path / name)["global_step"] == 6
        assert run(args(tmp_path / name, 12, *resumed_k, "--ckpt_path", "last")) == 0
        assert_same_training_state(last(tmp_path / "straight"), last(tmp_path / name))
    # K = 1 stopped at step 6, resumed with K = 4
    assert run(args(tmp_path / "one_to_k", 6)) == 0
    assert run(args(tmp_path / "one_to_k", 12, *K, "--ckpt_path", "last")) == 0
    assert_same_training_state(last(tmp_path / "straight"), last(tmp_path / "one_to_k"))


@pytest.mark.slow
def test_a_cut_group_that_was_its_epochs_last_batch_resumes_in_that_epoch(tmp_path, tiny_run_args, assert_same_training_state):
    """K = 10 on epochs of 5 steps: each epoch is one group, so the group max_steps 8 cuts short is the epoch's last
    Lightning batch; the resumed run trains that epoch's two remaining steps before the next epoch's (and validates
    at that epoch's end, every 2nd epoch)."""
    ten = ["--model.init_args.inner_steps", "10", "--trainer.check_val_every_n_epoch", "2"]
    args = lambda save_dir, steps, *extra: tiny_run_args(
        save_dir, "--data.init_args.batch_size", "16", "--trainer.max_steps", str(steps), *ten, *extra
    )
    assert run(args(tmp_path / "straight", 12)) == 0
    assert run(args(tmp_path / "resumed", 8)) == 0
    assert run(args(tmp_path / "resumed", 12, "--ckpt_path", "last")) == 0
    assert_same_training_state(last(tmp_path / "straight"), last(tmp_path / "resumed"))
    assert last(tmp_path / "resumed")["epoch"] == last(tmp_path / "straight")["epoch"] == 2


@pytest.mark.slow
def test_a_sigterm_between_inner_steps_saves_there_and_resumes_exactly(
    tmp_path, tiny_run_args, monkeypatch, capsys, assert_same_training_state
):
    args = lambda save_dir, *extra: tiny_run_args(save_dir, "--data.init_args.batch_size", "16", *K, *extra)
    assert run(args(tmp_path / "straight")) == 0
    original = base.INRModule.step_loss

    def step_loss(self, batch):
        if self.global_step == 6:  # the second step of the group [5, 9)
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self, batch)

    monkeypatch.setattr(base.INRModule, "step_loss", step_loss)
    capsys.readouterr()
    assert run(args(tmp_path / "stopped")) == 143
    saved = tmp_path / "stopped" / "image" / "version_0" / "checkpoints" / "last.ckpt"
    assert f"interrupted by SIGTERM at step 7: saved {saved}" in capsys.readouterr().err
    assert read_checkpoint(saved)["global_step"] == 7  # the step in flight finished, the group's others did not run
    monkeypatch.setattr(base.INRModule, "step_loss", original)
    assert run(args(tmp_path / "stopped", "--ckpt_path", "last")) == 0
    assert_same_training_state(last(tmp_path / "straight"), last(tmp_path / "stopped"))
