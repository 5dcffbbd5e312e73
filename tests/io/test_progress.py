"""Progress lines: a loop inside a report prints its share done and an estimate, at most every interval; a loop
outside one prints nothing; the mesh command reports its sampling of the field."""

import io

from inr.io import progress


def test_a_report_prints_its_progress_at_most_every_interval(monkeypatch):
    clock = iter([0.0, 0.5, 3.0, 3.5, 6.0, 9.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    stream = io.StringIO()
    with progress.reporting("render", stream=stream, interval=2.0) as report:  # starts at 0.0
        for done in (1, 2, 3, 4):  # at 0.5 (too soon), 3.0, 3.5 (too soon), 6.0
            progress.advance(done * 1_000_000, 8_000_000)
    lines = stream.getvalue().splitlines()
    assert (
        lines
        == [
            "render: 25% (2.0M of 8.0M), 3 s, about 9 s left",
            "render: 50% (4.0M of 8.0M), 6 s, about 6 s left",
        ]
        and report.lines == 2
    )


def test_outside_a_report_nothing_is_printed(capsys):
    progress.advance(1, 2)
    assert progress.active() is None and capsys.readouterr().err == ""
