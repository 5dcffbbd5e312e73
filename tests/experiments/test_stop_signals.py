"""A comparison stopped by SIGTERM or Ctrl-C prints the rows it finished, one line naming the signal, and exits
143 / 130 (as train.py does) — never 0 with nothing printed; the finished rows are in results.json already."""

import os
import signal

import pytest

from inr.experiments import compare_encoders, comparison
from inr.experiments.results import load_results


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_the_second_row_keeps_the_first_and_exits_with_its_code(tmp_path, capsys, monkeypatch, signum, code):
    real_fit_row = comparison.fit_row
    calls = []

    def fit_row_then_signal(*args, **kwargs):
        calls.append(kwargs.get("label"))
        if len(calls) == 2:  # the signal arrives while the second row trains
            os.kill(os.getpid(), signum)
        return real_fit_row(*args, **kwargs)

    monkeypatch.setattr(comparison, "fit_row", fit_row_then_signal)
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    argv = ["--resolution", "16", "--steps", "2", "--methods", "none,basic,gaussian", "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as exit_:
        compare_encoders.main(argv)
    captured = capsys.readouterr()
    name = "SIGTERM" if signum == signal.SIGTERM else "SIGINT"
    assert exit_.value.code == code
    assert captured.err.strip().splitlines()[-1].startswith(f"stopped by {name}: the rows above finished")
    table = [line for line in captured.out.splitlines() if line.startswith("| ")]
    assert len(table) == 2 and "none" in table[1]  # header + the one finished row
    assert len(calls) == 2  # the third row never started
    assert {s: signal.getsignal(s) for s in before} == before  # the command's handlers are gone again
    assert [r["method"] for r in load_results(tmp_path / "out" / "results.json").rows] == ["none"]
