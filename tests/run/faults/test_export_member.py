"""The stacked-member export (``python -m inr.run.export_member``) on bad input: one line, exit 2, nothing
written — a checkpoint that is a folder, a config that is not the stacked run's, an --out it cannot write."""

import tracemalloc

import pytest
import yaml

from inr.run.export_member import main

MEMBERS = "model:\n  init_args:\n    member_seeds: [4, 5]\n"


@pytest.fixture(scope="module")
def stacked(tmp_path_factory, tiny_run_args):
    """A 5-step run of two members (seeds 4 and 5)."""
    from inr.run.cli import cli_main

    root = tmp_path_factory.mktemp("stacked")
    (root / "members.yaml").write_text(MEMBERS)
    cli_main(tiny_run_args(root, "--config", str(root / "members.yaml"), "--trainer.max_steps", "5"))
    return root / "image" / "version_0"


def export(capsys, *args) -> tuple[int, list[str]]:
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]


def test_a_folder_given_as_the_checkpoint_is_called_a_folder(tmp_path, capsys, stacked):
    code, errors = export(capsys, "--ckpt", str(stacked / "checkpoints"), "--member", "0", "--out", str(tmp_path / "out"))
    assert code == 2 and errors == [f"error: {stacked / 'checkpoints'}: a directory, not a checkpoint file"]
    assert list(tmp_path.iterdir()) == []


def test_a_config_of_another_run_is_refused_before_anything_is_written(tmp_path, capsys, stacked, kit):
    """The config of a single model (configs/image.yaml) with the stacked checkpoint: exported before, a run whose
    config and weights disagree (a 256-wide network in the config, 16-wide weights)."""
    ckpt = stacked / "checkpoints" / "last.ckpt"
    single = kit.root / "configs" / "image.yaml"
    code, errors = export(capsys, "--ckpt", str(ckpt), "--member", "0", "--out", str(tmp_path / "out"), "--config", str(single))
    assert code == 2 and len(errors) == 1, errors
    assert errors[0] == (
        f"error: {single}: not the config of the run of {ckpt}, which has 2 members (seeds [4, 5]); "
        "give that run's config.yaml with --config"
    )
    three = tmp_path / "three.yaml"
    config = yaml.safe_load((stacked / "config.yaml").read_text())
    config["model"]["init_args"]["member_seeds"] = [4, 5, 6]
    three.write_text(yaml.safe_dump(config))
    code, errors = export(capsys, "--ckpt", str(ckpt), "--member", "0", "--out", str(tmp_path / "out"), "--config", str(three))
    assert code == 2 and len(errors) == 1 and "which has 2 members (seeds [4, 5])" in errors[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["three.yaml"]


def test_a_config_given_as_a_folder_is_called_a_folder(tmp_path, capsys, stacked):
    ckpt = stacked / "checkpoints" / "last.ckpt"
    code, errors = export(capsys, "--ckpt", str(ckpt), "--member", "0", "--out", str(tmp_path / "out"), "--config", str(tmp_path))
    assert code == 2 and errors == [f"error: {tmp_path}: a directory, not a run's config.yaml"]


def test_an_out_that_cannot_be_written_is_one_line(tmp_path, capsys, stacked):
    ckpt = stacked / "checkpoints" / "last.ckpt"
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, errors = export(capsys, "--ckpt", str(ckpt), "--member", "1", "--out", str(blocker / "out"))
    assert code == 2 and len(errors) == 1 and errors[0].startswith(f"error: --out {blocker / 'out'}: "), errors
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_the_member_is_checked_before_the_config(tmp_path, capsys, stacked):
    ckpt = stacked / "checkpoints" / "last.ckpt"
    code, errors = export(capsys, "--ckpt", str(ckpt), "--member", "-1", "--out", str(tmp_path / "out"))
    assert code == 2 and errors == [f"error: --member -1: {ckpt} holds members 0..1"]
    assert list(tmp_path.iterdir()) == []


def test_a_config_beyond_the_bound_is_refused_from_its_size(tmp_path, capsys, stacked):
    ckpt = stacked / "checkpoints" / "last.ckpt"
    big = tmp_path / "config.yaml"
    with open(big, "wb") as f:
        f.truncate(2**30)  # sparse: read, it would be a GiB of memory
    tracemalloc.start()
    try:
        code, errors = export(capsys, "--ckpt", str(ckpt), "--member", "0", "--out", str(tmp_path / "out"), "--config", str(big))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and errors == [f"error: {big}: 1,073,741,824 bytes, over the 1,048,576 a config may have"]
    assert peak < 64 * 2**20, peak  # the checkpoint is read; the config is not
