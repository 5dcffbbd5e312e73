"""User-facing errors: one line that names the problem and the file or key; the exit codes of the tools; the
memory this process may still allocate, which bounds what a command accepts before it allocates."""

from __future__ import annotations

import os
import resource
from collections.abc import Callable, Mapping
from pathlib import Path
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


# Where the limits are read, below a root directory that tests point at fake files (``memory_limits(root=...)``).
MEMINFO = "proc/meminfo"
PROC_STATUS = "proc/self/status"  # VmSize (what RLIMIT_AS counts), VmData (RLIMIT_DATA), VmRSS, in kB
PROC_CGROUP = "proc/self/cgroup"  # "0::/path" (cgroup v2), "N:memory:/path" (v1)
CGROUP_V2 = "sys/fs/cgroup"
CGROUP_V1 = "sys/fs/cgroup/memory"
CGROUP_V1_UNLIMITED = 2**60  # v1 writes "no limit" as the largest page-aligned int64, 9223372036854771712
SLURM_MB = 2**20  # SLURM's --mem and its variables count megabytes of 1024² bytes (sbatch(1))


class MemoryLimit(int):
    """Bytes this process may still allocate under one limit, and that limit's name in messages (``source``;
    empty for the host's available memory, which needs no name).

    Example:
        >>> limit = MemoryLimit(2**30, "address-space limit, ulimit -v")
        >>> int(limit), limit.source
        (1073741824, 'address-space limit, ulimit -v')
    """

    source: str

    def __new__(cls, value: int, source: str = "") -> MemoryLimit:
        self = super().__new__(cls, max(0, int(value)))
        self.source = source
        return self

    def __repr__(self) -> str:
        return f"MemoryLimit({int(self)}, {self.source!r})"


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _fields(text: Optional[str]) -> dict[str, int]:
    """``name: value [kB]`` lines (/proc/meminfo, /proc/self/status) or ``name value`` lines (memory.stat) as
    integers, kB read as bytes."""
    fields = {}
    for line in (text or "").splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and parts[1].isdigit():
            fields[parts[0]] = int(parts[1]) * (1024 if parts[2:3] == ["kB"] else 1)
    return fields


def _number(path: Path) -> Optional[int]:
    """The integer a cgroup file holds; None for ``max``, a missing file or anything else."""
    text = (_read(path) or "").strip()
    return int(text) if text.isdigit() else None


def host_available(root: Path) -> MemoryLimit:
    """The host's MemAvailable (free pages when the kernel does not report it)."""
    meminfo = _fields(_read(root / MEMINFO))
    if "MemAvailable" in meminfo:
        return MemoryLimit(meminfo["MemAvailable"])
    return MemoryLimit(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def rlimit_limits(root: Path, getrlimit: Callable[[int], tuple[int, int]]) -> list[MemoryLimit]:
    """What the soft RLIMIT_AS (``ulimit -v``) and RLIMIT_DATA (``ulimit -d``) leave: each limit less what the
    kernel already counts against it, the virtual size (VmSize) and the private writable mappings (VmData)."""
    status = _fields(_read(root / PROC_STATUS))
    limits = []
    for which, used, name in (
        (resource.RLIMIT_AS, "VmSize", "address-space limit, ulimit -v"),
        (resource.RLIMIT_DATA, "VmData", "data-segment limit, ulimit -d"),
    ):
        soft = getrlimit(which)[0]
        if soft != resource.RLIM_INFINITY and soft >= 0:
            limits.append(MemoryLimit(soft - status.get(used, 0), name))
    return limits


def _cgroup_dirs(base: Path, path: str) -> list[Path]:
    """The process's cgroup directory under ``base`` and its ancestors up to ``base`` (a limit on any of them
    holds); ``base`` alone when the path is not there (a container whose cgroup is mounted as the root)."""
    base = Path(os.path.normpath(base))
    here = Path(os.path.normpath(base / path.strip("/")))  # "/.." when the cgroup lies outside a cgroup namespace
    if base not in here.parents or not here.is_dir():
        return [base]
    dirs = [here]
    while dirs[-1] != base:
        dirs.append(dirs[-1].parent)
    return dirs


def cgroup_limits(root: Path) -> list[MemoryLimit]:
    """What the cgroup limits of the process's cgroup and its ancestors leave: v2 ``memory.max`` less
    ``memory.current``, v1 ``memory.limit_in_bytes`` less ``memory.usage_in_bytes``; the page cache the kernel
    reclaims first (``inactive_file`` of ``memory.stat``) is not counted as used, as the kubelet's working set."""
    limits = []
    for line in (_read(root / PROC_CGROUP) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            base, files, name = root / CGROUP_V2, ("memory.max", "memory.current", "inactive_file"), "cgroup memory.max"
        elif "memory" in controllers.split(","):
            base, files, name = (
                root / CGROUP_V1,
                ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
                "cgroup v1 memory.limit_in_bytes",
            )
        else:
            continue
        for folder in _cgroup_dirs(base, path):
            limit, usage = _number(folder / files[0]), _number(folder / files[1])
            if limit is None or limit >= CGROUP_V1_UNLIMITED:
                continue
            reclaimable = _fields(_read(folder / "memory.stat")).get(files[2], 0)
            used = max(0, (usage or 0) - reclaimable)
            limits.append(MemoryLimit(limit - used, f"{name} of {folder.relative_to(root)}, a container's or job's limit"))
    return limits


def slurm_limits(root: Path, environ: Mapping[str, str]) -> list[MemoryLimit]:
    """What a SLURM job's memory request leaves this process: ``SLURM_MEM_PER_NODE``, or ``SLURM_MEM_PER_CPU`` ×
    ``SLURM_CPUS_ON_NODE`` (megabytes; 0 asks for the whole node), less the process's resident memory (VmRSS)."""

    def number(name: str) -> Optional[int]:
        value = environ.get(name, "").strip()
        return int(value) if value.isdigit() and int(value) > 0 else None

    resident = _fields(_read(root / PROC_STATUS)).get("VmRSS", 0)
    if (per_node := number("SLURM_MEM_PER_NODE")) is not None:
        return [MemoryLimit(per_node * SLURM_MB - resident, "the SLURM job's memory, SLURM_MEM_PER_NODE")]
    per_cpu, cpus = number("SLURM_MEM_PER_CPU"), number("SLURM_CPUS_ON_NODE")
    if per_cpu is not None and cpus is not None:
        source = "the SLURM job's memory, SLURM_MEM_PER_CPU × SLURM_CPUS_ON_NODE"
        return [MemoryLimit(per_cpu * cpus * SLURM_MB - resident, source)]
    return []


def memory_limits(
    root: Path = Path("/"),
    environ: Optional[Mapping[str, str]] = None,
    getrlimit: Callable[[int], tuple[int, int]] = resource.getrlimit,
) -> list[MemoryLimit]:
    """Every limit on what this process may still allocate, the host's MemAvailable first: the address-space and
    data-segment rlimits, the cgroup (v2 and v1) limits of its cgroup and their ancestors, a SLURM job's memory.
    ``root``, ``environ`` and ``getrlimit`` stand in for ``/``, ``os.environ`` and ``resource.getrlimit``."""
    root = Path(root)
    environ = os.environ if environ is None else environ
    return [host_available(root), *rlimit_limits(root, getrlimit), *cgroup_limits(root), *slurm_limits(root, environ)]


def available_memory_bytes() -> MemoryLimit:
    """What this process may allocate now: the smallest of ``memory_limits()``, naming the limit that decides.
    (A MemAvailable reading alone misses ``ulimit -v``, a container's cgroup and a SLURM job's request: a file
    within it would fail mid-read with a MemoryError or the kernel's OOM killer.)"""
    return min(memory_limits(), key=int)


def check_memory(
    what: str,
    n_bytes: int,
    fraction: float = 0.5,
    advice: str = "choose a smaller resolution",
    available: Optional[int] = None,
    where: str = "",
) -> None:
    """Refuse (before allocating) a buffer estimated at ``n_bytes`` when it exceeds ``fraction`` of what this process
    may allocate (``available`` bytes, default ``available_memory_bytes()``, whose limit the message names;
    ``where`` names another device's memory).

    Example:
        >>> check_memory("a grid", 3 * 2**30, available=MemoryLimit(4 * 2**30, "address-space limit, ulimit -v"))
        Traceback (most recent call last):
        ...
        inr.errors.InputError: a grid needs an estimated 3.0 GiB, more than 50% of the 4.0 GiB this process may allocate \
(address-space limit, ulimit -v); choose a smaller resolution
    """
    free = available_memory_bytes() if available is None else available
    limit = free * fraction
    if n_bytes > limit:
        source = getattr(free, "source", "")
        held = f"this process may allocate ({source})" if source else "available"
        raise InputError(
            f"{what} needs an estimated {size_text(n_bytes)}, more than {fraction:.0%} of the "
            f"{size_text(free)} {held}{where}; {advice}"
        )


def size_text(n_bytes: float) -> str:
    """Bytes in GiB, or in MiB or KiB below one GiB (a refusal under a small limit said "0.0 GiB").

    Example:
        >>> size_text(3 * 2**30), size_text(1.5 * 2**20), size_text(2048)
        ('3.0 GiB', '1.5 MiB', '2.0 KiB')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes / 2**10:.1f} KiB"
