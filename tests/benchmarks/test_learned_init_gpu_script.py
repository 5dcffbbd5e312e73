"""benchmarks/learned_init_gpu.sh (the study's long meta-training, meant for a GPU) on the CPU at toy sizes: its
expected time first (each meta-training and the rows), then the study itself; bad arguments in one line."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "learned_init_gpu.sh"
TOY = {"META_STEPS": "4", "TRAIN_SIGNALS": "6", "TEST_SIGNALS": "2", "EXTRA": "--resolution 16 --steps 6 --threads 1"}


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "TMPDIR", "OMP_NUM_THREADS")}
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
        env={**keep, "PATH": "/usr/bin:/bin", "PYTHON": sys.executable, **env},
    )


def test_the_estimate_comes_first_then_the_study_runs(tmp_path):
    out = tmp_path / "ct"
    done = run("ct", str(out), **{**TOY, "FEW_ANGLES": "4", "EXTRA": TOY["EXTRA"] + " --methods reptile,paper --angles 6"})
    assert done.returncode == 0, done.stderr[-3000:]
    estimate = done.stderr.index("expected time: about")
    assert done.stderr.index("before the rows: about") > estimate and "reptile's meta-training (4 outer steps)" in done.stderr
    assert done.stderr.index("reptile meta-trained in") > estimate  # the run follows its estimate
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"]["train_signals"] == 6 and results["protocol"]["reptile"]["steps"] == 4
    assert results["protocol"]["few_angles"] == 4 and (out / "curves.png").is_file()


def test_estimate_only_writes_nothing(tmp_path):
    done = run(
        "--estimate-only", "natural", str(tmp_path / "natural"), **{**TOY, "EXTRA": TOY["EXTRA"] + " --methods maml,paper"}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "maml's meta-training (2 outer steps)" in done.stderr and not (tmp_path / "natural").exists()


def test_bad_arguments_are_one_line():
    for args, expected in ((["faces"], "KIND faces: one of"), (["--fast", "ct"], "unknown option --fast"), ([], "usage")):
        done = run(*args)
        assert done.returncode == 2 and expected in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
