"""Part 8 of the GPU check (meta-learning throughput) with the dry run's tiny sizes on the CPU: one row per
algorithm and meta-batch, each with a positive finite step time and signals per second = signals / step, the same
figures recorded for gpu_check.json; the part is listed and sized in a dry run's plan."""

import argparse
import importlib.util
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_meta_learning_part_measures_on_the_cpu(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # the script imports benchmarks/common.py beside it
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    tiny = ["--model.init_args.network.init_args.width", "16", "--data.init_args.resolution", "16"]
    args = argparse.Namespace(
        accelerator="cpu", steps=2, warmup=1, meta_signals=(2,),
        overrides_meta=[*tiny, "--data.init_args.train_signals", "4", "--data.init_args.test_signals", "2"],
    )  # fmt: skip
    gpu_check.meta_part(args)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("| reptile", "| maml"))]
    assert [row.split(" | ")[:2] for row in rows] == [["| reptile", "2"], ["| maml", "2"]]
    recorded = [r for r in gpu_check.REPORT.rows if r["part"] == "8. meta-learning, meta_natural.yaml"]
    assert [r["figure"] for r in recorded] == ["reptile, 2 signals per step", "maml, 2 signals per step"]
    assert all(r["unit"] == "signals/s" and r["value"] > 0 for r in recorded)  # its rows of gpu_check.json
    for row in rows:
        step_ms, per_second = float(row.split(" | ")[2]), float(row.split(" | ")[3])
        assert math.isfinite(step_ms) and step_ms > 0
        # 2 signals per step; the step time is printed to 0.1 ms and the rate to 0.1 signals/s
        assert 2e3 / (step_ms + 0.05) - 0.05 <= per_second <= 2e3 / (step_ms - 0.05) + 0.05


def test_the_meta_learning_part_is_listed(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    args = argparse.Namespace(dry_run=True)
    gpu_check.configure(args, 0)
    assert args.meta_signals == (2,) and "--data.init_args.train_signals" in args.overrides_meta
    assert gpu_check.planned("8. meta-learning") == 60
    with pytest.raises(SystemExit) as exc:  # --parts 9 names no part: the refusal lists them, part 8 among them
        gpu_check.main(["--dry-run", "--parts", "9", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "8. meta-learning" in capsys.readouterr().err
