"""Part 8 of the GPU check (meta-learning throughput) with the dry run's tiny sizes on the CPU: one row per
algorithm and meta-batch, each with a positive finite step time and signals per second = signals / step."""

import argparse
import importlib.util
import math
from pathlib import Path

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
    for row in rows:
        step_ms, per_second = float(row.split(" | ")[2]), float(row.split(" | ")[3])
        assert math.isfinite(step_ms) and step_ms > 0
        assert abs(per_second - 2e3 / step_ms) <= 0.05 + 1e-3 * per_second  # 2 signals per step; printed to 0.1
