"""retain_freed_memory: after it, freeing and reallocating a large tensor stops page-faulting its memory back in."""

import os
import subprocess
import sys
import textwrap

import pytest

from inr.io import allocator
from inr.io.allocator import retain_freed_memory

# 64 MiB float32 tensors, allocated, written and freed ten times: above glibc's largest dynamic mmap threshold
# (32 MiB), so by default each one is a fresh mapping whose 16384 pages fault in on first write
CHILD = textwrap.dedent(
    """
    import importlib.util, resource, sys, torch

    # the module alone, without importing the whole package (Lightning) into the child
    spec = importlib.util.spec_from_file_location("allocator", sys.argv[1])
    allocator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(allocator)

    def faults():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            torch.empty(16 << 20).fill_(1.0)
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    faults()  # warm-up: torch's own first allocations
    default = faults()
    applied = allocator.retain_freed_memory()
    faults()  # the first retained block faults in once
    # the fewest of three rounds: a loaded host was once seen to take one block of ten back from a round;
    # without the setting every round faults all ten blocks in
    print(default, min(faults() for _ in range(3)), applied)
    """
)


def clean_environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if allocator.user_chose_allocator({k: v}) is None}


def run_child(env: dict[str, str]) -> tuple[int, int, bool]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, allocator.__file__], check=True, capture_output=True, text=True, env=env
    ).stdout.split()
    return int(out[0]), int(out[1]), out[2] == "True"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc settings exist on Linux only")
def test_freed_blocks_are_reused_without_page_faults():
    default, retained, applied = run_child(clean_environ())
    assert applied
    # default: ~10 × 16384 faults (one per 4 KiB page of every fresh mapping); retained: the block is reused
    assert default > 10 * 16384 * 0.9
    assert retained < default / 20


def test_bad_threshold_is_refused():
    with pytest.raises(ValueError, match="positive"):
        retain_freed_memory(0)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc settings exist on Linux only")
def test_a_users_own_malloc_setting_is_left_alone():
    # MALLOC_ARENA_MAX changes nothing about large blocks: the faults stay those of glibc's defaults
    default, after, applied = run_child({**clean_environ(), "MALLOC_ARENA_MAX": "4"})
    assert not applied
    assert after > default * 0.5
