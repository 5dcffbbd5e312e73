"""Training-step speed of the framework against a hand-written PyTorch loop, on the default configs.

    python benchmarks/training_step.py [--configs image.yaml volume.yaml] [--steps 20] [--repeats 5] [--bf16] [--compile]
    python benchmarks/training_step.py --configs volume.yaml --profile     # where the framework's extra time goes
    python benchmarks/training_step.py --configs volume.yaml --tiny        # the fixed per-step cost alone
    python benchmarks/training_step.py --before   # also the step as it was when it logged every step
    python benchmarks/training_step.py --glibc-defaults   # glibc's self-adjusting malloc thresholds (see below)

For each config, the model and data are built from the config itself (as train.py builds them) and timed,
interleaved in one process, as
  - a hand-written eager loop: the same encoder, network, loss and Adam; coordinates of the step's batch
    (the fixed training split for full batches, ``batch_size`` random grid points otherwise) are computed
    and encoded every step;
  - the framework with the encoding recomputed every step (the same work as the loop);
  - the framework as configured (a fixed full batch is encoded once);
  - the framework with the config's callbacks (spectral, images) — their overhead;
  - Lightning alone: a bare LightningModule whose ``training_step`` is the hand loop's step, fed the same
    batches by a plain DataLoader (Lightning's own per-step dispatch: loop, hooks, closure);
  - optionally bf16-mixed precision and torch.compile (compilation falls in the warm-up steps).
Per-step time is the median gap between consecutive ``on_train_batch_end`` calls (loop: between steps).
Also printed: achieved FLOP/s of the step against the measured FLOP/s of the step's dominant matmul
(measured right after each timed run, so each share pairs a step with the machine's speed of that moment), the
time of the step's matrix products alone (same shapes, nothing else: the ceiling of an eager step), and
the peak resident memory, and the minor page faults per timed step (a count, independent of the load).
Ratios, not absolute times, are the result: the machine is shared and noisy.

Every variant runs with the malloc settings ``train.py`` makes (``inr.io.allocator``), the hand loop
included, since all share this process: with glibc's self-adjusting thresholds, whether a step gives its
memory back to the kernel and faults it in again depends on the process's history, in either loop (hundreds
of faults per step on average for volume.yaml). ``--glibc-defaults`` leaves glibc's defaults, to see that.
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
from lightning.pytorch.callbacks import ProgressBar
from lightning.pytorch.loggers import TensorBoardLogger

from inr.io.allocator import retain_freed_memory
from inr.run.cli import build_cli, resolve_config_names

warnings.filterwarnings("ignore")
# the Trainer's start-up banner, once per timed fit, would bury the tables
for _name in ("lightning.pytorch", "lightning.fabric"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


class StepTimer(L.Callback):
    """Wall time between consecutive ``on_train_batch_end`` calls: everything the framework does per step;
    and the process's minor page faults at each."""

    def __init__(self) -> None:
        self.stamps: list[float] = []
        self.faults: list[int] = []

    def on_train_batch_end(self, *args) -> None:
        self.stamps.append(time.perf_counter())
        self.faults.append(minor_faults())


def median_step(stamps: list[float], warmup: int) -> float:
    return statistics.median(b - a for a, b in zip(stamps[warmup:], stamps[warmup + 1 :]))


def faults_per_step(faults: list[int], warmup: int) -> float:
    """Mean minor page faults per step over the timed steps (a fault maps in one fresh 4 KiB page)."""
    return (faults[-1] - faults[warmup]) / (len(faults) - 1 - warmup)


LAST_FAULTS: list[float] = []  # faults per step of the latest timed run, read by bench()


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
    """Model, DataModule and the configured callbacks (config's own, without checkpointing or the progress bar,
    which every variant here runs without) from a config."""
    cli = build_cli(resolve_config_names(["--config", config, "--trainer.logger", "false", *OVERRIDES, *extra]))
    callbacks = [
        cb for cb in cli.trainer.callbacks if type(cb).__module__.startswith("inr.callbacks") and not isinstance(cb, ProgressBar)
    ]
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
    LAST_FAULTS[:] = [faults_per_step(timer.faults, warmup)]
    return median_step(timer.stamps, warmup)


def hand_batches(dm, steps: int):
    """The hand loop's batches: the training split's grid indices, or ``batch_size`` random ones per step."""
    train_index = dm.train_index
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        yield (
            train_index
            if dm.batch_size is None
            else train_index[torch.randint(len(train_index), (dm.batch_size,), generator=gen)]
        )


def hand_step_loss(encoder, network, loss_fn, dm, index: torch.Tensor) -> torch.Tensor:
    """The hand loop's loss of one batch: coordinates computed and encoded, network, the task's loss."""
    return loss_fn(network(encoder(dm.grid.coords(index))), dm.values[index])


class BareModule(L.LightningModule):
    """The hand loop's step as a ``training_step``, nothing else: what Lightning itself costs per step."""

    def __init__(self, model, dm) -> None:
        super().__init__()
        self.encoder, self.network, self.loss_fn, self.dm = model.encoder, model.network, model.loss, dm

    def training_step(self, index: torch.Tensor, batch_idx: int) -> torch.Tensor:
        return hand_step_loss(self.encoder, self.network, self.loss_fn, self.dm, index)

    def configure_optimizers(self):
        return torch.optim.Adam(self.network.parameters(), lr=1e-3)


class HandBatches(torch.utils.data.IterableDataset):
    def __init__(self, dm, steps: int) -> None:
        self.dm, self.steps = dm, steps

    def __iter__(self):
        return hand_batches(self.dm, self.steps)


def lightning_bare_step(config: str, steps: int, warmup: int) -> float:
    model, dm, _ = instantiate(config)
    dm.setup("fit")
    timer = StepTimer()
    trainer = L.Trainer(
        max_steps=steps + warmup + 1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[timer],
    )
    loader = torch.utils.data.DataLoader(HandBatches(dm, steps + warmup + 1), batch_size=None)
    trainer.fit(BareModule(model, dm), train_dataloaders=loader)
    LAST_FAULTS[:] = [faults_per_step(timer.faults, warmup)]
    return median_step(timer.stamps, warmup)


def hand_loop_step(config: str, steps: int, warmup: int, profiler=None) -> tuple[float, int, torch.nn.Module]:
    """Median step time of the hand-written loop; ``profiler`` (a torch.profiler.profile) records the
    steps after the warm-up."""
    model, dm, _ = instantiate(config)
    network = model.network
    opt = torch.optim.Adam(network.parameters(), lr=1e-3)
    n = dm.batch_size or len(dm.train_index)
    stamps, faults = [], []
    for i, index in enumerate(hand_batches(dm, steps + warmup + 1)):
        if profiler is not None and i == warmup:
            profiler.start()
        loss = hand_step_loss(model.encoder, network, model.loss, dm, index)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stamps.append(time.perf_counter())
        faults.append(minor_faults())
    if profiler is not None:
        profiler.stop()
    LAST_FAULTS[:] = [faults_per_step(faults, warmup)]
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
        "Lightning alone: the hand loop's step in a bare module": "bare",
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
    faults = {name: [] for name in runs}
    for _ in range(args.repeats):  # interleaved, so drifts in machine load hit every variant alike
        for name, kwargs in variants.items():
            if kwargs is None:
                t, n, network = hand_loop_step(config, args.steps, args.warmup)
                faults[name].append(LAST_FAULTS[0])
                width = max(l.out_features for l in network.modules() if isinstance(l, torch.nn.Linear))
                runs["the step's matmuls alone"].append(gemm_only_step(n, network, args.steps, args.warmup))
                rates["the step's matmuls alone"].append(matmul_flops_per_second(n, width))
                faults["the step's matmuls alone"].append(float("nan"))
            elif kwargs == "bare":
                t = lightning_bare_step(config, args.steps, args.warmup)
                faults[name].append(LAST_FAULTS[0])
            else:
                t = framework_step(config, args.steps, args.warmup, **kwargs)
                faults[name].append(LAST_FAULTS[0])
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
        "| variant | step (ms) | ratio vs hand loop (range) | GFLOP/s | share of matmul rate (range) | matmuls' share of the step (range) | minor faults per step (range) |"
    )
    print("|---|---|---|---|---|---|---|")

    def cell(xs: list[float], digits: int) -> str:
        return f"{statistics.median(xs):.{digits}f} ({min(xs):.2f}–{max(xs):.2f})"

    for name, values in runs.items():
        ratios = [t / b for t, b in zip(values, base)]
        shares = [flops / t / r for t, r in zip(values, rates[name])]
        gemm_shares = [g / t for g, t in zip(gemm, values)]
        t = statistics.median(values)
        fs = faults[name]
        fault_cell = "–" if fs[0] != fs[0] else f"{statistics.median(fs):.0f} ({min(fs):.0f}–{max(fs):.0f})"
        print(
            f"| {name} | {t * 1e3:.1f} | {cell(ratios, 3)} | {flops / t / 1e9:.1f} | {cell(shares, 2)} | {cell(gemm_shares, 2)} | {fault_cell} |"
        )
    all_rates = [r for values in rates.values() for r in values]
    print(
        f"matmul ({n}×k @ k×k fp32, k = network width): median {statistics.median(all_rates) / 1e9:.1f} GFLOP/s "
        f"(range {min(all_rates) / 1e9:.0f}–{max(all_rates) / 1e9:.0f}); step = {flops / 1e9:.2f} GFLOP"
    )


def profile_against_hand_loop(config: str, steps: int, warmup: int) -> None:
    """torch.profiler over ``steps`` steps after the warm-up, in the framework as configured and in the hand
    loop, one after the other. Printed: the self time per step of every op (and ``record_function`` region),
    the largest differences first; the calls per step of every op and input shape whose count differs between
    the two (counts do not depend on the machine's load); the memory the ops allocate per step. In the
    framework ``Optimizer.step#Adam.step`` encloses Lightning's closure (training_step, backward, hooks), so
    its own self time is the Python-side work around the tensor ops."""
    from torch.profiler import ProfilerActivity, profile

    def run_profiled(framework: bool):
        prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True)
        if framework:
            model, dm, _ = instantiate(config)
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
        else:
            hand_loop_step(config, steps - 1, warmup, profiler=prof)  # steps − 1 + 1 steps after the warm-up
        return prof

    profiles = {"framework": run_profiled(True), "hand loop": run_profiled(False)}
    self_ms = {k: {e.key: e.self_cpu_time_total / 1e3 / steps for e in p.key_averages()} for k, p in profiles.items()}
    framework, hand = self_ms["framework"], self_ms["hand loop"]
    print(f"\n{config}: self time per step (ms), framework vs hand loop, {steps} steps each after {warmup} warm-up")
    print("| op | framework | hand loop | difference |\n|---|---:|---:|---:|")
    keys = sorted(set(framework) | set(hand), key=lambda k: hand.get(k, 0) - framework.get(k, 0))
    for key in keys[:10]:
        f, h = framework.get(key, 0.0), hand.get(key, 0.0)
        print(f"| {key} | {f:.3f} | {h:.3f} | {f - h:+.3f} |")
    print(
        f"| all | {sum(framework.values()):.3f} | {sum(hand.values()):.3f} | {sum(framework.values()) - sum(hand.values()):+.3f} |"
    )
    calls = {
        k: {(e.key, str(e.input_shapes)): e.count / steps for e in p.key_averages(group_by_input_shape=True)}
        for k, p in profiles.items()
    }
    differ = sorted(
        (key for key in set(calls["framework"]) | set(calls["hand loop"]) if key[0] != "[memory]"),
        key=lambda key: -abs(calls["framework"].get(key, 0) - calls["hand loop"].get(key, 0)),
    )
    print("\nops whose calls per step differ (input shapes; [] = a scalar or a list)")
    print("| op | input shapes | framework | hand loop |\n|---|---|---:|---:|")
    for key in differ:
        f, h = calls["framework"].get(key, 0.0), calls["hand loop"].get(key, 0.0)
        if abs(f - h) >= 0.5:  # a whole call per step; fractions are the first or last step's batch fetch
            print(f"| {key[0]} | {key[1]} | {f:.0f} | {h:.0f} |")
    for name, prof in profiles.items():
        allocating = [e for e in prof.key_averages() if e.self_cpu_memory_usage > 0]
        print(
            f"{name}: {sum(e.self_cpu_memory_usage for e in allocating) / steps / 2**20:.2f} MiB allocated per step "
            f"(what the ops keep beyond their own temporaries) by {sum(e.count for e in allocating) / steps:.1f} op calls"
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
    parser.add_argument(
        "--glibc-defaults", action="store_true", help="keep glibc's self-adjusting malloc thresholds (train.py sets its own)"
    )
    args = parser.parse_args()
    kept = False if args.glibc_defaults else retain_freed_memory()
    print(f"malloc thresholds: {'as train.py sets them' if kept else 'glibc defaults'}")
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
