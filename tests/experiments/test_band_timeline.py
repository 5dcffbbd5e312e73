"""band_timeline: the first step below a threshold per band, read from a comparison's results.json."""

import json

import pytest

from inr.experiments.band_timeline import first_below, main, target_table, timeline_table


def rows():
    history = {
        "steps": [9, 19, 29],
        "edges": [0.0, 2.0, 4.0, 6.0],
        "errors": [[0.5, 1.0, None], [0.09, 0.6, None], [0.2, 0.05, None]],
    }  # band 3 holds no target energy
    return [{"method": "net", "history": history}, {"method": "bicubic", "kind": "baseline"}]


def test_first_below_takes_the_first_crossing_and_skips_empty_bands():
    assert first_below(rows()[0]["history"]["steps"], rows()[0]["history"]["errors"], 0.1) == [19, 29, None]
    assert first_below([1, 2], [[0.5], [0.4]], 0.1) == [None]
    with pytest.raises(ValueError):
        first_below([1], [[0.5], [0.4]], 0.1)


def test_table_and_command(tmp_path, capsys):
    table = timeline_table(rows(), 0.1).splitlines()
    assert table[0] == "| row | 0–2 | 2–4 | 4–6 | bands learned |"
    assert table[2] == "| net | 19 | 29 | — | 2/3 |" and len(table) == 3  # baselines have no history
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"rows": rows()}))
    assert main([str(path), "--threshold", "0.7"]).splitlines()[2] == "| net | 9 | 19 | — | 2/3 |"
    assert "below 0.7" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main([str(tmp_path / "missing.json")])
    assert exc.value.code == 2 and "missing.json" in capsys.readouterr().err


def test_target_table_reads_the_progress_history(tmp_path):
    r = {
        "method": "net",
        "history": rows()[0]["history"],
        "progress": {"steps": [0, 10, 20], "test_psnr": [10.0, 21.0, 23.5], "train_seconds": [0.0, 4.2, 8.9]},
    }
    table = target_table([r], [20.0, 23.5, 30.0]).splitlines()
    assert table[0] == "| row | final test PSNR (dB) | step (s) to 20 dB | step (s) to 23.5 dB | step (s) to 30 dB |"
    assert table[2] == "| net | 23.50 | 10 (4) | 20 (9) | — |"
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"rows": [r]}))
    assert main([str(path), "--target-psnr", "20"]).splitlines()[-1] == "| net | 23.50 | 10 (4) |"


def test_rows_of_a_run_over_seeds_are_named_by_seed():
    history = rows()[0]["history"]
    over_seeds = [{"method": "net", "seed": k, "history": history} for k in (0, 1)] + [
        {"method": "solo", "seed": 0, "history": history}
    ]
    table = timeline_table(over_seeds, 0.1).splitlines()
    assert [line.split(" | ")[0] for line in table[2:]] == ["| net (seed 0)", "| net (seed 1)", "| solo"]
