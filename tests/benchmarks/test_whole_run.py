"""benchmarks/whole_run.py with fewer steps than twice the config's logging interval: the runs log often enough
for a step time to be read (was a ZeroDivisionError or a KeyError on the missing ``train/loss``)."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
TINY = ["--data.init_args.resolution", "16", "--model.init_args.network.init_args.width", "16"]


@pytest.fixture
def scripts(monkeypatch):
    """(whole_run, common) imported as the script imports them (benchmarks/ first on ``sys.path``)."""
    monkeypatch.setattr(sys, "path", [str(BENCHMARKS), *sys.path])
    had = {name: name in sys.modules for name in ("common", "whole_run")}
    yield importlib.import_module("whole_run"), importlib.import_module("common")
    for name, present in had.items():
        if not present:
            sys.modules.pop(name, None)


def test_short_runs_log_twice_and_long_ones_as_configured(scripts, capsys):
    whole_run, _ = scripts
    assert whole_run.logging_interval("image.yaml") == 50  # image.yaml's trainer.log_every_n_steps
    assert whole_run.readable_logging("image.yaml", 100) == []
    assert whole_run.readable_logging("image.yaml", 60) == ["--trainer.log_every_n_steps", "30"]
    assert "image.yaml logs train/loss every 50 steps; these 60-step runs log every 30" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="--steps 1: a step time needs 2 steps or more"):
        whole_run.readable_logging("image.yaml", 1)


@pytest.mark.slow
def test_a_20_step_run_gives_a_step_time(scripts, capsys):
    whole_run, common = scripts
    # groups of 5 steps: a group's logged values are written when it ends, and the rate is read between group ends
    groups = ["--model.init_args.inner_steps", "5"]
    step, total = common.whole_run("image.yaml", 20, [*TINY, *groups, *whole_run.readable_logging("image.yaml", 20)])
    assert math.isfinite(step) and 0 < step < total  # the whole command adds its start-up and closing work
    with pytest.raises(SystemExit, match="logged in fewer than two groups of 100 steps; run more steps"):
        common.whole_run("image.yaml", 20, [*TINY, *whole_run.readable_logging("image.yaml", 20)])  # one group
