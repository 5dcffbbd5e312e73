"""One optimizer step with and without torch's NVML probe, on a machine without a CUDA device.

    python benchmarks/gpu_probe.py [--config volume.yaml] [--steps 200] [--repeats 5] [--threads 1]

The config's network and optimizer (Adam for the image and volume configs), gradients set once; blocks of
``--steps`` calls of ``optimizer.step()`` alternate between ``PYTORCH_NVML_BASED_CUDA_CHECK=1`` (what
Lightning sets when imported: each step's availability check tries to load NVML, fails, and falls back) and
"0" (what ``inr.run.gpu_probe.skip_failing_gpu_probe`` sets where no device exists). Prints the median time per
step of each and their ratio, paired within each repeat. On a machine with a CUDA device it says so and exits.
"""

from __future__ import annotations

import os
import statistics
import time
import warnings

import torch

from inr.io.command_line import CommandParser
from inr.run.cli import build_cli, resolve_config_names
from inr.run.gpu_probe import VARIABLE

warnings.filterwarnings("ignore")


def time_steps(optimizer: torch.optim.Optimizer, steps: int, nvml: str) -> float:
    os.environ[VARIABLE] = nvml
    start = time.perf_counter()
    for _ in range(steps):
        optimizer.step()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = CommandParser(
        description=__doc__.splitlines()[0], run_config="the task's config (default volume.yaml)", config_default="volume.yaml"
    )
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    os.environ[VARIABLE] = "1"
    if not torch.cuda._is_compiled() or torch.cuda.device_count() > 0:
        print("this torch has no CUDA support, or a CUDA device is present: there is no failing probe to time")
        return
    cli = build_cli(resolve_config_names(["--config", args.config, "--trainer.logger", "false"]))
    network = cli.model.network
    optimizer = cli.model.optimizer_factory(network.parameters())
    for p in network.parameters():
        p.grad = torch.randn_like(p) * 1e-3
    time_steps(optimizer, 10, "1")  # the optimizer's state, created at its first step
    with_probe, without = [], []
    for _ in range(args.repeats):
        with_probe.append(time_steps(optimizer, args.steps, "1"))
        without.append(time_steps(optimizer, args.steps, "0"))
    ratios = [a / b for a, b in zip(with_probe, without)]
    n = sum(p.numel() for p in network.parameters())
    print(f"{args.config}: {type(optimizer).__name__}.step() on {n} parameters, {torch.get_num_threads()} thread(s)")
    print("| NVML probe | µs per step | ratio (range) |")
    print("|---|---:|---|")
    print(
        f"| on (Lightning's setting) | {statistics.median(with_probe) * 1e6:.1f} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |"
    )
    print(f"| off (no device) | {statistics.median(without) * 1e6:.1f} | 1.00 |")


if __name__ == "__main__":
    main()
