"""The one loop and command line of every comparison (``inr.experiments.comparison``), run on docs/extending.md's
"A new comparison" example at toy size: rows and results.json, resuming, signals, the old flag names, the
configuration file, and bad input as one line."""

import json
import math
import os
import re
import signal
from pathlib import Path

import numpy as np
import pytest
import yaml

from inr.experiments import comparison
from inr.experiments.results import load_results

EXTENDING = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
TOY = ["--steps", "4", "--resolution", "32", "--threads", "1"]


@pytest.fixture(scope="module")
def sines():
    """The example of docs/extending.md, as written there."""
    section = EXTENDING.read_text().split("## A new comparison", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "docs comparison example", "exec"), namespace)
    return namespace["Sines"]()


@pytest.fixture
def fits(monkeypatch):
    """The methods trained, in order (the real fits run)."""
    calls = []
    real = comparison.fit_row

    def counted(model, data, steps, *args, label=None, **kwargs):
        calls.append(label)
        return real(model, data, steps, *args, label=label, **kwargs)

    monkeypatch.setattr(comparison, "fit_row", counted)
    return calls


def run(sines, out, *argv):
    return comparison.main(sines, ["--methods", "none,gaussian", "--seeds", "2", *TOY, "--out", str(out), *argv])


def test_the_docs_example_runs_end_to_end_and_its_results_validate(sines, tmp_path, capsys, fits):
    rows = run(sines, tmp_path)
    assert [(r["method"], r["kind"], r["seed"]) for r in rows] == [
        ("none", "model", 0),
        ("none", "model", 1),
        ("gaussian", "model", 0),
        ("gaussian", "model", 1),
        ("zero", "baseline", None),
    ]
    assert len(fits) == 4 and all(0 < r["psnr"] < 80 and r["steps"] == 4 for r in rows[:4])
    assert rows[2]["setting"].startswith("σ = ") and rows[2]["lr"] == 1e-3  # the registry's Gaussian row
    # the baseline is scored by the same score: PSNR of 0 on the held-out samples, data range 2 (numpy, float64)
    from inr.data import SignalDataModule

    dm = SignalDataModule(length=32)
    dm.setup("fit")
    held = dm.values[dm.test_index, 0].double().numpy()
    assert rows[-1]["psnr"] == pytest.approx(10 * math.log10(4 / np.mean(held**2)), abs=1e-4)
    results = load_results(tmp_path / "results.json")
    assert (
        results.name == "sines"
        and results.seeds == [0, 1]
        and results.protocol == {"comparison": "sines", "steps": 4, "resolution": 32}
    )
    assert [s["method"] for s in results.summary] == ["none", "gaussian", "zero"] and results.summary[0]["n"] == 2
    assert results.command.startswith("python -m inr.experiments.sines --methods none,gaussian --seeds 2")
    printed = capsys.readouterr().out
    assert printed.strip() == (tmp_path / "results.md").read_text().strip()
    mean = np.mean([r["psnr"] for r in rows[2:4]])
    assert f"| gaussian | {mean:.2f} ± " in printed


def test_the_same_command_resumes_another_protocol_is_refused_and_fresh_starts_over(sines, tmp_path, capsys, fits):
    first = run(sines, tmp_path)
    assert len(fits) == 4
    again = run(sines, tmp_path)  # nothing left to train: the rows as they were
    assert len(fits) == 4 and [r["psnr"] for r in again] == [r["psnr"] for r in first]
    more = comparison.main(sines, ["--methods", "none,gaussian", "--seeds", "3", *TOY, "--out", str(tmp_path)])
    assert fits[4:] == ["none (seed 2)", "gaussian (seed 2)"] and len(more) == 7  # only the new seed trains
    capsys.readouterr()
    before = (tmp_path / "results.json").read_text()
    with pytest.raises(SystemExit) as exc:
        comparison.main(sines, ["--steps", "5", "--resolution", "32", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "holds the results of another protocol (steps)" in err[0], err
    with pytest.raises(SystemExit) as exc:  # fewer seeds would drop rows the file holds
        run(sines, tmp_path, "--seeds", "1")
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        exc.value.code == 2 and "holds 4 rows this command does not run (none seed 1, none seed 2, gaussian seed 1, …)" in err[-1]
    )
    assert (tmp_path / "results.json").read_text() == before  # nothing overwritten
    run(sines, tmp_path, "--fresh")
    assert len(fits) == 10


def test_a_sigterm_keeps_the_finished_rows_and_the_rerun_trains_only_the_rest(sines, tmp_path, monkeypatch, capsys):
    real, calls = comparison.fit_row, []

    def fit_then_signal(*args, **kwargs):
        calls.append(kwargs["label"])
        if len(calls) == 2:  # SIGTERM while the second row trains
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(comparison, "fit_row", fit_then_signal)
    with pytest.raises(SystemExit) as exc:
        run(sines, tmp_path)
    assert exc.value.code == 143
    assert "stopped by SIGTERM" in capsys.readouterr().err
    kept = load_results(tmp_path / "results.json")
    assert [(r["method"], r["seed"]) for r in kept.rows] == [("none", 0)]
    rows = run(sines, tmp_path)
    assert calls[2:] == ["none (seed 1)", "gaussian (seed 0)", "gaussian (seed 1)"] and len(rows) == 5
    assert rows[0] == {**kept.rows[0]}


def test_old_flag_names_are_rewritten_with_a_note(sines, tmp_path, capsys):
    rows = comparison.main(sines, ["--encoders", "none", "--seeds", "3", "4", *TOY, "--out", str(tmp_path)])
    assert [(r["method"], r["seed"]) for r in rows if r["kind"] == "model"] == [("none", 3), ("none", 4)]
    err = capsys.readouterr().err
    assert "note: --encoders is an old name of --methods: --methods none" in err
    assert "note: --seeds 3 4 is the old list form: --seed 3 --seeds 2" in err
    assert comparison.deprecated(sines, ["--rows", "a", "b", "--override", "--rows", "x"]) == [
        "--methods",
        "a,b",
        "--override",
        "--rows",
        "x",
    ]


def test_print_config_writes_a_config_that_runs_the_same_rows(sines, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        comparison.main(sines, ["--methods", "gaussian", "--seed", "5", *TOY, "--print_config"])
    assert exc.value.code == 0
    config = yaml.safe_load(capsys.readouterr().out)
    assert config["methods"] == "gaussian" and config["seed"] == 5 and config["steps"] == 4 and config["seeds"] is None
    path = tmp_path / "sines.yaml"
    path.write_text(yaml.safe_dump({**config, "out": str(tmp_path / "out")}))
    rows = comparison.main(sines, ["--config", str(path)])
    assert [(r["method"], r["seed"]) for r in rows] == [("gaussian", 5), ("zero", None)]


def test_estimate_only_prints_the_expected_time_and_writes_nothing(sines, tmp_path, capsys):
    assert run(sines, tmp_path / "out", "--estimate-only") == []
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("expected time: about ")
    assert "for 2 methods × 2 members × 4 steps" in err[0] and "measured ms/step none " in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--seeds", "1e20"], "--seeds: Expected a <class 'int'>"),
        (["--seeds", "100000000000000000000"], "--seeds must be 1 … 10,000"),
        (["--seeds", "0"], "--seeds must be 1"),
        (["--seed", "-1"], "--seed must be 0 …"),
        (["--seed", str(2**32)], "--seed must be 0 …"),
        (["--steps", "0"], "--steps must be ≥ 1"),
        (["--methods", "none,fancy"], "--methods: unknown fancy; choose from none, gaussian, siren"),
        (["--paper"], "--paper: sines has no paper sizes"),
        (["--no-such-flag", "1"], "no-such-flag"),
        (["--seeds", "1", "3"], "--seeds 1 3: give consecutive seeds as --seed FIRST --seeds COUNT"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(sines, tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        comparison.main(sines, [*TOY, "--out", str(tmp_path / "out"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and words in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_results_file_of_another_layout_is_refused_in_one_line(sines, tmp_path, capsys):
    (tmp_path / "results.json").write_text(json.dumps({"rows": [], "table": "old"}))
    with pytest.raises(SystemExit) as exc:
        run(sines, tmp_path)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "results.json: keys ['rows', 'table']; the layout is command" in err[0]


def test_the_docs_new_method_is_offered_by_a_comparison(tmp_path, monkeypatch, capsys):
    from inr.experiments import compare_encoders
    from inr.methods.registry import METHODS

    section = EXTENDING.read_text().split("## A new method", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.setitem(METHODS, "gaussian_small", None)  # the registry loses the example's entry again afterwards
    exec(compile(code, "docs method example", "exec"), {})
    rows = compare_encoders.main(["--methods", "gaussian_small", "--resolution", "16", "--steps", "2", "--out", str(tmp_path)])
    assert rows[0]["method"] == "gaussian_small" and rows[0]["setting"] == "σ = 4, m = 64" and rows[0]["lr"] == 1e-3
    assert rows[0]["params"] == 128 * 256 + 256 + 2 * (256 * 256 + 256) + 256 * 3 + 3  # the paper's MLP on 64 × 2 features
