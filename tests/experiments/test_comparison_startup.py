"""A comparison's command line alone (``--help``) imports no Lightning, no task, no data floor and no torch: what
trains is imported by the hooks and functions that train (``inr.experiments.comparison``); benchmarks/startup.py
times the same commands."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import atexit, json, runpy, sys
def report():
    print("@@" + json.dumps(sorted(sys.modules)), file=sys.__stderr__)
atexit.register(report)
module, argv = sys.argv[1], sys.argv[2:]
if module == "inr-compare":
    sys.argv = ["inr-compare", *argv]
    from inr.commands import compare
    compare()
elif module == "inr-codec":
    from inr.commands import codec
    codec(argv)
else:  # python -m <module> argv
    sys.argv = [module, *argv]
    runpy.run_module(module, run_name="__main__")
"""
TRAINING = ("lightning", "pytorch_lightning", "inr.tasks", "inr.data", "torch")
# a process a launcher started reads its ranks (inr.experiments.ranks, with Lightning): these runs are by hand
LAUNCHERS = ("TORCHELASTIC_RUN_ID", "SLURM_NTASKS")


def loaded(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in TRAINING)]


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["inr-compare", "--help"],
        ["inr.experiments.compare_encoders", "--help"],
        ["inr.experiments.table1", "--help"],
        ["inr.experiments.view_synthesis", "--help"],
        ["inr.experiments.shapes", "--help"],
        ["inr-codec", "compare", "--help"],
    ],
    ids=lambda c: " ".join(c),
)
def test_help_imports_no_lightning_no_task_and_no_torch(command):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHERS}
    done = subprocess.run([sys.executable, "-c", PROBE, *command], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    reports = [line for line in done.stderr.splitlines() if line.startswith("@@")]
    assert done.returncode == 0 and done.stdout.startswith("usage: ") and reports, done.stderr[-2000:]
    modules = json.loads(reports[-1][2:])
    assert "--methods" in done.stdout and "--seeds" in done.stdout  # the comparison's own command line
    assert loaded(modules) == [], f"{' '.join(command)} imported {loaded(modules)[:8]}"
