"""K members in one stacked run against K single runs of the same steps; and the two ways to stack, measured.

    python benchmarks/stacked.py                                   # image.yaml at 64² and 256², K = 8, one thread
    python benchmarks/stacked.py --resolutions 64 --steps 30 --repeats 3 --threads 2

Part 1, the implementation (hand-written loop, no Lightning): one training step (forward, backward, Adam) of K
members of image.yaml's network (3 × 256 ReLU + sigmoid on 256 Gaussian features) on the full training batch,
  - stacked layers: ``inr.networks.stacked`` (one ``torch.baddbmm`` per layer, weights (K, out, in)), which
    the framework uses;
  - vmap: ``torch.func.functional_call`` of one network vmapped over parameters stacked by
    ``torch.func.stack_module_state``;
  - K networks one after the other (the reference), each with its own Adam;
median step of each after a warm-up, interleaved over the repeats.
Part 2, what a user gets: ``Trainer.fit`` of image.yaml with ``model.members K`` against K single-model
``Trainer.fit`` runs of the same steps one after another (no logger, checkpoints, validation or callbacks);
wall time of the fits (each run's Trainer start-up included, as K runs pay it K times) and the median step.
Ratios, not absolute times, are the result: the machine is shared and noisy; the variants are interleaved.
"""

from __future__ import annotations

import logging
import statistics
import sys
import time
import warnings
from pathlib import Path

import lightning as L
import torch

from inr.io.command_line import CommandParser

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import StampEachStep, StepClock, as_train_py, implementation_steps, instantiate, median_gap, throughput_ratio  # noqa: E402

warnings.filterwarnings("ignore")
for _name in ("lightning.pytorch", "lightning.fabric"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def fit_run(config: str, extra: list[str], steps: int, accelerator: str = "cpu") -> tuple[float, float]:
    """(wall time of ``Trainer.fit``, median step) of one run built from ``config`` with ``extra`` overrides."""
    model, dm, _ = instantiate(config, extra)
    clock = StepClock(warmup=0, steps=steps, sync=torch.cuda.synchronize if accelerator == "gpu" else None)
    trainer = L.Trainer(
        max_steps=steps,
        accelerator=accelerator,
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        callbacks=[StampEachStep(clock)],
    )
    start = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    if accelerator == "gpu":
        torch.cuda.synchronize()
    return time.perf_counter() - start, median_gap(clock.stamps, min(2, steps - 2))


def runs_side_by_side(
    config: str, k: int, steps: int, repeats: int, extra: list[str], accelerator: str = "cpu"
) -> dict[str, list[float]]:
    """Per repeat: the stacked run's fit time and step, and the K single runs' total fit time and median step."""
    out = {"stacked fit": [], "stacked step": [], "singles fit": [], "single step": []}
    for _ in range(repeats):
        total, step = fit_run(config, [*extra, "--model.init_args.members", str(k)], steps, accelerator)
        out["stacked fit"].append(total)
        out["stacked step"].append(step)
        fits, single_steps = [], []
        for seed in range(k):
            total, step = fit_run(config, [*extra, "--seed_everything", str(seed)], steps, accelerator)
            fits.append(total)
            single_steps.append(step)
        out["singles fit"].append(sum(fits))
        out["single step"].append(statistics.median(single_steps))
    return out


def cell(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=8)
    parser.add_argument("--resolutions", type=int, nargs="+", default=[64, 256], help="image.yaml's data.resolution")
    parser.add_argument("--steps", type=int, nargs="+", default=[30, 10], help="timed steps per resolution")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    as_train_py()  # the process settings train.py makes
    k = args.members
    print(
        f"benchmarks/stacked.py: K = {k}, torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.repeats} interleaved repeats"
    )
    for resolution, steps in zip(args.resolutions, args.steps * len(args.resolutions)):
        points = (resolution // 2) ** 2  # split every_other: the [::2, ::2] pixels
        times = implementation_steps(k, points, steps, 2, args.repeats)
        reference = times["K separate networks"]
        print(f"\n1. one Adam step of {k} members, image.yaml's network, full batch of {points:,} points (hand loop)")
        print("| implementation | step (ms) | time / K separate networks |\n|---|---:|---|")
        for name, xs in times.items():
            print(f"| {name} | {statistics.median(xs) * 1e3:.1f} | {cell([x / r for x, r in zip(xs, reference)])} |", flush=True)
        extra = ["--data.init_args.resolution", str(resolution)]
        runs = runs_side_by_side("image.yaml", k, steps + 3, args.repeats, extra)
        fit_ratio = [s / t for s, t in zip(runs["singles fit"], runs["stacked fit"])]
        step_ratio = [throughput_ratio(s, t, k) for s, t in zip(runs["single step"], runs["stacked step"])]
        print(f"\n2. image.yaml at {resolution}² ({points:,} training points, full batch), {steps + 3} steps per run")
        print("| | stacked run (K members) | K single runs, one after another | singles / stacked |\n|---|---:|---:|---|")
        print(
            f"| wall time of the fits (s) | {statistics.median(runs['stacked fit']):.2f} | "
            f"{statistics.median(runs['singles fit']):.2f} | {cell(fit_ratio)} |"
        )
        print(
            f"| median step (ms) | {statistics.median(runs['stacked step']) * 1e3:.1f} | "
            f"{k} × {statistics.median(runs['single step']) * 1e3:.1f} | {cell(step_ratio)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
