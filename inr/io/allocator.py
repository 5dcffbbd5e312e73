"""``retain_freed_memory``: let glibc's malloc keep large freed blocks for reuse instead of handing them back to
the operating system, so a CPU training step does not page-fault its activations back in every step.

Why: a full-batch step allocates and frees dozens of activation tensors of 10–70 MB (16384 pixels × 256
features × 4 bytes = 16 MB). glibc serves blocks above ``M_MMAP_THRESHOLD`` (dynamic, at most 32 MB) with
``mmap`` and trims the top of its heap once more than ``M_TRIM_THRESHOLD`` is free, so each step maps fresh
pages and the kernel zero-fills every one on first touch (one minor fault per 4 KiB page).
benchmarks/allocator.py measures the faults and the step time with and without it, side by side.

Cost: up to ``threshold`` bytes of freed memory stay in the process (its resident size does not shrink after a
peak below that), which is what a training process wants anyway. Blocks above it are still mapped and unmapped.
Only glibc (Linux) has these knobs; elsewhere this does nothing and returns False. A process whose user chose
the allocator's behaviour (``GLIBC_TUNABLES`` with malloc settings, ``MALLOC_*_`` variables, or another
allocator preloaded: jemalloc, tcmalloc, mimalloc) is left as they set it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

# mallopt parameter numbers (glibc malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
DEFAULT_THRESHOLD = 1 << 30  # 1 GiB: above any per-step tensor of the CPU-sized configs
_applied: list[int] = []
PRELOADED_ALLOCATORS = ("jemalloc", "tcmalloc", "mimalloc", "hoard", "snmalloc")


def user_chose_allocator(environ=None) -> str | None:
    """The setting by which the user chose malloc's behaviour themselves (None: they did not).

    Example:
        >>> user_chose_allocator({"MALLOC_ARENA_MAX": "2"})
        'MALLOC_ARENA_MAX'
        >>> user_chose_allocator({"LD_PRELOAD": "/usr/lib/libjemalloc.so.2"})
        'LD_PRELOAD'
        >>> user_chose_allocator({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"})
        'GLIBC_TUNABLES'
        >>> user_chose_allocator({"PATH": "/usr/bin"}) is None
        True
    """
    environ = os.environ if environ is None else environ
    if "glibc.malloc." in environ.get("GLIBC_TUNABLES", ""):
        return "GLIBC_TUNABLES"
    if any(name in environ.get("LD_PRELOAD", "") for name in PRELOADED_ALLOCATORS):
        return "LD_PRELOAD"
    # glibc's own environment knobs: MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_, ...
    return next((key for key in environ if key.startswith("MALLOC_")), None)


def retain_freed_memory(threshold: int = DEFAULT_THRESHOLD) -> bool:
    """Blocks below ``threshold`` bytes come from the heap, and up to ``threshold`` of free heap is kept.

    Returns whether glibc accepted both settings (False off Linux/glibc, and where the user chose the
    allocator's behaviour: ``user_chose_allocator``). Idempotent; only raises the thresholds (a second call
    with a smaller value keeps the larger one).

    Example:
        >>> isinstance(retain_freed_memory(), bool)
        True
    """
    if threshold < 1:
        raise ValueError(f"threshold must be positive, got {threshold}")
    if _applied and _applied[-1] >= threshold:
        return True
    if user_chose_allocator() is not None:
        return False
    mallopt = _mallopt()
    if mallopt is None:
        return False
    # an explicit mmap threshold also turns off glibc's dynamic one; older glibc refuses values above
    # HEAP_MAX_SIZE / 2 (32 MiB on 64-bit), the largest it then accepts
    mapped = bool(mallopt(M_MMAP_THRESHOLD, threshold)) or bool(mallopt(M_MMAP_THRESHOLD, min(threshold, 32 << 20)))
    ok = mapped and bool(mallopt(M_TRIM_THRESHOLD, threshold))
    if ok:
        _applied.append(threshold)
    return ok


def _mallopt():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other libcs without mallopt
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt
