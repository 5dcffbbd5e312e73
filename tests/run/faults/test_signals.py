"""SIGTERM and Ctrl-C stop training with a checkpoint, one line and exit 143 / 130; the resume is exact."""

import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import inr.tasks.base as base
from inr.run.checkpoints import read_checkpoint
from inr.run.signals import GracefulStop


def _wait_for(path, proc, timeout=240):
    start = time.monotonic()
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() - start < timeout, f"{path} never appeared"
        time.sleep(0.2)


@pytest.mark.slow
def test_sigterm_and_ctrl_c_save_a_checkpoint_name_it_and_exit_143_130(tmp_path, run_cli, kit):
    procs = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        save_dir = tmp_path / signal.Signals(signum).name
        cmd = [sys.executable, str(kit.root / "train.py"), *kit.tiny(save_dir, "--trainer.max_steps", "1000000")]
        procs[signum] = (save_dir, subprocess.Popen(cmd, cwd=kit.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for save_dir, proc in procs.values():
        _wait_for(save_dir / "image/version_0/checkpoints/last.ckpt", proc)  # the first epoch has ended
    # a second training process resuming the running run is refused, and writes nothing there
    term_dir = procs[signal.SIGTERM][0]
    busy = run_cli(kit.tiny(term_dir, "--ckpt_path", "last"))
    assert busy.code == 2 and len(busy.errors) == 1 and "in use by another training process" in busy.errors[0]
    assert not list((term_dir / "image/version_0").glob("config.resume-*.yaml"))

    for signum, (_, proc) in procs.items():
        proc.send_signal(signum)
    for signum, (save_dir, proc) in procs.items():
        _, stderr = proc.communicate(timeout=240)
        name = signal.Signals(signum).name
        lines = [line for line in stderr.splitlines() if line.startswith("interrupted")]
        assert proc.returncode == {signal.SIGTERM: 143, signal.SIGINT: 130}[signum], stderr[-3000:]
        assert len(lines) == 1 and lines[0].startswith(f"interrupted by {name} at step "), stderr[-3000:]
        assert "Traceback" not in stderr
        saved = save_dir / "image/version_0/checkpoints/last.ckpt"
        assert f"saved {saved}; resume with: python train.py " in lines[0] and lines[0].endswith(f"--ckpt_path {saved}")
        step = read_checkpoint(saved)["global_step"]
        assert step >= 5 and f"at step {step}:" in lines[0]
        assert not (save_dir / "image/version_0/train.lock").exists()
        resumed = run_cli(kit.tiny(save_dir, "--trainer.max_steps", str(step + 3), "--ckpt_path", str(saved)))
        assert resumed.code == 0, resumed.stderr[-3000:]
        assert read_checkpoint(saved)["global_step"] == step + 3


@pytest.fixture
def signal_at_step(monkeypatch):
    """``signal_at_step(k)``: the process sends itself SIGTERM during training step k (None: never)."""
    state = {"step": None}
    original = base.INRModule.training_step

    def training_step(self, batch, batch_idx):
        if self.global_step == state["step"]:
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self, batch, batch_idx)

    monkeypatch.setattr(base.INRModule, "training_step", training_step)
    return lambda k: state.update(step=k)


def _state(path):
    ckpt = read_checkpoint(path)
    spectral = next(v for k, v in ckpt["callbacks"].items() if k.startswith("SpectralBiasCallback"))["history"]
    return ckpt, spectral


@pytest.mark.slow
@pytest.mark.parametrize("batch_size, stop_step", [("32", 2), ("32", 4), ("null", 7)])  # mid-epoch, last batch of an epoch
def test_a_run_stopped_by_a_signal_resumes_bitwise_like_an_uninterrupted_one(
    tmp_path, run_cli, signal_at_step, kit, batch_size, stop_step
):
    args = lambda d: kit.tiny(
        d, "--data.init_args.batch_size", batch_size, "--trainer.callbacks+=inr.callbacks.SpectralBiasCallback"
    )
    signal_at_step(None)
    assert run_cli(args(tmp_path / "straight")).code == 0
    signal_at_step(stop_step)
    stopped = run_cli(args(tmp_path / "stopped"))
    signal_at_step(None)
    last = tmp_path / "stopped/image/version_0/checkpoints/last.ckpt"
    assert stopped.code == 143 and len(stopped.lines("interrupted by SIGTERM at step ")) == 1, stopped.stderr[-3000:]
    assert read_checkpoint(last)["global_step"] == stop_step + 1  # the step in flight was completed, then saved
    assert run_cli(args(tmp_path / "stopped") + ["--ckpt_path", "last"]).code == 0

    straight, straight_history = _state(tmp_path / "straight/image/version_0/checkpoints/last.ckpt")
    resumed, resumed_history = _state(last)
    assert straight["global_step"] == resumed["global_step"] == 10
    for key, value in straight["state_dict"].items():
        assert torch.equal(value, resumed["state_dict"][key]), key
    for a, b in zip(straight["optimizer_states"][0]["state"].values(), resumed["optimizer_states"][0]["state"].values()):
        assert torch.equal(a["exp_avg"], b["exp_avg"]) and torch.equal(a["exp_avg_sq"], b["exp_avg_sq"])
    assert straight_history["steps"] == resumed_history["steps"]  # no epoch measured twice or skipped
    np.testing.assert_array_equal(np.array(straight_history["errors"]), np.array(resumed_history["errors"]))


def test_a_second_ctrl_c_stops_at_once_and_later_signals_are_ignored():
    stop = GracefulStop()
    connector = SimpleNamespace(received_sigterm=True)  # as Lightning's own SIGTERM handler leaves it
    stop.on_train_start(SimpleNamespace(_signal_connector=connector), None)
    stop._handle(signal.SIGINT, None)
    assert stop.requested and not connector.received_sigterm  # deferred to a point a resume repeats exactly
    with pytest.raises(KeyboardInterrupt):
        stop._handle(signal.SIGINT, None)
    assert stop.forced and stop.exit_code == 130
    stop.on_train_end(None, None)
    stop._handle(signal.SIGTERM, None)  # already stopping: no exception cuts the clean-up short


def test_sigterm_during_the_closing_evaluation_stops_it_with_one_line(tmp_path, run_cli, kit, monkeypatch):
    evaluated = []
    original = base.INRModule.evaluate

    def evaluate(self):
        os.kill(os.getpid(), signal.SIGTERM)  # handled before the evaluation's next bytecode
        evaluated.append(True)
        return original(self)

    monkeypatch.setattr(base.INRModule, "evaluate", evaluate)
    outcome = run_cli(kit.tiny(tmp_path))
    assert outcome.code == 143 and evaluated == [], outcome.stderr[-3000:]
    assert "closing evaluation: the final model on every point of the grid (16×16)" in outcome.stderr
    [line] = outcome.lines("interrupted by SIGTERM")
    last = tmp_path / "image/version_0/checkpoints/last.ckpt"
    assert line.startswith("interrupted by SIGTERM after training's last step, during the closing evaluation;")
    assert str(last) in line and read_checkpoint(last)["global_step"] == 10
    assert "summary:" not in outcome.stdout


def test_sigterm_during_the_final_validation_saves_the_final_state_and_stops(tmp_path, run_cli, kit, monkeypatch):
    original = base.INRModule.validation_step

    def validation_step(self, batch, batch_idx):
        if self.global_step == 10 and batch_idx == 0:
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self, batch, batch_idx)

    monkeypatch.setattr(base.INRModule, "validation_step", validation_step)
    outcome = run_cli(kit.tiny(tmp_path, "--trainer.check_val_every_n_epoch", "2", "--data.init_args.eval_chunk", "16"))
    last = tmp_path / "image/version_0/checkpoints/last.ckpt"
    assert outcome.code == 143, outcome.stderr[-3000:]
    assert len(outcome.lines(f"interrupted by SIGTERM at step 10: saved {last}")) == 1, outcome.stderr[-3000:]
    assert read_checkpoint(last)["global_step"] == 10
