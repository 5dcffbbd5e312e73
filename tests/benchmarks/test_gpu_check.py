"""The GPU check on a machine without CUDA: one line saying nothing was measured, exit 1 (not a success),
nothing written; --parts that name no part are refused."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _gpu_check(tmp_path, *args):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # no device visible even where one exists
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_gpu_check_without_cuda_says_so_and_exits_1(tmp_path):
    proc = _gpu_check(tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "gpu_check: no CUDA device on this machine (torch.cuda.device_count() = 0): nothing measured"
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_parts_that_match_nothing_are_refused(tmp_path):
    proc = _gpu_check(tmp_path, "--dry-run", "--parts", "9")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--parts 9: no part starts so; the parts: 2. hash encoding, 3. paper protocol" in proc.stderr
    assert "measured" not in proc.stdout and list(tmp_path.iterdir()) == []


def test_stacked_members_part_measures_on_the_cpu(capsys, monkeypatch):
    """Part 6 with the dry run's tiny sizes on the CPU: a row per config with a positive finite throughput ratio,
    and one row per implementation of the stack."""
    import argparse
    import importlib.util
    import math

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # the script imports benchmarks/common.py beside it
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    args = argparse.Namespace(
        device="cpu", accelerator="cpu", steps=3, warmup=1, repeats=1, members=2, stacked_points=64,
        overrides=["--model.init_args.network.init_args.width", "16", "--data.init_args.resolution", "16"],
    )  # fmt: skip
    ratios = gpu_check.stacked_members("image.yaml", args)
    assert len(ratios) == 1 and math.isfinite(ratios[0]) and ratios[0] > 0
    gpu_check.stacked_part(args)
    lines = capsys.readouterr().out.splitlines()
    rows = [ln for ln in lines if ln.startswith(("| image.yaml", "| image_paper.yaml"))]
    assert len(rows) == 3
    for row in rows:  # "| config | single | stacked | median (min–max) | ≥ 4×: met |": the verdict follows the median
        median, verdict = float(row.split(" | ")[3].split()[0]), row.split(" | ")[4]
        assert verdict == ("≥ 4×: met |" if median >= 4 else "≥ 4×: NOT met |"), row
    assert [ln.split(" |")[0] for ln in lines if ln.startswith(("| stacked", "| vmap", "| K separate"))] == [
        "| stacked layers (bmm)",
        "| vmap(functional_call)",
        "| K separate networks",
    ]


@pytest.mark.slow
def test_small_steps_part_measures_on_the_cpu(capsys, monkeypatch):
    """Part 7 with the dry run's tiny sizes on the CPU (the CUDA graph runs eagerly there, cuda_graphs is refused
    with its log line): one row per variant, each a positive rate (250 steps: image.yaml's groups of 100 steps log
    their values when they end, and a rate needs two groups' ends)."""
    import argparse
    import importlib.util

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    args = argparse.Namespace(
        device="cpu", accelerator="cpu", steps=3, warmup=1, repeats=1, small_steps=250, overrides=[],
        trainer=["--trainer.accelerator", "cpu", "--trainer.log_every_n_steps", "5"],  # rates from logged steps
    )  # fmt: skip
    times = gpu_check.small_step_rates("image.yaml", gpu_check.TINY_AS_RUN, args)
    names = list(times)
    assert names[:3] == ["hand loop", "hand loop, CUDA graph", "train.py, inner_steps 1"], names
    assert names[3].startswith("train.py, inner_steps ") and names[4].endswith(", cuda_graphs") and len(names) == 5
    for name, xs in times.items():
        assert len(xs) == 1 and 0 < xs[0] < 1, (name, xs)


@pytest.mark.slow
def test_dry_run_writes_one_json_and_one_markdown_table(tmp_path, monkeypatch):
    """The hash encoding and the paper-size run on the CPU with the dry run's sizes: every figure a row of the JSON
    file and of the one markdown table, each part's status and seconds beside them."""
    import importlib.util
    import json
    import math

    import torch

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    threads = torch.get_num_threads()
    try:
        gpu_check.main(["--dry-run", "--parts", "2", "3", "--out", str(tmp_path / "out")])
    finally:
        torch.set_num_threads(threads)  # the dry run takes one thread; the rest of this worker keeps its own
    record = json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    assert record["device"].startswith("CPU (dry run") and record["torch"] == torch.__version__
    assert {name: part["status"] for name, part in record["parts"].items()} == {
        "2. hash encoding": "done",
        "3. paper protocol": "done",
    }
    figures = [(row["part"], row["figure"], row["unit"]) for row in record["figures"]]
    assert figures == [
        ("2. hash encoding", "2-D forward + backward, 4,096 points", "points/s"),
        ("2. hash encoding", "3-D forward + backward, 4,096 points", "points/s"),
        ("3. image_paper.yaml", "whole command, 20 steps", "s"),
        ("3. image_paper.yaml", "step as logged", "ms"),
    ]
    assert all(math.isfinite(row["value"]) and row["value"] > 0 for row in record["figures"])
    table = (tmp_path / "out" / "gpu_check.md").read_text().splitlines()
    rows = [line for line in table if line.startswith("| ") and not line.startswith("| part |")]
    assert table[2] == "| part | figure | value | unit | compared |" and len(rows) == len(figures) + len(record["parts"])
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # nothing else written in the working directory
