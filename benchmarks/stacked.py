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

import argparse
import copy
import logging
import statistics
import sys
import time
import warnings
from functools import partial
from pathlib import Path

import lightning as L
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_step import StepTimer, instantiate, median_step  # noqa: E402

from inr.encoders import GaussianEncoding  # noqa: E402
from inr.networks import MLP  # noqa: E402
from inr.run.allocator import retain_freed_memory  # noqa: E402
from inr.tasks.members import build_members  # noqa: E402

warnings.filterwarnings("ignore")
for _name in ("lightning.pytorch", "lightning.fabric"):
    logging.getLogger(_name).setLevel(logging.ERROR)

# image.yaml's network and encoding (configs/image.yaml)
NETWORK = partial(MLP, width=256, depth=3, activation="relu", output_activation="sigmoid", init="paper")


def members_parts(k: int, points: int, device: str):
    """K Gaussian encoders (σ 10, seeds 0..K−1), the full batch's coordinates and K targets on ``device``."""
    gen = torch.Generator().manual_seed(0)
    coords = torch.rand(points, 2, generator=gen).to(device)
    targets = torch.rand(k, points, 3, generator=gen).to(device)
    encoders = [GaussianEncoding(num_features=256, sigma=10.0, seed=s) for s in range(k)]
    return encoders, coords, targets


def stacked_step_fn(k: int, points: int, device: str):
    """One Adam step of the framework's stacked layers; the encoding is computed once (a fixed full batch)."""
    encoders, coords, targets = members_parts(k, points, device)
    encoder, network = build_members(encoders, list(range(k)), NETWORK, 3)
    encoder, network = encoder.to(device), network.to(device)
    with torch.no_grad():
        features = encoder(coords)  # (K, N, 512)
    opt = torch.optim.Adam(network.parameters(), lr=1e-3)

    def step():
        loss = torch.vmap(F.mse_loss)(network(features), targets).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def vmap_step_fn(k: int, points: int, device: str):
    """One Adam step of ``functional_call`` vmapped over stacked parameters (torch.func)."""
    encoders, coords, targets = members_parts(k, points, device)
    networks = []
    for seed, enc in enumerate(encoders):
        torch.manual_seed(seed)
        networks.append(NETWORK(enc.out_dim, 3).to(device))
    params, buffers = torch.func.stack_module_state(networks)  # each (K, ...), leaves that require grad
    base = copy.deepcopy(networks[0]).to("meta")
    with torch.no_grad():
        features = torch.stack([enc.to(device)(coords) for enc in encoders])  # (K, N, 512)
    opt = torch.optim.Adam(params.values(), lr=1e-3)

    def member_loss(p, b, x, y):
        return F.mse_loss(torch.func.functional_call(base, (p, b), (x,)), y)

    batched = torch.vmap(member_loss)

    def step():
        loss = batched(params, buffers, features, targets).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def separate_step_fn(k: int, points: int, device: str):
    """K networks and K Adams, one after the other: what K single runs compute per step."""
    encoders, coords, targets = members_parts(k, points, device)
    parts = []
    for seed, enc in enumerate(encoders):
        torch.manual_seed(seed)
        net = NETWORK(enc.out_dim, 3).to(device)
        with torch.no_grad():
            features = enc.to(device)(coords)
        parts.append((net, torch.optim.Adam(net.parameters(), lr=1e-3), features))

    def step():
        for (net, opt, features), target in zip(parts, targets):
            loss = F.mse_loss(net(features), target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    return step


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def median_of_steps(step, steps: int, warmup: int, device: str) -> float:
    stamps = []
    for _ in range(steps + warmup + 1):
        step()
        sync(device)
        stamps.append(time.perf_counter())
    return median_step(stamps, warmup)


IMPLEMENTATIONS = {
    "stacked layers (bmm)": stacked_step_fn,
    "vmap(functional_call)": vmap_step_fn,
    "K separate networks": separate_step_fn,
}


def implementation_steps(
    k: int, points: int, steps: int, warmup: int, repeats: int, device: str = "cpu"
) -> dict[str, list[float]]:
    """Median step (s) of each implementation, per repeat, interleaved."""
    times = {name: [] for name in IMPLEMENTATIONS}
    for _ in range(repeats):
        for name, make in IMPLEMENTATIONS.items():
            times[name].append(median_of_steps(make(k, points, device), steps, warmup, device))
    return times


def fit_run(config: str, extra: list[str], steps: int, accelerator: str = "cpu") -> tuple[float, float]:
    """(wall time of ``Trainer.fit``, median step) of one run built from ``config`` with ``extra`` overrides."""
    model, dm, _ = instantiate(config, extra)
    timer = StepTimer()
    trainer = L.Trainer(
        max_steps=steps,
        accelerator=accelerator,
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        callbacks=[timer],
    )
    start = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    sync("cuda" if accelerator == "gpu" else "cpu")
    return time.perf_counter() - start, median_step(timer.stamps, min(2, steps - 2))


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


def throughput_ratio(single_step: float, stacked_step: float, k: int) -> float:
    """Member-steps per second of a K-member stacked step over one single model's: K · t_single / t_stacked.

    Example:
        >>> throughput_ratio(0.010, 0.016, 8)
        5.0
    """
    return k * single_step / stacked_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=8)
    parser.add_argument("--resolutions", type=int, nargs="+", default=[64, 256], help="image.yaml's data.resolution")
    parser.add_argument("--steps", type=int, nargs="+", default=[30, 10], help="timed steps per resolution")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    retain_freed_memory()  # as train.py
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
