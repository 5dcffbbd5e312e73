"""Training-step speed of the framework against a hand-written PyTorch loop on the same model and data.

    python benchmarks/training_step.py [--steps 30] [--repeats 5] [--resolution 256] [--threads N]

Prints, for the default image setup (configs/image.yaml: Gaussian m=256 → 3×256 ReLU → 3, 16,384 training
pixels, full batch), the median per-step time of
  - a hand-written eager loop (encode + forward + backward + Adam step, every step),
  - the framework with the encoding recomputed every step (the same work as the loop),
  - the framework as configured by default (the fixed full batch's encoding is computed once),
measured interleaved in one process, and their ratios; the achieved FLOP/s of the step against this
machine's measured matmul FLOP/s; and the peak resident memory. Ratios, not absolute times, are the result:
the machine is shared and noisy.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import time
from functools import partial

import lightning as L
import torch
import torch.nn.functional as F

from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.tasks import ImageFitting


class StepTimer(L.Callback):
    """Wall time between consecutive ``on_train_batch_end`` calls: everything the framework does per step."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def on_train_batch_end(self, *args) -> None:
        self.stamps.append(time.perf_counter())


def median_step(stamps: list[float], warmup: int) -> float:
    diffs = [b - a for a, b in zip(stamps[warmup:], stamps[warmup + 1 :])]
    return statistics.median(diffs)


def build_model(cache_encoding: bool, seed: int = 0, compile: bool = False) -> ImageFitting:
    torch.manual_seed(seed)
    return ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=256, sigma=10.0, seed=0),
        network=partial(MLP, width=256, depth=3, output_activation="sigmoid"),
        out_channels=3,
        cache_encoding=cache_encoding,
        compile=compile,
    )


def framework_step(
    dm: ImageDataModule, steps: int, warmup: int, cache_encoding: bool, precision: str = "32-true", compile: bool = False
) -> float:
    timer = StepTimer()
    trainer = L.Trainer(
        max_steps=steps + warmup + 1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        callbacks=[timer],
        precision=precision,
    )
    trainer.fit(build_model(cache_encoding, compile=compile), datamodule=dm)
    return median_step(timer.stamps, warmup)


def hand_loop_step(coords: torch.Tensor, target: torch.Tensor, steps: int, warmup: int) -> float:
    model = build_model(cache_encoding=False)
    encoder, network = model.encoder, model.network
    opt = torch.optim.Adam(network.parameters(), lr=1e-3)
    stamps = []
    for _ in range(steps + warmup + 1):
        loss = F.mse_loss(network(encoder(coords)), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stamps.append(time.perf_counter())
    return median_step(stamps, warmup)


def step_flops(n: int, network: torch.nn.Module, enc_features: int, in_dim: int) -> float:
    """Matmul FLOPs of one step: forward 2n·Σ in·out; backward the weight gradients (same) plus the input
    gradients of every layer but the first; plus the encoding's projection 2n·d·m."""
    linears = [m for m in network if isinstance(m, torch.nn.Linear)]
    fwd = sum(2 * n * l.in_features * l.out_features for l in linears)
    first = 2 * n * linears[0].in_features * linears[0].out_features
    return fwd + fwd + (fwd - first) + 2 * n * in_dim * enc_features


def matmul_flops_per_second(n: int = 16384, k: int = 256, repeats: int = 10) -> float:
    """fp32 FLOP/s of the step's dominant product, (n, k) @ (k, k), median of ``repeats``."""
    a, b = torch.randn(n, k), torch.randn(k, k)
    a @ b
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    return 2 * n * k * k / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--bf16", action="store_true", help="also time --trainer.precision bf16-mixed")
    parser.add_argument("--compile", action="store_true", help="also time model.compile: true (compilation in warm-up)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dm = ImageDataModule(resolution=args.resolution, split="every_other")
    batch = dm.gather(None, torch.device("cpu"))
    coords, target = batch["coords"], batch["values"]
    L.seed_everything(0, verbose=False)

    matmuls: list[float] = []
    runs: dict[str, list[float]] = {"hand loop": [], "framework, encode every step": [], "framework (default)": []}
    if args.bf16:
        runs["framework, bf16-mixed"] = []
    if args.compile:
        runs["framework, torch.compile"] = []
    for _ in range(args.repeats):  # interleaved, so drifts in machine load hit every variant alike
        matmuls.append(matmul_flops_per_second(len(coords)))
        runs["hand loop"].append(hand_loop_step(coords, target, args.steps, args.warmup))
        runs["framework, encode every step"].append(framework_step(dm, args.steps, args.warmup, cache_encoding=False))
        runs["framework (default)"].append(framework_step(dm, args.steps, args.warmup, cache_encoding=True))
        if args.bf16:
            runs["framework, bf16-mixed"].append(framework_step(dm, args.steps, args.warmup, True, "bf16-mixed"))
        if args.compile:
            runs["framework, torch.compile"].append(framework_step(dm, args.steps, args.warmup, True, compile=True))
    matmul = statistics.median(matmuls)

    n = len(coords)
    model = build_model(False)
    flops = step_flops(n, model.network, 256, 2)
    base = statistics.median(runs["hand loop"])
    print(f"image {args.resolution}², {n:,} training pixels, full batch, {torch.get_num_threads()} threads; "
          f"median of {args.repeats} interleaved runs × {args.steps} steps")
    print(f"| variant | step (ms) | ratio vs hand loop | GFLOP/s | share of matmul peak |")
    print(f"|---|---|---|---|---|")
    for name, values in runs.items():
        t = statistics.median(values)
        print(f"| {name} | {t * 1e3:.1f} | {t / base:.3f} | {flops / t / 1e9:.1f} | {flops / t / matmul:.2f} |")
    print(f"measured matmul ({n}×256 @ 256×256 fp32): {matmul / 1e9:.1f} GFLOP/s; step = {flops / 1e9:.2f} GFLOP")
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
