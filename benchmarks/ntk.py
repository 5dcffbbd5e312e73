"""Time each empirical NTK implementation on the default image model and report its peak memory.

    .venv/bin/python benchmarks/ntk.py                          # N = 256, 1024, 4096 probe points
    .venv/bin/python benchmarks/ntk.py --sizes 256 1024 --methods structured jacobian
    .venv/bin/python benchmarks/ntk.py --sizes 256 --full --no-row      # the full (N, N, O, O) form

Model: configs/image.yaml's network, Gaussian features (m = 256, σ = 10) → 3×256 ReLU → 3 sigmoid,
as an ``ImageFitting`` task (encoder included; it has no trainable parameters). Probes: N distinct random
pixels of a 256×256 grid, fixed seed. Θ is the output trace (N, N) with x₂ = x₁ (symmetric blocks), fp32,
default chunk sizes. The methods run interleaved (one call of each per round, ``--repeats`` rounds) so a
change of machine load hits them alike; a method whose call took over 30 s is not repeated. Time: median of
a method's calls. Peak memory: the resident high-water mark during a call (VmHWM, reset just before it,
after returning freed memory to the OS) minus the resident size before it. A method is skipped at a size
only when its estimated memory exceeds half of what the machine has free. A last case times one kernel
row, Θ(X, x₀) for the largest probe set X against one point.
"""

from __future__ import annotations

import ctypes
import gc
import os
import statistics
import sys
import time
from pathlib import Path

import torch

from inr.io.command_line import CommandParser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inr.data.grid import Grid  # noqa: E402
from inr.encoders import GaussianEncoding  # noqa: E402
from inr.errors import available_memory_bytes  # noqa: E402
from inr.networks import MLP  # noqa: E402
from inr.ntk import DEFAULT_BLOCK_BYTES, empirical_ntk  # noqa: E402
from inr.tasks import ImageFitting  # noqa: E402

METHODS = ("structured", "jacobian", "ntvp")
SLOW_S = 30.0


def build(device: str) -> ImageFitting:
    torch.manual_seed(0)
    enc = GaussianEncoding(in_dim=2, num_features=256, sigma=10.0, seed=0)
    task = ImageFitting(
        encoder=enc, network=lambda i, o: MLP(i, o, width=256, depth=3, output_activation="sigmoid"), out_channels=3
    )
    return task.to(device).eval()


def probes(n: int, device: str) -> torch.Tensor:
    grid = Grid((256, 256))
    index = torch.randperm(grid.numel, generator=torch.Generator().manual_seed(0))[:n]
    return grid.coords(index).to(device)  # (n, 2)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def settle_memory() -> None:
    """Return freed memory to the OS and reset VmHWM to the current RSS (Linux ≥ 4.0: clear_refs = 5)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def estimate_bytes(method: str, n1: int, n2: int) -> int:
    """Rough peak: the output plus the blocks (generic: per-point Jacobians sized by DEFAULT_BLOCK_BYTES;
    structured: layer features, 1280 inputs + 3·771 output gradients per point, and one block)."""
    out = 4 * n1 * n2
    if method == "structured":
        return out + 4 * (n1 + n2) * (1280 + 3 * 771) + DEFAULT_BLOCK_BYTES
    return out + 3 * DEFAULT_BLOCK_BYTES


def measure(task, method: str, x1, x2, device: str, full: bool = False) -> tuple[float, int, torch.Tensor]:
    settle_memory()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    base = rss_bytes()
    start = time.perf_counter()
    k = empirical_ntk(task, x1, x2, method=method, full=full)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() if device.startswith("cuda") else peak_rss_bytes() - base
    return seconds, peak, k


def run_case(task, methods, n1: int, n2, repeats: int, device: str, full: bool = False) -> None:
    x = probes(n1, device)
    x2 = None if n2 is None else x[:n2]
    label = f"{n1} × {n1 if n2 is None else n2}" + (" full" if full else "")
    active = []
    for method in methods:
        est = estimate_bytes(method, n1, n1 if n2 is None else n2) * (9 if full else 1)
        if est > 0.5 * available_memory_bytes():
            print(f"| {label} | {method} | skipped: needs ≈{est / 2**30:.1f} GiB | | |", flush=True)
        else:
            active.append(method)
    times = {m: [] for m in active}
    peaks = {m: 0 for m in active}
    kernels = {}
    for _ in range(repeats):
        for method in active:
            if times[method] and times[method][0] > SLOW_S:
                continue
            seconds, peak, k = measure(task, method, x, x2, device, full)
            times[method].append(seconds)
            peaks[method] = max(peaks[method], peak)
            kernels.setdefault(method, k)
    base = statistics.median(times["structured"]) if "structured" in times else None
    for method in active:
        t = statistics.median(times[method])
        ratio = f"{t / base:.1f}" if base else "–"
        print(f"| {label} | {method} | {t:.3g} ({len(times[method])}) | {ratio} | {peaks[method] / 2**20:.0f} |", flush=True)
    if "structured" in kernels:
        ref = kernels["structured"]
        diffs = {m: float((k - ref).abs().max() / ref.abs().max()) for m, k in kernels.items() if m != "structured"}
        print(
            f"|  | max abs difference / max vs structured: {', '.join(f'{m} {d:.1e}' for m, d in diffs.items())} | | | |",
            flush=True,
        )


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    # one thread: on a machine shared with other jobs, multi-threaded calls stall on descheduled threads
    # and their times scatter by 10× (measured: 0.03-0.9 s for the same call with 2 threads, 0.016-0.025 s with 1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-row", action="store_true", help="skip the kernel-row case")
    parser.add_argument("--full", action="store_true", help="the full (N, N, 3, 3) kernel instead of the output trace")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    task = build(args.device)
    n_params = sum(p.numel() for p in task.parameters())
    print(
        f"model: Gaussian m=256 → 3×256 ReLU → 3 sigmoid, {n_params:,} parameters; torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, device {args.device}"
    )
    for method in args.methods:  # first-call set-up (vmap, kernels) outside the timings
        empirical_ntk(task, probes(8, args.device), method=method)
    print("| N₁ × N₂ | method | time (s) (calls) | ratio vs structured | peak memory (MiB) |")
    print("|---|---|---|---|---|")
    for n in args.sizes:
        run_case(task, args.methods, n, None, args.repeats, args.device, args.full)
    if not args.no_row:
        run_case(task, args.methods, max(args.sizes), 1, args.repeats, args.device, args.full)


if __name__ == "__main__":
    main()
