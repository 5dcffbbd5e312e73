"""User-facing errors: one line that names the problem and the file or key."""
from __future__ import annotations

import os


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


def check_memory(what: str, n_bytes: int, fraction: float = 0.5) -> None:
    """Refuse (before allocating) a buffer estimated at ``n_bytes`` when it exceeds ``fraction`` of free memory."""
    limit = available_memory_bytes() * fraction
    if n_bytes > limit:
        raise InputError(
            f"{what} needs an estimated {n_bytes / 2**30:.1f} GiB, more than {fraction:.0%} of the "
            f"{limit / fraction / 2**30:.1f} GiB available; choose a smaller resolution"
        )
