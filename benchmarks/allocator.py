"""What glibc's default malloc costs a CPU training step: page faults and step time with and without
``inr.io.allocator.retain_freed_memory``, side by side.

    python benchmarks/allocator.py [--rows gaussian siren wire] [--steps 12] [--repeats 3] [--threads 2]

Each measurement is a fresh child process (the setting must be made before the tensors exist and cannot be
undone), alternating default / retained, ``--repeats`` times per row. A child builds one row of the encoder
comparison (``inr.methods.registry.METHODS`` resolved by ``compare_encoders`` at the 256² CPU protocol: its
encoder and network, 128² = 16384 training pixels, full batch, Adam) and times ``--steps`` steps after two
warm-up steps: the median step and the
minor page faults per step (``getrusage``; each is one 4 KiB page zero-filled by the kernel). Printed: per
row the medians over repeats and the ratio retained / default of the step time (paired by repeat).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

from inr.io.command_line import CommandParser


def child(row: str, retained: bool, steps: int, threads: int) -> dict:
    import torch

    from inr.io.allocator import retain_freed_memory

    applied = retain_freed_memory() if retained else False
    torch.set_num_threads(threads)
    from types import SimpleNamespace

    from inr.experiments.compare_encoders import Encoders
    from inr.experiments.comparison import Member, context, parse

    torch.manual_seed(0)
    encoders = Encoders()
    protocol = encoders.protocol(parse(encoders, ["--resolution", "256"]))  # 128² = 16384 training pixels
    rgb = SimpleNamespace(out_channels=3)
    model = encoders.model(context(encoders, protocol, row, Member(None, 0), rgb))
    side = protocol.resolution // 2
    axis = torch.arange(side, dtype=torch.float32) / side
    coords = torch.stack(torch.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)  # (16384, 2)
    target = torch.rand(coords.shape[0], 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def step() -> None:  # a bare step of a registry row, not a config's: common.HandStep does not apply
        optimizer.zero_grad(set_to_none=True)
        loss = (model.network(model.encoder(coords)) - target).square().mean()
        loss.backward()
        optimizer.step()

    for _ in range(2):
        step()
    times = []
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return {"ms": 1000 * statistics.median(times), "faults": faults / steps, "applied": applied}


def main() -> None:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="+", default=["gaussian", "siren", "wire"])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", nargs=2, metavar=("ROW", "SETTING"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1] == "retained", args.steps, args.threads)))
        return
    print("| row | default ms/step | retained ms/step | ratio retained/default (range) | faults/step default | retained |")
    print("|---|---|---|---|---|---|")
    for row in args.rows:
        runs: dict[str, list[dict]] = {"default": [], "retained": []}
        for _ in range(args.repeats):
            for setting in runs:
                cmd = [
                    sys.executable,
                    __file__,
                    "--child",
                    row,
                    setting,
                    "--steps",
                    str(args.steps),
                    "--threads",
                    str(args.threads),
                ]
                runs[setting].append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
        if not all(r["applied"] for r in runs["retained"]):
            print(f"| {row} | this malloc has no such setting (not glibc): nothing to compare | | | | |")
            continue
        ratios = [r["ms"] / d["ms"] for d, r in zip(runs["default"], runs["retained"])]
        med = {s: statistics.median(r["ms"] for r in v) for s, v in runs.items()}
        flt = {s: statistics.median(r["faults"] for r in v) for s, v in runs.items()}
        print(
            f"| {row} | {med['default']:.0f} | {med['retained']:.0f} | {statistics.median(ratios):.3f} "
            f"({min(ratios):.3f}–{max(ratios):.3f}) | {flt['default']:.0f} | {flt['retained']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
