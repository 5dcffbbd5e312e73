"""Progress of a long loop, for a person waiting on a command: one line on stderr at most every few seconds.

    with reporting("mesh: rendering 256³"):      # a command opens a report around its work ...
        model.render((256, 256, 256))            # ... and the loops inside it say how far they are (advance)

prints, after the first ``interval`` seconds and then every ``interval`` seconds,
``mesh: rendering 256³: 45% (7.5M of 16.8M), 12 s, about 15 s left``. Outside a report (a library call, a test)
``advance`` costs one context-variable read and prints nothing; a loop done within ``interval`` prints nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Optional, TextIO


def amount(n: float) -> str:
    """A count in a few characters.

    Example:
        >>> amount(512), amount(7_500_000), amount(12_345)
        ('512', '7.5M', '12.3k')
    """
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    if n >= 1e4:
        return f"{n / 1e3:.1f}k"
    return f"{n:g}"


def format_seconds(seconds: float) -> str:
    """``42 s``, ``3.5 min``, ``1.2 h``.

    Example:
        >>> format_seconds(42.4), format_seconds(210), format_seconds(9000)
        ('42 s', '3.5 min', '2.5 h')
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


class Report:
    """The open report: what is being done, when it started, when it last printed."""

    def __init__(self, what: str, stream: TextIO, interval: float) -> None:
        self.what, self.stream, self.interval = what, stream, interval
        self.start = self.printed = time.monotonic()
        self.lines = 0

    def advance(self, done: float, total: float) -> None:
        now = time.monotonic()
        if now - self.printed < self.interval or total <= 0:
            return
        self.printed = now
        elapsed = now - self.start
        left = elapsed / done * (total - done) if done > 0 else float("nan")
        eta = f", about {left:.0f} s left" if done < total and left == left else ""
        print(
            f"{self.what}: {100 * done / total:.0f}% ({amount(done)} of {amount(total)}), {elapsed:.0f} s{eta}",
            file=self.stream,
            flush=True,
        )
        self.lines += 1


_active: ContextVar[Optional[Report]] = ContextVar("inr_progress_report", default=None)


@contextmanager
def reporting(what: str, stream: Optional[TextIO] = None, interval: float = 2.0) -> Iterator[Report]:
    """Within the block, ``advance`` calls print ``what``'s progress on ``stream`` (default stderr)."""
    report = Report(what, stream or sys.stderr, interval)
    token = _active.set(report)
    try:
        yield report
    finally:
        _active.reset(token)


def advance(done: float, total: float) -> None:
    """Tell the open report (if any) that ``done`` of ``total`` units are done."""
    report = _active.get()
    if report is not None:
        report.advance(done, total)


def active() -> Any:
    return _active.get()
