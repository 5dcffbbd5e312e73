"""python -m inr.experiments.results_merge: a study run as parts joined into one results.json, which the study's
command then completes without training again; parts of another protocol, and a row with other numbers in two
parts, are refused in one line."""

import json
import subprocess
import sys

import pytest

from inr.experiments.learned_init import main as study
from inr.experiments.results_merge import main as merge

TINY = ["--kind", "natural", "--resolution", "16", "--steps", "6", "--test-signals", "2", "--train-signals", "6"]


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    root = tmp_path_factory.mktemp("parts")
    for name in ("paper", "torch"):
        study([*TINY, "--methods", name, "--out", str(root / name)])
    return root


def test_the_parts_rows_join_and_the_command_completes_them_without_training(parts, tmp_path, capsys):
    merge([str(parts / "paper"), str(parts / "torch"), "--out", str(tmp_path / "whole")])
    joined = json.loads((tmp_path / "whole" / "results.json").read_text())
    methods = [r["method"] for r in joined["rows"]]
    assert methods.count("paper") == 2 and methods.count("torch") == 2 and methods.count("bicubic") == 2  # once each
    capsys.readouterr()
    rows = study([*TINY, "--methods", "paper,torch", "--out", str(tmp_path / "whole")])
    err = capsys.readouterr().err
    assert "kept from the earlier run" in err
    # nothing trained again: every model row, its seconds included, is the part's (baselines are scored anew)
    parts_rows = [r for p in ("paper", "torch") for r in json.loads((parts / p / "results.json").read_text())["rows"]]
    fits = lambda rows: {(r["method"], r["signal"]): (r["psnr"], r["seconds"]) for r in rows if r["kind"] == "model"}  # noqa: E731
    assert fits(rows) == fits(parts_rows) and len(fits(rows)) == 4
    text = (tmp_path / "whole" / "results.md").read_text()
    assert "| paper |" in text and "| torch |" in text and "row − the paper's init" in text


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "inr.experiments.results_merge", *args], capture_output=True, text=True, timeout=300
    )


def test_another_protocol_and_a_row_with_other_numbers_are_refused_in_one_line(parts, tmp_path):
    other = tmp_path / "other"
    study([*TINY[:-4], "--test-signals", "2", "--train-signals", "5", "--methods", "paper", "--out", str(other)])
    done = run(str(parts / "paper"), str(other), "--out", str(tmp_path / "x"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "another comparison or protocol" in done.stderr
    assert "train_signals" in done.stderr and not (tmp_path / "x").exists()

    changed = tmp_path / "changed"
    changed.mkdir()
    data = json.loads((parts / "paper" / "results.json").read_text())
    data["rows"][0]["psnr"] += 1.0
    (changed / "results.json").write_text(json.dumps(data))
    done = run(str(parts / "paper"), str(changed), "--out", str(tmp_path / "y"))
    assert done.returncode == 2 and "has other numbers than an earlier part's" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "y").exists()
    done = run(str(tmp_path / "none"), "--out", str(tmp_path / "z"))
    assert done.returncode == 2 and "no results.json" in done.stderr
