"""Training-step speed of the framework against a hand-written PyTorch loop, on the default configs.

    python benchmarks/training_step.py [--configs image.yaml volume.yaml] [--steps 20] [--repeats 5] [--bf16] [--compile]
    python benchmarks/training_step.py --configs volume.yaml --profile     # where the framework's extra time goes
    python benchmarks/training_step.py --configs volume.yaml --tiny        # the fixed per-step cost alone
    python benchmarks/training_step.py --configs image.yaml --tiny --run-steps 300   # and the tiny problem as run
    python benchmarks/training_step.py --glibc-defaults   # glibc's self-adjusting malloc thresholds (see below)

For each config, the model and data are built from the config itself (as train.py builds them) and timed,
interleaved in one process, as
  - a hand-written eager loop (``common.HandStep``) that encodes its batch every step, the fixed full batch
    included: the same work as the next row, so that row's ratio is the framework's own cost;
  - the framework with the encoding recomputed every step (``cache_encoding: false``);
  - the framework as configured (a fixed full batch is encoded once);
  - the framework with the config's callbacks (spectral, images) — their overhead;
  - Lightning alone: a bare LightningModule whose ``training_step`` is the hand loop's step, encoding included
    (Lightning's own per-step dispatch: loop, hooks, closure);
  - optionally bf16-mixed precision and torch.compile (compilation falls in the warm-up steps).
With ``--tiny`` (unless ``--no-as-run``) also: the tiny problem of image.yaml (``TINY_AS_RUN``) trained by
``train.py`` as a user runs the config, everything on, per optimizer step against hand steps timed inside the
same run (``tiny_as_run``), with ``--inner-steps`` K (default: the config's own) and with 1.
Per-step time is the median gap between consecutive ``on_train_batch_end`` calls (loop: between steps).
Also printed: achieved FLOP/s of the step against the measured FLOP/s of the step's dominant matmul
(measured right after each timed run, so each share pairs a step with the machine's speed of that moment), the
time of the step's matrix products alone (same shapes, nothing else: the ceiling of an eager step), and
the peak resident memory, and the minor page faults per timed step (a count, independent of the load).
Ratios, not absolute times, are the result: the machine is shared and noisy.

Every variant runs with the process settings ``train.py`` makes (``common.as_train_py``: malloc thresholds, no
NVML probe without a GPU), the hand loop included, since all share this process: with glibc's self-adjusting
thresholds, whether a step gives its memory back to the kernel and faults it in again depends on the process's
history, in either loop (hundreds of faults per step on average for volume.yaml). ``--glibc-defaults`` leaves
glibc's defaults, to see that.
"""

from __future__ import annotations

import resource
import statistics
import time

import lightning as L
import torch
from common import (
    TINY_AS_RUN,
    HandStep,
    StepClock,
    add_step_arguments,
    as_train_py,
    cell,
    framework_step,
    hand_loop,
    instantiate,
    interleave,
    interleaved_command,
    lightning_alone_step,
    quiet,
    set_threads,
)

from inr.io.command_line import CommandParser
from inr.methods.training import quiet_trainer

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


TINY_TARGET = 1.25  # the tiny problem as run: at most this many times the hand loop's time per optimizer step


def tiny_as_run(config: str, args) -> None:
    """The tiny problem trained by ``train.py`` as configured, against hand steps interleaved in the run
    (``common.InterleavedHandLoop``: after every 5th optimizer step from the 10th on, 5 hand steps on a copy of the
    model), per optimizer step; with ``--inner-steps`` K optimizer steps per Lightning step and with one."""
    configured = instantiate(config, list(TINY_AS_RUN))[0].inner_steps
    chosen = configured if args.inner_steps is None else args.inner_steps
    variants = {
        f"train.py as configured, inner_steps {k}": ["--model.init_args.inner_steps", str(k)] for k in dict.fromkeys([chosen, 1])
    }
    pairs = interleave(
        {
            name: lambda extra=extra: interleaved_command(config, args.run_steps, [*TINY_AS_RUN, *extra], 5, 5)
            for name, extra in variants.items()
        },
        args.repeats,
    )
    print(
        f"\n{config}, the tiny problem as a user runs it ({' '.join(TINY_AS_RUN)}): {args.run_steps} optimizer steps per "
        f"run, {args.repeats} interleaved repeats, {torch.get_num_threads()} thread(s); 5 hand steps after every 5th step"
    )
    print("| variant | hand step (ms) | run, per optimizer step (ms) | ratio vs hand loop (range) | target |")
    print("|---|---:|---:|---|---|")
    for name, measured in pairs.items():
        ratios = [r / h for r, h in measured]
        met = "met" if statistics.median(ratios) <= TINY_TARGET else "NOT met"
        print(
            f"| {name} | {statistics.median(h for _, h in measured) * 1e3:.2f} | "
            f"{statistics.median(r for r, _ in measured) * 1e3:.2f} | {cell(ratios)} | ≤ {TINY_TARGET:g}×: {met} |"
        )


def hand_loop_clock(config: str, extra: list[str], steps: int, warmup: int, profiler=None) -> tuple[StepClock, HandStep]:
    """The hand loop, encoding every step (the same work as "framework, encode every step")."""
    model, dm, _ = instantiate(config, extra)
    hand = HandStep(model, dm, encode_every_step=True)
    return hand_loop(hand, StepClock(warmup, steps), profiler), hand


def linears(network: torch.nn.Module) -> list[torch.nn.Linear]:
    return [m for m in network.modules() if isinstance(m, torch.nn.Linear)]


def step_flops(n: int, network: torch.nn.Module) -> float:
    """Matmul FLOPs of one step: forward 2n·Σ in·out; backward the weight gradients (the same) plus the
    input gradients of every layer but the first."""
    layers = linears(network)
    fwd = sum(2 * n * l.in_features * l.out_features for l in layers)
    first = 2 * n * layers[0].in_features * layers[0].out_features
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
    layers = linears(network)
    clock = StepClock(warmup, steps)
    with torch.no_grad():
        acts = [torch.randn(n, l.in_features) for l in layers]
        grads = [torch.randn(n, l.out_features) for l in layers]
        weights = [(l.weight.detach().clone(), l.bias.detach().clone()) for l in layers]
        for _ in range(clock.runs):
            for i, (x, g, (w, b)) in enumerate(zip(acts, grads, weights)):
                torch.addmm(b, x, w.t())
                g.t() @ x
                if i > 0:
                    g @ w
            clock.stamp()
    return clock.median()


def bench(config: str, args, extra: list[str]) -> None:
    steps, warmup = args.steps, args.warmup
    variants = {
        "hand loop": None,
        "framework, encode every step": dict(extra=[*extra, "--model.init_args.cache_encoding", "false"]),
        "framework (as configured)": dict(extra=extra),
        "framework + config's callbacks": dict(extra=extra, with_callbacks=True),
        "Lightning alone: the hand loop's step in a bare module": "bare",
    }
    if args.bf16:
        variants["framework, bf16-mixed"] = dict(extra=extra, precision="bf16-mixed")
    if args.compile:
        variants["framework, torch.compile"] = dict(extra=[*extra, "--model.init_args.compile", "true"])
    gemm_name = "the step's matmuls alone"
    runs = {name: [] for name in [*variants, gemm_name]}
    rates = {name: [] for name in runs}  # the matmul rate measured right after each run, paired with it
    faults = {name: [] for name in runs}
    for _ in range(args.repeats):  # interleaved, so drifts in machine load hit every variant alike
        for name, kwargs in variants.items():
            if kwargs is None:
                clock, hand = hand_loop_clock(config, extra, steps, warmup)
                n, network = hand.points, hand.network
                width = max(l.out_features for l in linears(network))
                runs[gemm_name].append(gemm_only_step(n, network, steps, warmup))
                rates[gemm_name].append(matmul_flops_per_second(n, width))
                faults[gemm_name].append(float("nan"))
            elif kwargs == "bare":
                clock = lightning_alone_step(config, StepClock(warmup, steps), extra, encode_every_step=True)
            else:
                clock = framework_step(config, StepClock(warmup, steps), **kwargs)
            runs[name].append(clock.step())
            faults[name].append(clock.faults_per_step())
            rates[name].append(matmul_flops_per_second(n, width))
    flops = step_flops(n, network)
    base = runs["hand loop"]
    print(
        f"\n{config}: {n:,} points per step, {torch.get_num_threads()} threads; "
        f"median of {args.repeats} interleaved runs × {steps} steps"
    )
    # Ratios are taken within a repeat (variant vs the hand loop of the same repeat; step FLOP/s vs the
    # matmul rate measured just after) and then their median: the shared machine's speed drifts between
    # repeats by more than the differences measured here.
    # "matmuls' share" = time of the step's own products run alone / step time, paired within a repeat:
    # the fraction of the step that is matrix products at their own speed, independent of a reference shape
    gemm = runs[gemm_name]
    print(
        "| variant | step (ms) | ratio vs hand loop (range) | GFLOP/s | share of matmul rate (range) | matmuls' share of the step (range) | minor faults per step (range) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, values in runs.items():
        ratios = [t / b for t, b in zip(values, base)]
        shares = [flops / t / r for t, r in zip(values, rates[name])]
        gemm_shares = [g / t for g, t in zip(gemm, values)]
        t = statistics.median(values)
        fs = faults[name]
        fault_cell = "–" if fs[0] != fs[0] else f"{statistics.median(fs):.0f} ({min(fs):.0f}–{max(fs):.0f})"
        print(
            f"| {name} | {t * 1e3:.1f} | {cell(ratios, 3, 2)} | {flops / t / 1e9:.1f} | {cell(shares, 2)} | {cell(gemm_shares, 2)} | {fault_cell} |"
        )
    all_rates = [r for values in rates.values() for r in values]
    print(
        f"matmul ({n}×k @ k×k fp32, k = network width): median {statistics.median(all_rates) / 1e9:.1f} GFLOP/s "
        f"(range {min(all_rates) / 1e9:.0f}–{max(all_rates) / 1e9:.0f}); step = {flops / 1e9:.2f} GFLOP"
    )


class ProfileSteps(L.Callback):
    """Runs a torch.profiler.profile over the training steps after ``warmup`` (set-up excluded)."""

    def __init__(self, profiler, warmup: int) -> None:
        self.profiler, self.warmup, self.started = profiler, warmup, False

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if trainer.global_step >= self.warmup and not self.started:  # ≥: a Lightning step may take several
            self.started = True
            self.profiler.start()

    def on_train_end(self, trainer, pl_module) -> None:
        self.profiler.stop()


def profile_against_hand_loop(config: str, extra: list[str], steps: int, warmup: int) -> None:
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
            model, dm, _ = instantiate(config, extra)
            quiet_trainer(warmup + steps, callbacks=[ProfileSteps(prof, warmup)]).fit(model, datamodule=dm)
        else:
            hand_loop_clock(config, extra, steps - 1, warmup, profiler=prof)  # steps − 1 + 1 steps after the warm-up
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
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["image.yaml", "volume.yaml"])
    add_step_arguments(parser, steps=20, warmup=3, repeats=5)
    parser.add_argument("--bf16", action="store_true", help="also time --trainer.precision bf16-mixed")
    parser.add_argument("--compile", action="store_true", help="also time model.compile: true")
    parser.add_argument("--profile", action="store_true", help="profile framework vs hand loop instead (40 steps)")
    parser.add_argument("--tiny", action="store_true", help="a tiny network and batch: the fixed per-step cost")
    parser.add_argument("--run-steps", type=int, default=300, help="--tiny: optimizer steps of each train.py run")
    parser.add_argument("--no-as-run", action="store_true", help="--tiny: leave out the train.py runs")
    parser.add_argument(
        "--inner-steps", type=int, default=None, help="--tiny: K of the train.py runs beside K = 1 (default: the config's)"
    )
    parser.add_argument(
        "--glibc-defaults", action="store_true", help="keep glibc's self-adjusting malloc thresholds (train.py sets its own)"
    )
    args = parser.parse_args()
    quiet()
    kept = as_train_py(glibc_defaults=args.glibc_defaults)
    print(f"malloc thresholds: {'as train.py sets them' if kept else 'glibc defaults'}")
    extra = TINY if args.tiny else []
    set_threads(args.threads)
    L.seed_everything(0, verbose=False)
    if args.profile:
        for config in args.configs:
            profile_against_hand_loop(config, extra, 40, args.warmup)
        return
    for config in args.configs:
        bench(config, args, extra)
        if args.tiny and not args.no_as_run:
            tiny_as_run(config, args)
    print(f"\npeak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
