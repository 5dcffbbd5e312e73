"""GPU check: the figures the CPU benchmarks cannot give, in one command of a few minutes on a CUDA machine.

    python benchmarks/gpu_check.py                # on a machine with CUDA (planned for < 8 minutes on one GPU)
    python benchmarks/gpu_check.py --dry-run      # every part on the CPU with tiny sizes: checks the script
    python benchmarks/gpu_check.py --out results/h100 --minutes 8

Every figure goes to one JSON file and one markdown table (``--out``: ``gpu_check.json`` and ``gpu_check.md``,
rewritten after each part, so a run cut short keeps what it measured): one row per figure with its part, what
it is, its value and unit, and how it compares (a ratio's median and range over the repeats). ``--minutes``
(default 8) is the time budget: a part is not started when the time spent plus its planned seconds (``PLANNED``)
would pass it, and the files say which parts were skipped so. The parts run in the order of what the docs wait
for: the hash encoding, the paper-size run, stacked members, small steps (CUDA graphs), then the step ratios.

Prints, each part timed with ``torch.cuda.synchronize()`` before every time stamp:
  1. image.yaml and volume.yaml: the framework's step (``Trainer.fit``, as configured, no callbacks) against a
     hand-written loop of the same model on the same device, and the speed-ups of bf16-mixed and
     torch.compile over the framework's fp32 eager step (median step gaps after a warm-up; compilation in
     the warm-up; variants interleaved over the repeats, ratios paired within a repeat), and Lightning alone
     (the hand loop's step as a bare ``training_step``: Lightning's own share);
  2. the hash encoding (tiny-cuda-nn's defaults) forward + backward: points per second, 2-D and 3-D;
  3. the paper's protocol for one mapping: ``train.py --config image_paper.yaml`` (512², 2000 full-batch
     steps, its callbacks and validation), wall time of the whole command and its step as logged;
  4. with N > 1 GPUs: the same run on 1 and on N GPUs (DDP, the full batch sharded), steps per second and
     the N-GPU throughput over the 1-GPU one;
  5. the step as a user's run pays it: the device drained only at the two ends of a window of steps, so the
     CPU runs ahead and host-side work (Lightning's and the framework's) hides behind the GPU's where the step
     has enough device work: hand loop, Lightning alone and the framework for image.yaml, volume.yaml and the
     paper's 512² config;
  6. stacked members (``model.members``, benchmarks/stacked.py): the framework's step of K = 8 members against
     one single model's on image.yaml and image_paper.yaml, as member-steps per second over a single run's
     (target ≥ 4×), and one step of the three implementations (stacked layers, vmap, K separate networks).
  7. small steps: optimizer steps per second of ``train.py`` (as configured, its callbacks on; from the logged
     step times) for the tiny problem (``training_step.TINY_AS_RUN`` on image.yaml), image.yaml and volume.yaml,
     with one optimizer step per Lightning step, with the config's ``inner_steps`` (10 where it is 1) and with
     that and ``cuda_graphs``, against a hand loop and against the hand loop's step captured as a CUDA graph
     (``GraphedHandStep``) on the same device (device drained at the two ends of the window only).
  8. meta-learning (``meta_natural.yaml``, ``inr.tasks.MetaLearning``): the outer step of Reptile and MAML in
     ``Trainer.fit`` with the config's 4 signals per step and with 32, as signals adapted per second (and inner
     steps per second: signals × n over the step's time).
On a machine without CUDA (and without ``--dry-run``) it says so in one line on stderr and exits 1: nothing was
measured or written, and a script waiting for the figures must not read that as success. ``--parts`` that match no part are
refused the same way (exit 2); a part that fails is reported and the others still run (exit 1 at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import lightning as L
import torch
from common import (
    TINY_AS_RUN,
    HandStep,
    StepClock,
    as_train_py,
    cell,
    framework_step,
    hand_loop,
    implementation_steps,
    instantiate,
    interleave,
    lightning_alone_step,
    logged_step_times,
    quiet,
    throughput_ratio,
    whole_run,
)

from inr.io.command_line import CommandParser

ROOT = Path(__file__).resolve().parents[1]
# each part's planned share of the budget (seconds on one H200 for the parts run there, 2026-12-04; estimates for
# 6 and 7, which ran after: their fits counted at the measured parts' seconds per fit)
PLANNED = {"2": 5, "3": 30, "1": 60, "5": 30, "6": 60, "7": 180, "4": 60, "8": 60}


class Report:
    """Every figure of the run, one row each, written as one JSON file and one markdown table."""

    def __init__(self, out: Path, device: str) -> None:
        self.out, self.rows, self.parts = out, [], {}
        self.meta = {
            "device": device,
            "torch": torch.__version__,
            "lightning": L.__version__,
            "python": platform.python_version(),
            "host": platform.node(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        }

    def add(self, part: str, figure: str, value: float, unit: str, versus: str = "") -> None:
        """One figure: ``value`` in ``unit``; ``versus``: its ratio to the part's reference, as printed."""
        self.rows.append({"part": part, "figure": figure, "value": float(value), "unit": unit, "versus": versus})

    def status(self, part: str, status: str, seconds: float = 0.0) -> None:
        self.parts[part] = {"status": status, "seconds": round(seconds, 1)}

    def markdown(self) -> str:
        lines = [
            f"GPU check: {self.meta['device']}, torch {self.meta['torch']}, Lightning {self.meta['lightning']}, "
            f"{self.meta['started']}",
            "",
            "| part | figure | value | unit | compared |",
            "|---|---|---:|---|---|",
        ]
        lines += [f"| {r['part']} | {r['figure']} | {r['value']:.4g} | {r['unit']} | {r['versus']} |" for r in self.rows]
        lines += [f"| {part} | (part) | {p['seconds']:g} | s | {p['status']} |" for part, p in self.parts.items()]
        return "\n".join(lines) + "\n"

    def write(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        record = {**self.meta, "parts": self.parts, "figures": self.rows}
        for name, text in (("gpu_check.json", json.dumps(record, indent=1)), ("gpu_check.md", self.markdown())):
            tmp = self.out / f".{name}.tmp"
            tmp.write_text(text)
            os.replace(tmp, self.out / name)  # whole files only, also when the run is cut short


REPORT: Report = Report(Path("gpu_check"), "none")  # replaced in main()


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def clock_for(args, per_step: bool) -> StepClock:
    """``per_step``: the device drained before every stamp, the step the median gap (its device time, not its
    launch time); otherwise drained only at the window's two ends, the step the window's mean (as a user's run)."""
    return StepClock(args.warmup, args.steps, per_step=per_step, sync=sync)


def framework(config: str, args, extra=(), precision: str = "32-true", per_step: bool = True) -> float:
    clock = clock_for(args, per_step)
    return framework_step(config, clock, [*args.overrides, *extra], precision=precision, accelerator=args.accelerator).step()


def hand(config: str, args, per_step: bool = True) -> float:
    model, dm, _ = instantiate(config, args.overrides)
    return hand_loop(HandStep(model, dm, args.device), clock_for(args, per_step)).step()


def lightning_alone(config: str, args, per_step: bool = True) -> float:
    return lightning_alone_step(config, clock_for(args, per_step), args.overrides, args.device).step()


def step_ratios(config: str, args) -> None:
    variants = {
        "hand loop": lambda: hand(config, args),
        "Lightning alone": lambda: lightning_alone(config, args),
        "framework": lambda: framework(config, args),
        "framework, bf16-mixed": lambda: framework(config, args, precision="bf16-mixed"),
        "framework, torch.compile": lambda: framework(config, args, extra=["--model.init_args.compile", "true"]),
    }
    times = interleave(variants, args.repeats)
    paired = lambda a, b: [x / y for x, y in zip(times[a], times[b])]
    print(f"\n1. {config}: median step over {args.steps} steps, device drained every step, {args.repeats} interleaved repeats")
    print("| variant | step (ms) | time / hand loop | speed-up over framework fp32 eager |\n|---|---:|---|---|")
    for name in variants:
        speedup = "" if name in ("hand loop", "Lightning alone") else cell(paired("framework", name))
        print(
            f"| {name} | {statistics.median(times[name]) * 1e3:.2f} | {cell(paired(name, 'hand loop'))} | {speedup} |", flush=True
        )
        versus = f"{cell(paired(name, 'hand loop'))} × hand loop" + (f"; speed-up {speedup} over fp32 eager" if speedup else "")
        REPORT.add(f"1. {config}", f"step, {name}", statistics.median(times[name]) * 1e3, "ms", versus)


def as_users_run(config: str, args) -> None:
    """The step with the device drained at the window's ends only (a user's run: no per-step synchronisation)."""
    args = argparse.Namespace(**{**vars(args), "steps": args.run_steps})
    variants = {
        "hand loop": lambda: hand(config, args, per_step=False),
        "Lightning alone": lambda: lightning_alone(config, args, per_step=False),
        "framework": lambda: framework(config, args, per_step=False),
    }
    times = interleave(variants, args.repeats)
    paired = lambda a: [x / y for x, y in zip(times[a], times["hand loop"])]
    print(
        f"\n5. {config}: mean step over {args.steps} steps, device drained at the two ends only, {args.repeats} interleaved repeats"
    )
    print("| variant | step (ms) | time / hand loop |\n|---|---:|---|")
    for name in variants:
        print(f"| {name} | {statistics.median(times[name]) * 1e3:.3f} | {cell(paired(name))} |", flush=True)
        REPORT.add(
            f"5. {config}",
            f"step as run, {name}",
            statistics.median(times[name]) * 1e3,
            "ms",
            f"{cell(paired(name))} × hand loop",
        )


class GraphedHandStep:
    """The hand loop's step (``common.HandStep``: forward, loss, backward, Adam) captured once as a CUDA graph and
    replayed (torch's whole-network recipe: a ``capturable`` optimizer, three eager warm-up steps on a side
    stream, random batches drawn by the default generator inside the graph). Where there is no CUDA (``--dry-run``)
    it runs the same steps eagerly: the plumbing only."""

    WARMUP = 3

    def __init__(self, hand: HandStep) -> None:
        self.hand = hand
        hand.generator = None  # a graph draws with the device's default generator (its state is captured)
        optimizer = hand.optimizer
        self.cuda = next(hand.network.parameters()).is_cuda
        if self.cuda:
            for group in optimizer.param_groups:
                group["capturable"] = True
        self.graph, self.warm = None, 0

    def step(self) -> None:
        if not self.cuda:
            self.hand.step()
            return
        if self.warm < self.WARMUP:
            self.warm += 1
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                self.hand.step()
            torch.cuda.current_stream().wait_stream(stream)
            return
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            self.hand.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.graph(self.graph):
                self.hand.step()
        self.graph.replay()


SMALL_STEPS_K = 10  # K of part 7 where the config runs one optimizer step per Lightning step


def small_step_rates(config: str, extra: list[str], args) -> dict[str, float]:
    """{variant: seconds per optimizer step}, one of each: hand loop, graphed hand loop, train.py with K = 1, the
    config's K, and the config's K with cuda_graphs."""
    overrides = [*args.overrides, *extra]
    chosen = instantiate(config, overrides)[0].inner_steps
    chosen = chosen if chosen > 1 else SMALL_STEPS_K
    window = argparse.Namespace(**{**vars(args), "steps": args.small_steps})

    def hand_rate(graphed: bool) -> float:
        model, dm, _ = instantiate(config, overrides)
        hand = HandStep(model, dm, args.device)
        stepper = GraphedHandStep(hand) if graphed else hand
        return hand_loop(stepper, clock_for(window, per_step=False)).step()

    def run_rate(k: int, graphs: bool = False) -> float:
        options = [*overrides, *args.trainer, "--model.init_args.inner_steps", str(k)]
        step, _ = whole_run(config, args.small_steps, [*options, "--model.init_args.cuda_graphs", str(graphs).lower()])
        return step

    variants = {
        "hand loop": lambda: hand_rate(False),
        "hand loop, CUDA graph": lambda: hand_rate(True),
        "train.py, inner_steps 1": lambda: run_rate(1),
        f"train.py, inner_steps {chosen}": lambda: run_rate(chosen),
        f"train.py, inner_steps {chosen}, cuda_graphs": lambda: run_rate(chosen, graphs=True),
    }
    return interleave(variants, args.repeats)


def small_steps(args) -> None:
    print(
        f"\n7. small steps: optimizer steps per second, {args.small_steps} steps per window or run, "
        f"{args.repeats} interleaved repeats (train.py: from its logged step times, callbacks on)"
    )
    print("| problem | variant | steps/s | time / hand loop | time / CUDA-graph hand loop |\n|---|---|---:|---|---|")
    for label, config, extra in (
        ("tiny", "image.yaml", TINY_AS_RUN),
        ("image.yaml", "image.yaml", []),
        ("volume.yaml", "volume.yaml", []),
    ):
        times = small_step_rates(config, extra, args)
        for name, xs in times.items():
            hand_ratio = cell([x / h for x, h in zip(xs, times["hand loop"])])
            graph_ratio = cell([x / g for x, g in zip(xs, times["hand loop, CUDA graph"])])
            print(f"| {label} | {name} | {1 / statistics.median(xs):.0f} | {hand_ratio} | {graph_ratio} |", flush=True)
            versus = f"{hand_ratio} × hand loop; {graph_ratio} × CUDA-graph hand loop"
            REPORT.add(f"7. small steps, {label}", name, 1 / statistics.median(xs), "steps/s", versus)


STACKED_TARGET = 4.0  # member-steps per second of K = 8 stacked members over one single model's, on a GPU


def stacked_members(config: str, args) -> list[float]:
    """The framework's median step with ``model.members K`` against a single model's (device drained every step,
    variants interleaved), as throughput K · t_single / t_stacked per repeat; prints a row and returns them."""
    k = args.members
    variants = {
        "single": lambda: framework(config, args),
        "stacked": lambda: framework(config, args, extra=["--model.init_args.members", str(k)]),
    }
    times = interleave(variants, args.repeats)
    ratios = [throughput_ratio(s, t, k) for s, t in zip(times["single"], times["stacked"])]
    met = "met" if statistics.median(ratios) >= STACKED_TARGET else "NOT met"
    REPORT.add(
        f"6. stacked members, {config}",
        f"member-steps/s of K = {k} over a single model's",
        statistics.median(ratios),
        "×",
        f"{cell(ratios)}; ≥ {STACKED_TARGET:g}×: {met}",
    )
    print(
        f"| {config} | {statistics.median(times['single']) * 1e3:.2f} | {statistics.median(times['stacked']) * 1e3:.2f} | "
        f"{cell(ratios)} | ≥ {STACKED_TARGET:g}×: {met} |",
        flush=True,
    )
    return ratios


def stacked_part(args) -> None:
    print(
        f"\n6. stacked members, K = {args.members}: framework step (device drained every step), {args.repeats} interleaved repeats"
    )
    print("| config | single step (ms) | stacked step (ms) | member-steps/s over single | target |\n|---|---:|---:|---|---|")
    for config in ("image.yaml", "image_paper.yaml"):
        stacked_members(config, args)
    points = args.stacked_points
    times = implementation_steps(args.members, points, args.steps, args.warmup, args.repeats, args.device)
    reference = times["K separate networks"]
    print(f"one Adam step of {args.members} members, image.yaml's network, {points:,} points (hand loop)")
    print("| implementation | step (ms) | time / K separate networks |\n|---|---:|---|")
    for name, xs in times.items():
        print(f"| {name} | {statistics.median(xs) * 1e3:.2f} | {cell([x / r for x, r in zip(xs, reference)])} |", flush=True)
        versus = f"{cell([x / r for x, r in zip(xs, reference)])} × K separate networks"
        REPORT.add(f"6. stacked members, {points:,} points", f"Adam step, {name}", statistics.median(xs) * 1e3, "ms", versus)


def meta_rates(args) -> list[tuple[str, int, float]]:
    """(algorithm, signals per outer step, median outer step in seconds) of meta_natural.yaml's framework step."""
    rows = []
    for algorithm in ("reptile", "maml"):
        for signals in args.meta_signals:
            extra = [
                *args.overrides_meta,
                "--model.init_args.algorithm",
                algorithm,
                "--data.init_args.signals_per_step",
                str(signals),
            ]
            clock = framework_step(
                "meta_natural.yaml", StepClock(args.warmup, args.steps, sync=sync), extra, accelerator=args.accelerator
            )
            rows.append((algorithm, signals, clock.median()))
    return rows


def meta_part(args) -> None:
    print(f"\n8. meta-learning: meta_natural.yaml's outer step in Trainer.fit (median of {args.steps} after {args.warmup})")
    print("| algorithm | signals per step | outer step (ms) | signals/s | inner steps × signals /s |\n|---|---:|---:|---:|---:|")
    inner = 2  # meta_natural.yaml's inner_loop_steps
    for algorithm, signals, step in meta_rates(args):
        print(f"| {algorithm} | {signals} | {step * 1e3:.1f} | {signals / step:.1f} | {inner * signals / step:.1f} |", flush=True)
        REPORT.add("8. meta-learning, meta_natural.yaml", f"{algorithm}, {signals} signals per step", signals / step, "signals/s")


def hashgrid_points_per_second(args) -> None:
    from inr.encoders import HashGridEncoding

    print(f"\n2. hash encoding (16 levels × 2 features, T = 2^19), forward + backward of Σy², {args.points:,} points")
    print("| dims | ms per pass | points/s |\n|---|---:|---:|")
    for d in (2, 3):
        torch.manual_seed(0)
        enc = HashGridEncoding(in_dim=d).to(args.device)
        x = torch.rand(args.points, d, device=args.device)
        clock = StepClock(args.warmup, args.steps, sync=sync)
        for _ in range(clock.runs):
            enc.params.grad = None
            enc(x).square().sum().backward()
            clock.stamp()
        t = clock.median()
        print(f"| {d} | {t * 1e3:.2f} | {args.points / t:.3g} |", flush=True)
        REPORT.add(
            "2. hash encoding",
            f"{d}-D forward + backward, {args.points:,} points",
            args.points / t,
            "points/s",
            f"{t * 1e3:.2f} ms per pass",
        )


def paper_mapping(args) -> None:
    steps = args.paper_steps
    step, total = whole_run("image_paper.yaml", steps, [*args.overrides_paper, *args.trainer])
    print(
        f"\n3. paper protocol, one mapping: train.py --config image_paper.yaml ({steps} steps"
        f"{', ' + ' '.join(args.overrides_paper) if args.overrides_paper else ''})"
    )
    print(f"whole command {total * steps:.1f} s; step as logged {step * 1e3:.2f} ms", flush=True)
    REPORT.add("3. image_paper.yaml", f"whole command, {steps} steps", total * steps, "s")
    REPORT.add("3. image_paper.yaml", "step as logged", step * 1e3, "ms")


def ddp_throughput(args, n: int) -> None:
    """1 vs n devices of the paper config (full batch: each rank its 1/n share); steps/s from the logged times."""
    rates = {}
    for devices in (1, n):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [
                sys.executable,
                str(ROOT / "train.py"),
                "--config",
                "image_paper.yaml",
                "--trainer.max_steps",
                str(args.ddp_steps),
                "--trainer.devices",
                str(devices),
                "--trainer.accelerator",
                args.accelerator,
                "--trainer.strategy",
                "ddp" if devices > 1 else "auto",
                "--trainer.enable_progress_bar",
                "false",
                "--trainer.callbacks",
                "null",
                "--trainer.logger.init_args.save_dir",
                tmp,
                *args.overrides_paper,
            ]
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"4. DDP on {devices} device(s) failed:\n{proc.stderr[-2000:]}")
            (run,) = Path(tmp).glob("image_paper/version_*")
            step, _ = logged_step_times(run)
            rates[devices] = 1 / step
    print(f"\n4. DDP, image_paper.yaml full batch sharded, {args.ddp_steps} steps, callbacks off")
    print(f"| devices | steps/s |\n|---|---:|\n| 1 | {rates[1]:.2f} |\n| {n} | {rates[n]:.2f} |")
    print(f"{n}-device throughput / 1-device: {rates[n] / rates[1]:.2f} (ideal {n})", flush=True)
    for devices in (1, n):
        REPORT.add("4. DDP, image_paper.yaml", f"{devices} device(s), steps/s", rates[devices], "steps/s")
    REPORT.add("4. DDP, image_paper.yaml", f"{n}-device throughput over 1-device", rates[n] / rates[1], "×", f"ideal {n}")


def configure(args, gpus: int) -> int:
    """The sizes of a dry run (tiny, CPU) or of the real one; returns the number of devices for part 4."""
    if args.dry_run:  # tiny sizes: checks that every part runs, measures nothing worth reading
        torch.set_num_threads(1)
        args.device, args.accelerator, args.steps, args.warmup, args.repeats, args.points = "cpu", "cpu", 3, 1, 1, 4096
        args.overrides = ["--model.init_args.network.init_args.width", "16", "--data.init_args.resolution", "16"]
        args.overrides_paper = ["--model.init_args.network.init_args.width", "16", "--data.init_args.resolution", "16"]
        # 20-step runs log every 5th step: the per-step rate is read between the first and last logged steps
        args.trainer = ["--trainer.accelerator", "cpu", "--trainer.log_every_n_steps", "5"]
        args.paper_steps, args.ddp_steps = 20, 20
        # part 7 reads a run's rate between its groups' ends: image.yaml's groups of 100 need 200 steps and more
        args.run_steps, args.members, args.stacked_points, args.small_steps = 5, 2, 64, 250
        args.meta_signals = (2,)
        args.overrides_meta = [*args.overrides, "--data.init_args.train_signals", "4", "--data.init_args.test_signals", "2"]
        return 2
    args.device, args.accelerator, args.steps, args.warmup, args.repeats, args.points = "cuda", "gpu", 50, 10, 3, 2**20
    args.overrides, args.overrides_paper, args.trainer = [], [], ["--trainer.devices", "1"]
    args.paper_steps, args.ddp_steps, args.run_steps = 2000, 300, 300
    args.members, args.stacked_points, args.small_steps = 8, 128 * 128, 500
    args.meta_signals, args.overrides_meta = (4, 32), []
    return gpus


def main(argv=None) -> None:
    global REPORT
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="run every part on the CPU with tiny sizes")
    parser.add_argument("--parts", nargs="+", default=None, help="only the parts whose names start with these (e.g. 7 1)")
    parser.add_argument("--out", default="gpu_check", help="folder of gpu_check.json and gpu_check.md (default ./gpu_check)")
    parser.add_argument("--minutes", type=float, default=8.0, help="time budget: parts that would pass it are skipped")
    args = parser.parse_args(argv)
    quiet()
    as_train_py()
    gpus = torch.cuda.device_count()
    if gpus == 0 and not args.dry_run:
        print("gpu_check: no CUDA device on this machine (torch.cuda.device_count() = 0): nothing measured", file=sys.stderr)
        sys.exit(1)
    ddp_devices = configure(args, gpus)
    device = "CPU (dry run: nothing worth reading)" if args.dry_run else f"{gpus} × {torch.cuda.get_device_name(0)}"
    if not args.dry_run:
        print(f"gpu_check: {device}, torch {torch.__version__}")
    REPORT = Report(Path(args.out), device)
    L.seed_everything(0, verbose=False)
    start = time.perf_counter()
    parts = [  # what the docs wait for first, the quick parts first among them
        ("2. hash encoding", lambda: hashgrid_points_per_second(args)),
        ("3. paper protocol", lambda: paper_mapping(args)),
        ("6. stacked members", lambda: stacked_part(args)),
        ("7. small steps", lambda: small_steps(args)),
        ("1. image.yaml step", lambda: step_ratios("image.yaml", args)),
        ("1. volume.yaml step", lambda: step_ratios("volume.yaml", args)),
        *((f"5. {c} as run", lambda c=c: as_users_run(c, args)) for c in ("image.yaml", "volume.yaml", "image_paper.yaml")),
        ("8. meta-learning", lambda: meta_part(args)),
    ]
    if ddp_devices > 1:
        parts.insert(4, ("4. DDP", lambda: ddp_throughput(args, ddp_devices)))
    else:
        print("\n4. DDP: one GPU only, nothing to compare")
        REPORT.status("4. DDP", "not run: one GPU")
    if args.parts is not None:
        names = [name for name, _ in parts]
        parts = [(name, part) for name, part in parts if name.startswith(tuple(args.parts))]
        if not parts:
            parser.error(f"--parts {' '.join(args.parts)}: no part starts so; the parts: {', '.join(names)}")
    failed = []
    for name, part in parts:
        if not args.dry_run and time.perf_counter() - start + planned(name) > 60 * args.minutes:
            REPORT.status(name, f"skipped: the {args.minutes:g}-minute budget")
            print(f"\n{name}: skipped, the {args.minutes:g}-minute budget would be passed", flush=True)
        elif not run_part(name, part):
            failed.append(name)
        REPORT.write()
    print(f"\ngpu_check: done in {time.perf_counter() - start:.0f} s" + (f"; failed: {', '.join(failed)}" if failed else ""))
    print(f"gpu_check: {REPORT.out / 'gpu_check.json'} and {REPORT.out / 'gpu_check.md'}")
    if failed:
        sys.exit(1)


def planned(name: str) -> float:
    """The planned seconds of a part (``PLANNED``, by its number; part 1 and 5 per config)."""
    return PLANNED.get(name.split(".")[0], 60)


def run_part(name: str, part) -> bool:
    """One part; a failure is reported with its traceback and the remaining parts still run (a GPU lease is
    short: one broken part should not cost the others' figures)."""
    t0 = time.perf_counter()
    try:
        part()
    except Exception:  # noqa: BLE001 - reported, and the exit status says so
        print(f"\n{name}: FAILED\n{traceback.format_exc()}", flush=True)
        REPORT.status(name, f"failed: {traceback.format_exc().strip().splitlines()[-1]}", time.perf_counter() - t0)
        return False
    seconds = time.perf_counter() - t0
    REPORT.status(name, "done", seconds)
    print(f"({name}: {seconds:.0f} s)", flush=True)
    return True


if __name__ == "__main__":
    main()
