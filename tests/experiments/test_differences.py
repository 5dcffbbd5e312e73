"""The rule for calling a difference (docs/results.md), computed once in inr.experiments.runner: paired differences
per signal and seed against numpy, the verdict at its edges, collapsed fits named and counted out of the means."""

import math

import numpy as np
import pytest

from inr.experiments.runner import Column, called, collapsed_note, difference_note, markdown_table, paired, summarise

RNG = np.random.default_rng(0)


def rows_of(method, values, signals=("a", "b"), seeds=(0, 1, 2)):
    it = iter(values)
    return [{"method": method, "signal": s, "seed": seed, "psnr": float(next(it))} for s in signals for seed in seeds]


def test_paired_differences_match_numpy_per_signal_and_seed():
    x, y = RNG.normal(25, 2, 6), RNG.normal(24, 2, 6)
    rows = rows_of("x", x) + rows_of("y", y)[::-1]  # the order of the rows does not pair them
    d = paired(rows, "x", "y", "psnr")
    diff = x - y
    assert d.n == 6 and d.mean == pytest.approx(diff.mean()) and d.std == pytest.approx(diff.std(ddof=1))
    assert d.above == int((diff > 0).sum()) and (d.low, d.high) == pytest.approx((diff.min(), diff.max()))
    # a seedless baseline pairs with every seed of its signal
    base = [{"method": "bicubic", "signal": s, "seed": None, "psnr": v} for s, v in (("a", 24.0), ("b", 23.0))]
    d = paired(rows_of("x", x) + base, "x", "bicubic", "psnr")
    assert d.n == 6 and d.mean == pytest.approx((x - np.repeat([24.0, 23.0], 3)).mean())
    assert paired(rows_of("x", x) + base, "bicubic", "x", "psnr").mean == pytest.approx(-d.mean)


def test_the_rule_calls_a_mean_beyond_its_spread_and_the_machine_spread_and_nothing_else():
    base = rows_of("y", [20.0] * 6)
    clear = rows_of("x", [21.0, 21.2, 20.8, 21.1, 20.9, 21.0]) + base  # +1.0 ± 0.14
    assert called(paired(clear, "x", "y", "psnr")) and difference_note(clear, "x", "y").endswith(": x above y")
    assert not called(paired(clear, "x", "y", "psnr"), machine=1.2)  # within what another CPU moves the figure
    assert difference_note(clear, "y", "x").endswith(": x above y")  # the sign names the winner
    noisy = rows_of("x", [21.0, 19.0, 21.5, 18.6, 20.9, 20.4]) + base  # +0.23 ± 1.2: a rerun could flip it
    assert difference_note(noisy, "x", "y").endswith(": level")
    two = rows_of("x", [21.0, 21.0], signals=("a",), seeds=(0, 1)) + base
    assert difference_note(two, "x", "y") == "x − y: +1.00 dB, 2 pairs: level (a difference needs 3 paired runs)"
    assert difference_note(base, "x", "y") == "x − y: no runs in common"


def test_a_collapsed_fit_is_named_and_not_averaged():
    rows = rows_of("x", [30.0, 31.0, 14.85, 30.5, 29.5, 30.0])
    rows[2]["collapsed"] = 1.0
    summary = summarise(rows, ["psnr", "seconds"])[0]
    kept = [30.0, 31.0, 30.5, 29.5, 30.0]
    assert summary["psnr"] == pytest.approx(np.mean(kept)) and summary["psnr_n"] == 5 and summary["n"] == 6
    assert "(5 of 6)" in markdown_table([summary], [Column("m", "method", "s"), Column("p", "psnr")])
    assert (
        collapsed_note(rows)
        == "Collapsed to a constant, left out of the means and the paired differences: x (a, seed 2; 14.85 dB)."
    )
    d = paired(rows + rows_of("y", [29.0] * 6), "x", "y", "psnr")
    assert d.n == 5 and d.mean == pytest.approx(np.mean(kept) - 29.0)
    assert math.isnan(paired(rows, "x", "nobody", "psnr").mean)


def test_the_image_comparison_prints_the_rules_lines_under_its_table(tmp_path, capsys):
    """compare_encoders pairs its rows per seed (the interpolations, seedless, with every seed) and prints the
    verdicts: neighbouring mappings, then the best mapping against each interpolation."""
    from inr.experiments.compare_encoders import main

    argv = ["--image", "data/astronaut.png", "--resolution", "16", "--steps", "2", "--width", "8", "--seeds", "3"]
    rows = main([*argv, "--methods", "none,gaussian", "--threads", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    line = difference_note(rows, "gaussian", "none", "psnr", "dB")
    assert f"\n- {line}\n" in out and " over 3 pairs " in line
    best = max(("none", "gaussian"), key=lambda m: np.mean([r["psnr"] for r in rows if r["method"] == m]))
    assert f"- {difference_note(rows, best, 'bicubic', 'psnr', 'dB')}" in out
