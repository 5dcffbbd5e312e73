"""Voxel volumes on a CPU: batch throughput of the lazy-coordinate data path and of a training step, and the
peak memory of a full-grid evaluation at 128³ and 256³.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/volume.py                 # 128³ and 256³
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/volume.py --sizes 64 128  # quicker

(On a machine shared with other jobs, one thread per process gives steadier figures: small tensor ops
split over busy cores can run many times slower.)

Throughput (coordinates per second), measured side by side in one process:
- data path: ``VolumeDataModule.gather`` on random training indices (coordinates computed from the indices,
  values gathered), against indexing a materialised (N, 3) coordinate table, the alternative it replaces;
- training step: forward, backward and Adam step of the ``configs/volume.yaml`` network on the same batches,
  and the share of a step the data path takes.
Peak memory: each evaluation runs in a fresh subprocess; the figure is the rise of the process's peak
resident set during the evaluation above its resident set just before (Linux: the peak VmHWM is reset by
writing 5 to /proc/self/clear_refs once the model is built, since importing torch alone can leave a higher
peak behind; elsewhere ``resource.getrusage().ru_maxrss``, which can then under-report).
``render`` is ``INRModule.render`` (coordinates computed per chunk); ``materialised`` first builds the
(N, 3) coordinate tensor and then predicts it in the same chunks — what the chunked render avoids.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import torch

from inr.io.command_line import CommandParser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inr.data.volume import VolumeDataModule  # noqa: E402
from inr.encoders import GaussianEncoding  # noqa: E402
from inr.networks import MLP  # noqa: E402
from inr.tasks.volume import VolumeFitting  # noqa: E402

CPU = torch.device("cpu")


def config_model(features: int = 128, width: int = 128, depth: int = 3, chunk: int = 65536) -> VolumeFitting:
    """The network of configs/volume.yaml (Gaussian m = 128, σ = 3; 3×128 ReLU, logits)."""
    encoder = GaussianEncoding(in_dim=3, num_features=features, sigma=3.0, seed=0)
    return VolumeFitting(encoder, partial(MLP, width=width, depth=depth), 1, render_chunk=chunk, mode="occupancy")


def best_of(fns: dict, repeats: int) -> dict[str, float]:
    """Best wall time of each function, the functions interleaved in every repeat so load drifts hit all alike."""
    times = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name] = min(times[name], time.perf_counter() - start)
    return times


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key))


def reset_peak() -> int:
    """Reset the peak resident set to the current one where Linux allows; return the current one in bytes."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kib("VmRSS:") * 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak() -> int:
    try:
        return _status_kib("VmHWM:") * 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def throughput(size: int, batch: int, steps: int, repeats: int) -> dict[str, float]:
    dm = VolumeDataModule(builtin="bumpy", resolution=size, batch_size=batch)
    dm.setup("fit")
    gen = torch.Generator().manual_seed(0)
    batches = [dm.train_index[torch.randint(len(dm.train_index), (batch,), generator=gen)] for _ in range(steps)]
    dm.gather(batches[0], CPU)  # the one-time copy of the values to the device
    table = dm.grid.all_coords()  # (N, 3): the materialised alternative
    t = best_of(
        {"lazy": lambda: [dm.gather(i, CPU) for i in batches], "table": lambda: [(table[i], dm.values[i]) for i in batches]},
        repeats,
    )
    lazy, materialised = t["lazy"], t["table"]
    model = config_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = [dm.gather(i, CPU) for i in batches]

    def train():
        for b in data:
            loss = model.loss(model(b["coords"]), b["values"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    train()  # warm-up
    step = best_of({"step": train}, repeats)["step"]
    n = batch * steps
    return {
        "size": size,
        "lazy": n / lazy,
        "materialised": n / materialised,
        "step": n / step,
        "data_share": lazy / (lazy + step),
    }


def child(size: int, method: str, chunk: int) -> None:
    """Run one full-grid evaluation and print the peak-RSS rise in bytes (Linux reports KiB)."""
    torch.manual_seed(0)
    model = config_model(features=32, width=64, depth=2, chunk=chunk).eval()
    model.render((8, 8, 8))  # warm-up: allocator and kernels
    before = reset_peak()
    start = time.perf_counter()
    if method == "render":
        out = model.render((size,) * 3)
    else:
        from inr.data.grid import Grid

        coords = Grid((size,) * 3).all_coords()  # (N, 3)
        out = model.predict(coords, chunk)
    seconds = time.perf_counter() - start
    print(json.dumps({"peak": peak() - before, "seconds": seconds, "numel": out.numel()}))


def evaluation_memory(size: int, method: str, chunk: int) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", method, "--sizes", str(size), "--chunk", str(chunk)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--batch", type=int, default=8192, help="coordinates per batch (volume.yaml: 8192)")
    parser.add_argument("--steps", type=int, default=20, help="batches per timing")
    parser.add_argument("--repeats", type=int, default=5, help="timings per figure; the best is kept")
    parser.add_argument("--chunk", type=int, default=65536, help="render chunk (INRModule default 65536)")
    parser.add_argument("--child", choices=["render", "materialised"], default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.sizes[0], args.child, args.chunk)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; batch {args.batch}, chunk {args.chunk}")
    print("\nbatch throughput (million coordinates / s), random training voxels of the built-in shape")
    print(f"{'grid':>6} {'lazy gather':>12} {'table lookup':>13} {'lazy/table':>11} {'train step':>11} {'data share':>11}")
    for size in args.sizes:
        r = throughput(size, args.batch, args.steps, args.repeats)
        print(
            f"{size:>5}³ {r['lazy'] / 1e6:>12.1f} {r['materialised'] / 1e6:>13.1f} {r['lazy'] / r['materialised']:>11.2f} "
            f"{r['step'] / 1e6:>11.3f} {r['data_share']:>10.1%}"
        )
    print("\nfull-grid evaluation, peak RSS rise (MiB); Gaussian m = 32, 2×64 MLP, one output channel")
    print(f"{'grid':>6} {'output':>8} {'(N,3) coords':>13} {'render':>8} {'materialised':>13} {'ratio':>6} {'render s':>9}")
    for size in args.sizes:
        n = size**3
        lazy, full = evaluation_memory(size, "render", args.chunk), evaluation_memory(size, "materialised", args.chunk)
        mib = 2**20
        print(
            f"{size:>5}³ {4 * n / mib:>8.0f} {12 * n / mib:>13.0f} {lazy['peak'] / mib:>8.0f} {full['peak'] / mib:>13.0f} "
            f"{full['peak'] / max(lazy['peak'], 1):>6.2f} {lazy['seconds']:>9.1f}"
        )


if __name__ == "__main__":
    main()
