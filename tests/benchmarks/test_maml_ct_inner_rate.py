"""benchmarks/maml_ct_inner_rate.py at a toy size: a row per rate, the first inner steps' measurements and the init's
held-out PSNR finite; at rate 10 the first step saturates the sigmoid over the grid and the outer gradient vanishes,
at rate 1 neither."""

import importlib.util
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_each_rate_prints_one_row_and_rate_10_saturates(tmp_path):
    spec = importlib.util.spec_from_file_location("maml_ct_inner_rate", ROOT / "benchmarks" / "maml_ct_inner_rate.py")
    trials = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trials)
    argv = ["--rates", "1,10", "--steps", "1", "--resolution", "16", "--train-signals", "4", "--test-signals", "1"]
    text = trials.main([*argv, "--out", str(tmp_path)])
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| inner rate")]
    assert [r.split(" | ")[0][2:] for r in rows] == ["1", "10"]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert all(len(c) == 1 + len(trials.COLUMNS) + 2 + len(trials.EVAL_STEPS) for c in cells)
    assert all(math.isfinite(float(x)) for c in cells for x in c[-len(trials.EVAL_STEPS) :])
    saturated, gradient = (1 + trials.COLUMNS.index("saturated"), 1 + trials.COLUMNS.index("‖∇θ‖"))
    assert float(cells[0][saturated]) < 0.5 < float(cells[1][saturated])
    assert float(cells[1][gradient]) < 1e-3 * float(cells[0][gradient])
    assert len(list(tmp_path.glob("maml_rate_*.ckpt"))) == 2
