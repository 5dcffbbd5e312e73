"""benchmarks/meta_settings.py at a toy size: every natural trial meta-trains (the paper's init apart) for the given
outer steps and is scored after each of its inner-step counts; the table has a row per trial, in TRIALS' order."""

import importlib.util
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_trials_of_a_kind_print_one_row_each(tmp_path):
    spec = importlib.util.spec_from_file_location("meta_settings", ROOT / "benchmarks" / "meta_settings.py")
    trials = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trials)
    argv = ["--kinds", "natural", "--steps", "1", "--resolution", "16", "--test-signals", "2", "--out", str(tmp_path)]
    text = trials.main(argv)
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| trial")]
    labels = [t[1] for t in trials.TRIALS if t[0] == "natural"]
    assert [r.split(" | ")[0][2:] for r in rows] == labels
    for row, trial in zip(rows, (t for t in trials.TRIALS if t[0] == "natural")):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == ("—" if trial[2] is None else "1") and len(cells) == 3 + len(trials.EVAL_STEPS)
        assert all(math.isfinite(float(c)) for c in cells[3:])
    assert len(list(tmp_path.glob("natural/trial_*.ckpt"))) == len(labels) - 1  # the paper's init is not meta-trained
