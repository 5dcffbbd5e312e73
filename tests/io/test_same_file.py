"""``refuse_overwriting``: an output that is an input by another name (the path itself, a hard link, a symlink, a
path through ``..``), or an output folder holding an input, is one line before any work; the commands that write
next to what they read (``inr-mesh``, the turntable, the member export) refuse it and leave the input as it was."""

import os

import pytest

from inr.errors import InputError
from inr.io.files import refuse_overwriting
from inr.run import export_member, mesh, turntable


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "model.ckpt"
    path.write_bytes(b"weights")
    return path


def test_other_and_missing_outputs_pass(tmp_path, source):
    refuse_overwriting(tmp_path / "new.ply", [source])
    (tmp_path / "other.ply").write_bytes(b"x")
    refuse_overwriting(tmp_path / "other.ply", [source, None, tmp_path / "missing"])
    refuse_overwriting(None, [source])
    refuse_overwriting(tmp_path / "out", [source], directory=True)  # a folder yet to be made holds nothing


@pytest.mark.parametrize("alias", ["same path", "hard link", "symlink", "through .."])
def test_another_name_of_the_input_is_refused(tmp_path, source, alias):
    out = {"same path": source, "through ..": tmp_path / "sub" / ".." / source.name}.get(alias, tmp_path / "out.ply")
    (tmp_path / "sub").mkdir()
    if alias == "hard link":
        os.link(source, out)
    elif alias == "symlink":
        out.symlink_to(source)
    with pytest.raises(InputError, match=f"^--out {out}: is the input {source}; writing it would replace the input"):
        refuse_overwriting(out, [source], "--out")


def test_an_output_folder_holding_an_input_is_refused(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    ckpt = run / "checkpoints" / "last.ckpt"
    ckpt.write_bytes(b"weights")
    for out in (run, run / "checkpoints", tmp_path):
        with pytest.raises(InputError, match=f"--out {out}: holds the input {ckpt}"):
            refuse_overwriting(out, [ckpt], "--out", directory=True)
    refuse_overwriting(tmp_path / "elsewhere", [ckpt], "--out", directory=True)
    (tmp_path / "empty").mkdir()
    refuse_overwriting(tmp_path / "empty", [ckpt], "--out", directory=True)


def one_line_exit_2(capsys, call, expected: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        call()
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("error:") == 1 and len(err.strip().splitlines()) == 1, err
    assert expected in err, err


def test_mesh_refuses_to_write_over_its_checkpoint(tmp_path, capsys):
    ckpt = tmp_path / "model.ply"  # a checkpoint under a mesh's name
    ckpt.write_bytes(b"weights")
    one_line_exit_2(capsys, lambda: mesh.main(["--ckpt", str(ckpt), "--out", str(ckpt)]), f"--out {ckpt}: is the input {ckpt}")
    points = tmp_path / "points.ply"
    os.link(ckpt, points)
    one_line_exit_2(
        capsys, lambda: mesh.main(["--ckpt", str(ckpt), "--points", str(points)]), f"--points {points}: is the input {ckpt}"
    )
    assert ckpt.read_bytes() == b"weights" and sorted(p.name for p in tmp_path.iterdir()) == ["model.ply", "points.ply"]


def test_the_turntable_refuses_to_write_over_its_config(tmp_path, capsys, source):
    config = tmp_path / "config.gif"
    config.write_text("model: {}\n")
    call = lambda: turntable.main(["--ckpt", str(source), "--config", str(config), "--out", str(config)])  # noqa: E731
    one_line_exit_2(capsys, call, f"--out {config}: is the input {config}")
    assert config.read_text() == "model: {}\n"


def test_the_member_export_refuses_a_folder_holding_its_checkpoint(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    ckpt = run / "checkpoints" / "last.ckpt"
    ckpt.write_bytes(b"weights")
    call = lambda: export_member.main(["--ckpt", str(ckpt), "--member", "0", "--out", str(run)])  # noqa: E731
    one_line_exit_2(capsys, call, f"--out {run}: holds the input {ckpt}")
    assert ckpt.read_bytes() == b"weights" and sorted(p.name for p in run.rglob("*")) == ["checkpoints", "last.ckpt"]
