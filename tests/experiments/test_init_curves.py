"""The tuned standard init and the wall-clock curves of the learned-initialisation study: at each budget the rate row
with the best mean is taken, per angle count apart, its per-signal values and seconds copied; a collapsed fit is
neither averaged nor copied; a learned row's seconds carry its meta-training shared over N signals."""

import pytest

from inr.experiments.init_curves import RATES, TUNED, curves, curves_figure, seconds_key, tuned_rows


def rows_of(values, angles=None):
    """Rows of the rate candidates: {method: (psnr_2, psnr)} per signal offset s (value + s)."""
    out = []
    for s in range(3):
        for method, (early, full) in values.items():
            row = {"method": method, "kind": "model", "signal": s, "seed": 0, "psnr_2": early + s, "psnr": full + s}
            row.update({"seconds_2": 0.1 + s, "seconds_full": 5.0 + s})
            if angles is not None:
                row["angles"] = angles
            out.append(row)
    return out


def test_each_budget_takes_the_rate_best_on_average_and_each_signals_own_value():
    rows = rows_of({"paper": (10.0, 28.0), "adam1e-2": (16.0, 27.0), "adam3e-2": (15.0, 20.0)})
    rows.append({"method": "reptile", "kind": "model", "signal": 0, "seed": 0, "psnr_2": 99.0, "psnr": 99.0})
    tuned, choice = tuned_rows(rows, ["psnr_2", "psnr"])
    assert choice == {None: {"psnr_2": "adam1e-2", "psnr": "paper"}}  # the learned row is never a candidate
    assert [(r["method"], r["signal"], r["psnr_2"], r["psnr"]) for r in tuned] == [
        (TUNED, s, 16.0 + s, 28.0 + s) for s in range(3)
    ]
    assert [r["seconds_2"] for r in tuned] == [0.1, 1.1, 2.1] and tuned[0]["rates"] == {"psnr_2": "adam1e-2", "psnr": "paper"}


def test_angle_counts_are_tuned_apart():
    rows = rows_of({"paper": (10.0, 28.0), "adam3e-3": (12.0, 27.0)}, angles=20)
    rows += rows_of({"paper": (10.0, 22.0), "adam3e-3": (9.0, 23.0)}, angles=6)
    tuned, choice = tuned_rows(rows, ["psnr_2", "psnr"])
    assert choice == {20: {"psnr_2": "adam3e-3", "psnr": "paper"}, 6: {"psnr_2": "paper", "psnr": "adam3e-3"}}
    assert [(r["angles"], r["psnr"]) for r in tuned if r["signal"] == 0] == [(20, 28.0), (6, 23.0)]


def test_a_collapsed_fit_is_neither_averaged_nor_copied_and_one_rate_makes_no_tuned_row():
    rows = rows_of({"paper": (10.0, 28.0), "adam1e-2": (16.0, 30.0)})
    for r in rows:
        if r["method"] == "adam1e-2" and r["signal"] == 2:
            r["psnr"], r["collapsed"] = 1000.0, 1.0  # would win the mean if it were counted
    tuned, choice = tuned_rows(rows, ["psnr"])
    assert choice[None]["psnr"] == "adam1e-2"  # (30 + 31) / 2 > 29 without the collapsed fit
    assert "psnr" not in tuned[2] and [r["psnr"] for r in tuned[:2]] == [30.0, 31.0]
    assert tuned_rows(rows_of({"paper": (10.0, 28.0)}), ["psnr"]) == ([], {})
    assert set(RATES) == {"adam1e-4", "adam3e-4", "adam3e-3", "adam1e-2", "adam3e-2"}


def test_a_rate_below_the_protocols_is_a_candidate_where_it_ran():
    rows = rows_of({"paper": (10.0, 28.0), "adam3e-3": (12.0, 27.0), "adam3e-4": (6.0, 29.0)})
    _, choice = tuned_rows(rows, ["psnr_2", "psnr"])
    assert choice == {None: {"psnr_2": "adam3e-3", "psnr": "adam3e-4"}}


def test_the_curves_share_a_meta_training_over_the_signals_stated(tmp_path):
    summary = [
        {
            "method": "maml",
            "kind": "model",
            "psnr_0": 14.0,
            "psnr_2": 20.0,
            "psnr": 26.0,
            "seconds_0": 0.0,
            "seconds_2": 0.5,
            "seconds_full": 30.0,
        },
        {
            "method": "paper",
            "kind": "model",
            "psnr_0": 12.0,
            "psnr_2": 17.0,
            "psnr": 27.0,
            "seconds_0": 0.0,
            "seconds_2": 0.4,
            "seconds_full": 25.0,
        },
        {"method": "bicubic", "kind": "baseline", "psnr": 27.5},
    ]
    record = curves(summary, "psnr", [0, 2, 5], 10, {"maml": 600.0}, 100)
    assert set(record["rows"]) == {"maml", "paper"} and record["amortised_over"] == 100
    maml = record["rows"]["maml"]
    assert maml["steps"] == [0, 2, 10] and maml["score"] == [14.0, 20.0, 26.0]  # no score after 5 steps: left out
    assert maml["seconds"] == pytest.approx([6.0, 6.5, 36.0]) and record["rows"]["paper"]["seconds"] == [0.0, 0.4, 25.0]
    figure = curves_figure(record, "psnr", "toy")
    figure.savefig(tmp_path / "curves.png", dpi=40)
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"
    assert seconds_key("psnr_300") == "seconds_300"
