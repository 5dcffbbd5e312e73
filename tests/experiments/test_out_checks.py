"""The comparisons check --out before their first row (``runner.prepare_out``): an existing file or a location
no process can write is one line and exit 2, with nothing trained; a bad --override key is one line too."""

from pathlib import Path

import pytest

from inr.experiments import compare_encoders, inverse, shapes, view_synthesis

TREFOIL = str(Path(__file__).resolve().parents[2] / "data" / "trefoil.obj")
COMMANDS = {
    "inverse": (inverse.main, ["--task", "ct", "--resolution", "16", "--steps", "1"]),
    "view_synthesis": (view_synthesis.main, ["--steps", "1"]),
    "compare_encoders": (compare_encoders.main, ["--resolution", "16", "--steps", "1"]),
    "shapes": (shapes.main, ["--mesh", TREFOIL, "--steps", "1", "--test-points", "64"]),
}


def _run(main, argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.err.strip().splitlines(), captured.out


@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_existing_file_as_out_is_refused_before_any_row(tmp_path, capsys, name):
    main, argv = COMMANDS[name]
    target = tmp_path / "results"
    target.write_text("mine")
    code, err, out = _run(main, [*argv, "--out", str(target)], capsys)
    assert code == 2 and err == [f"error: --out {target}: is a file, not a directory"], err
    assert target.read_text() == "mine" and "|" not in out  # no row was trained or printed


@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_unwritable_out_is_refused_before_any_row(tmp_path, capsys, name):  # /proc: no process creates files there (Linux)
    main, argv = COMMANDS[name]
    code, err, out = _run(main, [*argv, "--out", "/proc/inr-out"], capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith("error: --out /proc/inr-out: cannot write there"), err
    assert "|" not in out


def test_view_synthesis_names_a_bad_override_key_in_one_line(tmp_path, capsys):
    argv = ["--steps", "1", "--out", str(tmp_path / "out"), "--override", "--data.init_args.no_such_key", "3"]
    code, err, _ = _run(view_synthesis.main, argv, capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith("error: --override: config"), err
    assert "no_such_key" in err[0] and "Traceback" not in "\n".join(err)
