"""The learned-initialisation study's paired table: its run writes, into results.md and paired.json, each row − the
paper's init after 2, 10 and 100 steps and at the full count and each row − the baseline at the full count, paired
per test signal; the differences equal those recomputed here from results.json's rows, and the verdicts follow the
rule of docs/results.md (two-sided paired t-test at 5 %, at least 3 pairs)."""

import json
import math
import statistics

import pytest
from scipy import stats

from inr.experiments.learned_init import main

TINY = ["--resolution", "16", "--steps", "12", "--test-signals", "3", "--train-signals", "6", "--meta-steps", "2"]


def recomputed(rows, a, b, key):
    """a − b of ``key`` per test signal, from results.json's rows alone."""
    values = {m: {r["signal"]: r[key] for r in rows if r["method"] == m and isinstance(r.get(key), float)} for m in (a, b)}
    return [values[a][s] - values[b][s] for s in values[a] if s in values[b]]


@pytest.mark.slow
def test_the_run_writes_the_paired_table_of_its_rows(tmp_path):
    out = tmp_path / "natural"
    main(["--kind", "natural", *TINY, "--methods", "reptile,paper,torch", "--out", str(out), "--threads", "1"])
    results = json.loads((out / "results.json").read_text())
    paired = json.loads((out / "paired.json").read_text())
    assert paired["protocol"] == results["protocol"]
    rows = results["rows"]
    entries = paired["paired"]
    # against the paper's init: every other model row at each budget below the full count (12) and at it; against the
    # baseline: every model row at the full count
    expected = [(m, "paper", s, k) for m in ("reptile", "torch") for s, k in ((2, "psnr_2"), (10, "psnr_10"), (12, "psnr"))]
    expected += [(m, "bicubic", 12, "psnr") for m in ("reptile", "paper", "torch")]
    assert sorted((e["method"], e["against"], e["steps"], e["key"]) for e in entries) == sorted(expected)
    for e in entries:
        diffs = recomputed(rows, e["method"], e["against"], e["key"])
        assert e["angles"] is None and e["pairs"] == e["signals"] == len(diffs) == 3
        assert e["mean"] == pytest.approx(statistics.fmean(diffs), abs=1e-12)
        assert e["std"] == pytest.approx(statistics.stdev(diffs), abs=1e-12)
        assert e["above"] == sum(d > 0 for d in diffs)
        assert (e["low"], e["high"]) == pytest.approx((min(diffs), max(diffs)), abs=1e-12)
        p = stats.ttest_rel([d for d in diffs], [0.0] * len(diffs)).pvalue if statistics.stdev(diffs) > 0 else 0.0
        assert e["p"] == pytest.approx(p, rel=1e-6, abs=1e-12)
        a, b = e["method"], e["against"]
        called = e["p"] < 0.05
        word = (f"{a} above {b}" if e["mean"] > 0 else f"{b} above {a}") if called else "level"
        assert e["verdict"] == word
    text = (out / "results.md").read_text()
    head = "| row | pairs (signals) | @2 | @10 | @12 (full) |"
    assert "row − the paper's init, PSNR (dB), paired per test signal" in text and head in text
    for name in ("reptile", "torch"):
        line = next(x for x in text.splitlines() if x.startswith(f"| {name} | 3 (3) |"))
        cells = [c.strip() for c in line.strip("|").split("|")][2:]
        for cell, (_steps, key) in zip(cells, ((2, "psnr_2"), (10, "psnr_10"), (12, "psnr"))):
            entry = next(e for e in entries if e["method"] == name and e["against"] == "paper" and e["key"] == key)
            assert cell.startswith(f"{entry['mean']:+.2f} ± {entry['std']:.2f} ({entry['above']} of 3 above")
    assert "row − bicubic, PSNR (dB)" in text and "- reptile: " in text and ", 3 pairs from 3 signals" in text
    assert all(math.isfinite(e["mean"]) for e in entries)
