"""What every ``python -m`` command of the package shares: its argument parser (``ExperimentParser``: usage,
description from the module docstring, ``--config``/``--print_config``, one-line errors) and the wrapper that runs
its body (``command``: bad input is one ``error:`` line and exit 2; SIGTERM or Ctrl-C stop it between or during
rows, print what finished and exit 143 / 130)."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, Optional

from inr.errors import EXIT_INPUT, EXIT_SIGINT, EXIT_SIGTERM, InputError
from inr.io.command_line import CommandParser


class ExperimentParser(CommandParser):
    """The argument parser of every ``python -m inr.<package>.<name>``: its usage names that command, its
    description is the module docstring's first paragraph (whole), defaults are shown, ``--config FILE`` and
    ``--print_config`` as every command takes them, and a bad argument is one line on stderr, exit 2 (argparse's
    own error prints the usage block first)."""

    def __init__(self, module: str, doc: Optional[str], prog: Optional[str] = None, **kwargs: Any) -> None:
        if module == "__main__":  # run as python -m: the module's own name is in its spec
            module = getattr(sys.modules["__main__"].__spec__, "name", module)
        module = module.removesuffix(".__main__")  # python -m inr.methods runs inr/methods/__main__.py
        first = " ".join((doc or "").strip().split("\n\n")[0].split())
        super().__init__(
            prog=prog or f"python -m {module}",
            description=first,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
            **kwargs,
        )

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT)


class Stopped(BaseException):
    """A signal stopped the comparison between or during rows."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT raise ``Stopped`` in the main thread, so the comparison can keep what it finished."""

    def handler(signum: int, frame: Any) -> None:
        raise Stopped(signum)

    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    for s in previous:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def command(body: Callable[[], Any], partial_rows: Optional[Callable[[], str]] = None) -> Any:
    """Run a comparison's ``body`` as a command: ``InputError`` -> one ``error:`` line and exit 2; SIGTERM or
    Ctrl-C -> the table of the rows finished so far (``partial_rows()``, if any) and exit 143 / 130."""
    try:
        with stop_on_signals():
            return body()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None
    except Stopped as exc:
        name = "SIGTERM" if exc.signum == signal.SIGTERM else "SIGINT"
        text = partial_rows() if partial_rows is not None else ""
        if text:
            print(text)
        print(f"stopped by {name}: the rows above finished; the one in progress was dropped", file=sys.stderr)
        raise SystemExit(EXIT_SIGTERM if exc.signum == signal.SIGTERM else EXIT_SIGINT) from None
