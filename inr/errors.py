"""User-facing errors: one line that names the problem and the file or key; the exit codes of the tools."""

from __future__ import annotations

import os
from typing import Optional

# Exit codes of train.py (docs/reliability.md); 128 + n for signal n is the shell's convention.
EXIT_OK = 0
EXIT_FAILED = 1  # training stopped by its environment (disk full, out of memory) or by a bug (with a traceback)
EXIT_INPUT = 2  # bad input: a file, a config value, a checkpoint that does not fit; nothing was trained
EXIT_DIVERGED = 3  # the loss became NaN/inf; the checkpoints on disk are the last good ones
EXIT_SIGINT = 130  # Ctrl-C: stopped after the current step with a checkpoint saved
EXIT_SIGTERM = 143  # kill / timeout / docker stop / a scheduler: the same


class InputError(ValueError):
    """Bad input from the user (a file, a config value); the CLI prints it as one line and exits 2."""


def available_memory_bytes() -> int:
    """Memory the OS reports as available now (MemAvailable), falling back to free physical pages."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_memory(
    what: str,
    n_bytes: int,
    fraction: float = 0.5,
    advice: str = "choose a smaller resolution",
    available: Optional[int] = None,
    where: str = "",
) -> None:
    """Refuse (before allocating) a buffer estimated at ``n_bytes`` when it exceeds ``fraction`` of free memory
    (``available`` bytes, default the host's MemAvailable; ``where`` names another device's memory)."""
    free = available_memory_bytes() if available is None else available
    limit = free * fraction
    if n_bytes > limit:
        raise InputError(
            f"{what} needs an estimated {n_bytes / 2**30:.1f} GiB, more than {fraction:.0%} of the "
            f"{free / 2**30:.1f} GiB available{where}; {advice}"
        )
