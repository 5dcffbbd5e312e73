"""Training-step speed of the framework against a hand-written PyTorch loop, on the default configs.

    python benchmarks/training_step.py [--configs image.yaml volume.yaml] [--steps 20] [--repeats 5] [--bf16] [--compile]
    python benchmarks/training_step.py --configs volume.yaml --profile     # where the framework's extra time goes
    python benchmarks/training_step.py --configs volume.yaml --tiny        # the fixed per-step cost alone
    python benchmarks/training_step.py --before   # also the step as it was when it logged every step

For each config, the model and data are built from the config itself (as train.py builds them) and timed,
interleaved in one process, as
  - a hand-written eager loop: the same encoder, network, loss and Adam; coordinates of the step's batch
    (the fixed training split for full batches, ``batch_size`` random grid points otherwise) are computed
    and encoded every step;
  - the framework with the encoding recomputed every step (the same work as the loop);
  - the framework as configured (a fixed full batch is encoded once);
  - the framework with the config's callbacks (spectral, images) — their overhead;
  - optionally bf16-mixed precision and torch.compile (compilation falls in the warm-up steps).
Per-step time is the median gap between consecutive ``on_train_batch_end`` calls (loop: between steps).
Also printed: achieved FLOP/s of the step against the measured FLOP/s of the step's dominant matmul
(measured right after each timed run, so each share pairs a step with the machine's speed of that moment), the
time of the step's matrix products alone (same shapes, nothing else: the ceiling of an eager step), and
the peak resident memory. Ratios, not absolute times, are the result: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import logging
import resource
import statistics
import tempfile
import time
import warnings

import lightning as L
import torch
from lightning.pytorch.loggers import TensorBoardLogger

from inr.cli import build_cli, resolve_config_names

warnings.filterwarnings("ignore")
# the Trainer's start-up banner, once per timed fit, would bury the tables
for _name in ("lightning.pytorch", "lightning.fabric"):
    logging.getLogger(_name).setLevel(logging.ERROR)


class StepTimer(L.Callback):
    """Wall time between consecutive ``on_train_batch_end`` calls: everything the framework does per step."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def on_train_batch_end(self, *args) -> None:
        self.stamps.append(time.perf_counter())


def median_step(stamps: list[float], warmup: int) -> float:
    return statistics.median(b - a for a, b in zip(stamps[warmup:], stamps[warmup + 1 :]))


# --tiny: a network and batch so small that the step's tensor work is negligible, so the framework's fixed
# per-step cost (loop, hooks, logging, metrics) stands out against the hand loop's
TINY = [
    "--model.init_args.network.init_args.width",
    "8",
    "--model.init_args.encoder.init_args.num_features",
    "4",
    "--data.init_args.batch_size",
    "16",
]
OVERRIDES: list[str] = []  # applied to every variant, hand loop included


def instantiate(config: str, extra: list[str] = ()):
    """Model, DataModule and the configured callbacks (config's own, without checkpointing) from a config."""
    cli = build_cli(resolve_config_names(["--config", config, "--trainer.logger", "false", *OVERRIDES, *extra]))
    callbacks = [cb for cb in cli.trainer.callbacks if type(cb).__module__.startswith("inr.callbacks")]
    return cli.model, cli.datamodule, callbacks


def framework_step(config, steps, warmup, extra=(), with_callbacks=False, precision="32-true", before=False) -> float:
    if before:  # the step as it was before it logged only the steps that reach the logger
        from whole_run import logging_every_step

        with logging_every_step():
            return framework_step(config, steps, warmup, extra, with_callbacks, precision)
    model, dm, callbacks = instantiate(config, list(extra))
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as tmp:
        trainer = L.Trainer(
            max_steps=steps + warmup + 1,
            logger=TensorBoardLogger(tmp, name="bench") if with_callbacks else False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            limit_val_batches=0,
            callbacks=[timer, *(callbacks if with_callbacks else [])],
            precision=precision,
        )
        trainer.fit(model, datamodule=dm)
    return median_step(timer.stamps, warmup)


def hand_loop_step(config: str, steps: int, warmup: int, profiler=None) -> tuple[float, int, torch.nn.Module]:
    """Median step time of the hand-written loop; ``profiler`` (a torch.profiler.profile) records the
    steps after the warm-up."""
    model, dm, _ = instantiate(config)
    encoder, network, loss_fn = model.encoder, model.network, model.loss
    opt = torch.optim.Adam(network.parameters(), lr=1e-3)
    train_index, values, grid = dm.train_index, dm.values, dm.grid
    gen = torch.Generator().manual_seed(0)
    n = dm.batch_size or len(train_index)
    stamps = []
    for i in range(steps + warmup + 1):
        if profiler is not None and i == warmup:
            profiler.start()
        index = train_index if dm.batch_size is None else train_index[torch.randint(len(train_index), (n,), generator=gen)]
        loss = loss_fn(network(encoder(grid.coords(index))), values[index])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stamps.append(time.perf_counter())
    if profiler is not None:
        profiler.stop()
    return median_step(stamps, warmup), n, network


class ProfileSteps(L.Callback):
    """Runs a torch.profiler.profile over the training steps after ``warmup`` (set-up excluded)."""

    def __init__(self, profiler, warmup: int) -> None:
        self.profiler, self.warmup = profiler, warmup

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if trainer.global_step == self.warmup:
            self.profiler.start()

    def on_train_end(self, trainer, pl_module) -> None:
        self.profiler.stop()


def step_flops(n: int, network: torch.nn.Module) -> float:
    """Matmul FLOPs of one step: forward 2n·Σ in·out; backward the weight gradients (the same) plus the
    input gradients of every layer but the first."""
    linears = [m for m in network.modules() if isinstance(m, torch.nn.Linear)]
    fwd = sum(2 * n * l.in_features * l.out_features for l in linears)
    first = 2 * n * linears[0].in_features * linears[0].out_features
    return 3 * fwd - first


def matmul_flops_per_second(n: int, k: int, repeats: int = 10) -> float:
    """fp32 FLOP/s of the step's dominant product (n, k) @ (k, k), median of ``repeats``."""
    a, b = torch.randn(n, k), torch.randn(k, k)
    a @ b
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    return 2 * n * k * k / statistics.median(times)


def gemm_only_step(n: int, network: torch.nn.Module, steps: int, warmup: int) -> float:
    """Median time of only the matrix products of one step, with the step's shapes: per linear layer the
    forward Y = addmm(b, X, Wᵀ), the weight gradient Gᵀ X and (all but the first) the input gradient G W.
    The ceiling of an eager step: what is left of a real step is elementwise work (activations, loss, Adam)."""
    linears = [m for m in network.modules() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        acts = [torch.randn(n, l.in_features) for l in linears]
        grads = [torch.randn(n, l.out_features) for l in linears]
        weights = [(l.weight.detach().clone(), l.bias.detach().clone()) for l in linears]
        stamps = []
        for _ in range(steps + warmup + 1):
            for i, (x, g, (w, b)) in enumerate(zip(acts, grads, weights)):
                torch.addmm(b, x, w.t())
                g.t() @ x
                if i > 0:
                    g @ w
            stamps.append(time.perf_counter())
    return median_step(stamps, warmup)


def bench(config: str, args) -> None:
    variants = {
        "hand loop": None,
        "framework, encode every step": dict(extra=["--model.init_args.cache_encoding", "false"]),
        "framework (as configured)": dict(),
        "framework + config's callbacks": dict(with_callbacks=True),
    }
    if args.before:
        variants["framework as configured, logging every step (before)"] = dict(before=True)
    if args.bf16:
        variants["framework, bf16-mixed"] = dict(precision="bf16-mixed")
    if args.compile:
        variants["framework, torch.compile"] = dict(extra=["--model.init_args.compile", "true"])
    runs = {name: [] for name in variants}
    runs["the step's matmuls alone"] = []
    rates = {name: [] for name in runs}  # the matmul rate measured right after each run, paired with it
    for _ in range(args.repeats):  # interleaved, so drifts in machine load hit every variant alike
        for name, kwargs in variants.items():
            if kwargs is None:
                t, n, network = hand_loop_step(config, args.steps, args.warmup)
                width = max(l.out_features for l in network.modules() if isinstance(l, torch.nn.Linear))
                runs["the step's matmuls alone"].append(gemm_only_step(n, network, args.steps, args.warmup))
                rates["the step's matmuls alone"].append(matmul_flops_per_second(n, width))
            else:
                t = framework_step(config, args.steps, args.warmup, **kwargs)
            runs[name].append(t)
            rates[name].append(matmul_flops_per_second(n, width))
    flops = step_flops(n, network)
    base = runs["hand loop"]
    print(
        f"\n{config}: {n:,} points per step, {torch.get_num_threads()} threads; "
        f"median of {args.repeats} interleaved runs × {args.steps} steps"
    )
    # Ratios are taken within a repeat (variant vs the hand loop of the same repeat; step FLOP/s vs the
    # matmul rate measured just after) and then their median: the shared machine's speed drifts between
    # repeats by more than the differences measured here.
    # "matmuls' share" = time of the step's own products run alone / step time, paired within a repeat:
    # the fraction of the step that is matrix products at their own speed, independent of a reference shape
    gemm = runs["the step's matmuls alone"]
    print(
        "| variant | step (ms) | ratio vs hand loop (range) | GFLOP/s | share of matmul rate (range) | matmuls' share of the step (range) |"
    )
    print("|---|---|---|---|---|---|")

    def cell(xs: list[float], digits: int) -> str:
        return f"{statistics.median(xs):.{digits}f} ({min(xs):.2f}–{max(xs):.2f})"

    for name, values in runs.items():
        ratios = [t / b for t, b in zip(values, base)]
        shares = [flops / t / r for t, r in zip(values, rates[name])]
        gemm_shares = [g / t for g, t in zip(gemm, values)]
        t = statistics.median(values)
        print(
            f"| {name} | {t * 1e3:.1f} | {cell(ratios, 3)} | {flops / t / 1e9:.1f} | {cell(shares, 2)} | {cell(gemm_shares, 2)} |"
        )
    all_rates = [r for values in rates.values() for r in values]
    print(
        f"matmul ({n}×k @ k×k fp32, k = network width): median {statistics.median(all_rates) / 1e9:.1f} GFLOP/s "
        f"(range {min(all_rates) / 1e9:.0f}–{max(all_rates) / 1e9:.0f}); step = {flops / 1e9:.2f} GFLOP"
    )


def profile_against_hand_loop(config: str, steps: int, warmup: int) -> None:
    """torch.profiler self time per step of every op (and ``record_function`` region) over ``steps`` steps
    after the warm-up, in the framework as configured and in the hand loop, one after the other; the
    largest differences first. In the framework ``Optimizer.step#Adam.step`` encloses Lightning's closure
    (training_step, backward, hooks), so its own self time is the Python-side work around the tensor ops."""
    from torch.profiler import ProfilerActivity, profile

    def per_step(prof) -> dict[str, float]:
        return {e.key: e.self_cpu_time_total / 1e3 / steps for e in prof.key_averages()}

    model, dm, _ = instantiate(config)
    prof = profile(activities=[ProfilerActivity.CPU])
    trainer = L.Trainer(
        max_steps=warmup + steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        callbacks=[ProfileSteps(prof, warmup)],
    )
    trainer.fit(model, datamodule=dm)
    framework = per_step(prof)
    prof = profile(activities=[ProfilerActivity.CPU])
    hand_loop_step(config, steps - 1, warmup, profiler=prof)  # steps − 1 + 1 steps after the warm-up
    hand = per_step(prof)
    print(f"\n{config}: self time per step (ms), framework vs hand loop, {steps} steps each after {warmup} warm-up")
    print("| op | framework | hand loop | difference |\n|---|---:|---:|---:|")
    keys = sorted(set(framework) | set(hand), key=lambda k: hand.get(k, 0) - framework.get(k, 0))
    for key in keys[:10]:
        f, h = framework.get(key, 0.0), hand.get(key, 0.0)
        print(f"| {key} | {f:.3f} | {h:.3f} | {f - h:+.3f} |")
    print(
        f"| all | {sum(framework.values()):.3f} | {sum(hand.values()):.3f} | {sum(framework.values()) - sum(hand.values()):+.3f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["image.yaml", "volume.yaml"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bf16", action="store_true", help="also time --trainer.precision bf16-mixed")
    parser.add_argument("--compile", action="store_true", help="also time model.compile: true")
    parser.add_argument("--profile", action="store_true", help="profile framework vs hand loop instead (40 steps)")
    parser.add_argument("--before", action="store_true", help="also time the step that logs every step (before)")
    parser.add_argument("--tiny", action="store_true", help="a tiny network and batch: the fixed per-step cost")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.tiny:
        OVERRIDES.extend(TINY)
    if args.threads:
        torch.set_num_threads(args.threads)
    L.seed_everything(0, verbose=False)
    if args.profile:
        for config in args.configs:
            profile_against_hand_loop(config, 40, args.warmup)
        return
    for config in args.configs:
        bench(config, args)
    print(f"\npeak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
