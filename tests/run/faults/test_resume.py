"""Resumes: a failed one changes nothing; a successful one keeps the run's config and records its own; one
process per run; a copied run refreshes its own last.ckpt."""

import yaml

from inr.run.checkpoints import read_checkpoint
from inr.run.lock import RunLock
from inr.run.model_loader import load_model


def _snapshot(run):
    return {p.relative_to(run): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def test_a_failed_resume_leaves_config_and_checkpoints_as_they_were(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path)
    before = _snapshot(run)
    other_width = run_cli(kit.tiny(tmp_path, "--model.init_args.network.init_args.width", "32", "--ckpt_path", "last"))
    assert other_width.code == 2 and len(other_width.errors) == 1, other_width.stderr[-3000:]
    assert (
        "made by another model" in other_width.errors[0] and "[16, 32] there and [32, 32] in this config" in other_width.errors[0]
    )

    corrupt = tmp_path / "corrupt.ckpt"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    damaged = run_cli(kit.tiny(tmp_path, "--ckpt_path", str(corrupt)))
    assert damaged.code == 2 and len(damaged.errors) == 1 and "not a readable checkpoint" in damaged.errors[0]

    assert _snapshot(run) == before  # no config.yaml rewritten, no config.resume-N.yaml, no new version
    assert [p.name for p in (tmp_path / "image").iterdir()] == ["version_0"]
    model = load_model(run / "checkpoints" / "last.ckpt")  # the mesh tool's loader: the run's config builds its weights
    assert model.network[0].weight.shape == (16, 32)


def test_a_resume_keeps_the_config_and_records_its_own_once_loaded(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path)
    original = (run / "config.yaml").read_bytes()
    outcome = run_cli(
        kit.tiny(tmp_path, "--trainer.max_steps", "15", "--model.init_args.optimizer.init_args.lr", "0.05", "--ckpt_path", "last")
    )
    assert outcome.code == 0, outcome.stderr[-3000:]
    assert (run / "config.yaml").read_bytes() == original
    record = yaml.safe_load((run / "config.resume-1.yaml").read_text())
    assert record["model"]["init_args"]["optimizer"]["init_args"]["lr"] == 0.05 and record["trainer"]["max_steps"] == 15
    notes = outcome.lines("note:")
    assert len(notes) == 1 and "optimizer" in notes[0] and "config.resume-1.yaml" in notes[0], outcome.stderr[-2000:]
    # what the note says: the optimizer continues with the checkpoint's state, learning rate included
    groups = read_checkpoint(run / "checkpoints" / "last.ckpt")["optimizer_states"][0]["param_groups"]
    assert read_checkpoint(run / "checkpoints" / "last.ckpt")["global_step"] == 15 and groups[0]["lr"] == 0.001

    assert run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "20", "--ckpt_path", "last")).code == 0
    assert sorted(p.name for p in run.glob("config*.yaml")) == ["config.resume-1.yaml", "config.resume-2.yaml", "config.yaml"]


def test_a_run_in_use_is_refused_and_a_fresh_run_never_reuses_a_run_directory(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path)
    before = _snapshot(run)
    lock = RunLock(run).acquire()  # what a training process holds (an flock: another open of the file conflicts)
    try:
        busy = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "15", "--ckpt_path", "last"))
    finally:
        lock.release()
    assert busy.code == 2 and len(busy.errors) == 1 and f"{run} is in use by another training process" in busy.errors[0]
    again = run_cli(kit.tiny(tmp_path, "--trainer.logger.init_args.version", "0"))  # a new run aimed at version_0
    assert again.code == 2 and len(again.errors) == 1 and "already holds a run" in again.errors[0]
    assert _snapshot(run) == before


def test_a_copied_run_resumes_into_its_own_last_ckpt(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path / "elsewhere")
    outcome = run_cli(kit.tiny(tmp_path / "elsewhere", "--trainer.max_steps", "15", "--ckpt_path", "last"))
    assert outcome.code == 0, outcome.stderr[-3000:]
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert "last-v1.ckpt" not in names and read_checkpoint(run / "checkpoints" / "last.ckpt")["global_step"] == 15
    assert read_checkpoint(trained_run / "checkpoints" / "last.ckpt")["global_step"] == 10  # the original is untouched
