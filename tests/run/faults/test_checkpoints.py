"""Checkpoints: never executed on load, written atomically, and a damaged last.ckpt does not block a resume."""

import ast
import os
import resource

import pytest
import torch

from inr.run.checkpoints import read_checkpoint
from inr.run.mesh import main as mesh_main


class RunsACommand:
    """Pickles as a call of os.system: loading it without weights_only runs the command."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


@pytest.mark.slow
def test_every_torch_load_passes_weights_only_true(kit):
    calls = []
    for path in [
        *kit.root.glob("inr/**/*.py"),
        *kit.root.glob("tests/**/*.py"),
        *kit.root.glob("benchmarks/*.py"),
        *kit.root.glob("examples/*.py"),
        kit.root / "train.py",
    ]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "load"
                and getattr(node.func.value, "id", None) == "torch"
            ):
                flag = {k.arg: k.value for k in node.keywords}.get("weights_only")
                calls.append((f"{path.name}:{node.lineno}", isinstance(flag, ast.Constant) and flag.value is True))
    assert calls, "the scan found no torch.load at all"
    assert [where for where, safe in calls if not safe] == []


def test_a_crafted_checkpoint_runs_nothing_in_mesh_export_or_resume(tmp_path, capsys, run_cli, kit):
    marker = tmp_path / "ran"
    evil = tmp_path / "last.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": RunsACommand(f"touch {marker}")}, evil)

    out = tmp_path / "mesh.ply"
    try:
        mesh_main(["--ckpt", str(evil), "--config", str(kit.root / "configs" / "volume.yaml"), "--out", str(out)])
        code = 0
    except SystemExit as exc:
        code = exc.code
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "refused" in errors[0] and "posix.system" in errors[0], errors
    assert not marker.exists() and not out.exists()

    outcome = run_cli(kit.tiny(tmp_path / "runs", "--ckpt_path", str(evil)))
    assert outcome.code == 2 and len(outcome.errors) == 1 and "refused" in outcome.errors[0], outcome.stderr[-2000:]
    assert not marker.exists() and kit.files_under(tmp_path / "runs") == []


def test_a_truncated_last_ckpt_falls_back_to_the_newest_readable_one(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path)
    last, epoch_end = run / "checkpoints" / "last.ckpt", run / "checkpoints" / "epoch=1-step=10.ckpt"
    last.write_bytes(last.read_bytes()[: last.stat().st_size // 2])  # what a full disk left before atomic saves
    os.utime(last)  # and it is the newest file

    outcome = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "15", "--ckpt_path", "last"))
    notes = outcome.lines("note:")
    assert outcome.code == 0, outcome.stderr[-3000:]
    assert len(notes) == 1 and "last.ckpt: not a readable checkpoint" in notes[0] and str(epoch_end) in notes[0], notes
    assert read_checkpoint(last)["global_step"] == 15  # the resumed run wrote a whole last.ckpt again

    last.write_bytes(b"\x00" * 100)
    outcome = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "20", "--ckpt_path", str(last)))  # named: no fallback
    assert outcome.code == 2 and len(outcome.errors) == 1 and "not a readable checkpoint" in outcome.errors[0]
    assert read_checkpoint(run / "checkpoints" / "epoch=2-step=15.ckpt")["global_step"] == 15


@pytest.mark.slow
def test_a_save_that_fails_for_space_keeps_the_previous_checkpoint(tmp_path, run_cli, kit):
    """A file-size limit (RLIMIT_FSIZE) makes the step-10 save fail the way a full disk does."""
    args = kit.tiny(tmp_path, "--model.init_args.network.init_args.width", "128")  # checkpoints of ~500 KB
    assert run_cli([*args, "--trainer.max_steps", "5"]).code == 0
    checkpoints = tmp_path / "image" / "version_0" / "checkpoints"
    before = (checkpoints / "last.ckpt").read_bytes()
    assert len(before) > 300_000

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, hard))
    try:
        outcome = run_cli([*args, "--ckpt_path", "last"])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert outcome.code == 1 and len(outcome.errors) == 1, outcome.stderr[-3000:]
    # the resumed run saves again when it replays the step-5 epoch end, and that save fails
    assert "cannot write: File too large" in outcome.errors[0] and "at step 5" in outcome.errors[0], outcome.errors
    assert "the last good checkpoint is" in outcome.errors[0]
    assert "Traceback" not in outcome.stderr
    assert (checkpoints / "last.ckpt").read_bytes() == before  # whole, and still the step-5 state
    assert sorted(p.name for p in checkpoints.iterdir()) == ["epoch=0-step=5.ckpt", "last.ckpt"]  # no temporary file left
    assert read_checkpoint(checkpoints / "last.ckpt")["global_step"] == 5

    assert run_cli([*args, "--ckpt_path", "last"]).code == 0  # with space again, the run goes on from step 5
    assert read_checkpoint(checkpoints / "last.ckpt")["global_step"] == 10


@pytest.mark.slow
def test_every_epoch_end_writes_a_checkpoint_that_the_nan_guard_names(tmp_path, run_cli, kit, monkeypatch):
    """Validation every 50 epochs, the loss NaN at step 7: the epoch that ended at step 5 has its checkpoint."""
    import inr.tasks.base as base

    original = base.INRModule.training_step

    def training_step(self, batch, batch_idx):
        loss = original(self, batch, batch_idx)
        return loss * float("nan") if self.global_step == 7 else loss

    monkeypatch.setattr(base.INRModule, "training_step", training_step)
    outcome = run_cli(kit.tiny(tmp_path, "--trainer.check_val_every_n_epoch", "50"))
    checkpoints = tmp_path / "image" / "version_0" / "checkpoints"
    assert outcome.code == 3 and len(outcome.errors) == 1 and "at step 7" in outcome.errors[0], outcome.stderr[-2000:]
    assert f"last good checkpoint: {checkpoints / 'last.ckpt'}" in outcome.errors[0]
    assert read_checkpoint(checkpoints / "last.ckpt")["global_step"] == 5
    assert (checkpoints / "epoch=0-step=5.ckpt").is_file()

    # the cadence is the config's checkpoint section
    assert run_cli(kit.tiny(tmp_path / "sparse", "--trainer.max_steps", "5", "--checkpoint.every_n_epochs", "2")).code == 0
    assert sorted(p.name for p in (tmp_path / "sparse/image/version_0/checkpoints").iterdir()) == ["last.ckpt"]
