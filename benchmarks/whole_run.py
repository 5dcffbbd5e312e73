"""Framework tax as users pay it: whole ``train.py`` runs against a hand-written loop, in the same process.

    python benchmarks/whole_run.py [--configs image.yaml volume.yaml] [--steps 100] [--repeats 5] [--threads 1]
    python benchmarks/whole_run.py --configs volume.yaml --interleaved  # hand steps inside the run, between its steps
    python benchmarks/whole_run.py --configs volume.yaml --profile      # where a whole run's extra time goes

Variants (``--variants``): the command as configured (``configured``); the same with one or ten optimizer steps
per Lightning step (``one_step``, ``ten_steps``: ``--model.init_args.inner_steps 1`` / ``10``); without the config's callbacks (``bare``); without callbacks, checkpoints or progress bar, i.e. the task's step with its logger (``isolated``);
and, with ``--interleaved``, one part left out at a time (``no_logger``, ``no_checkpoints``, ``no_bar``) and
Lightning alone (``lightning``: the hand loop's step as the ``training_step`` of a bare module).

Each repeat runs, back to back in one process: the hand loop, then the command itself (``inr.run.cli.cli_main``,
what ``python train.py --config C`` runs: the config's callbacks, TensorBoard logging, validation, checkpoints,
the run lock and the closing summary; ``--trainer.max_steps`` set, the progress bar on and its output thrown
away), then the hand loop again. Per run:

  - step as users pay it: s = (t_last − t_first) / (k_last − k_first) from the wall times TensorBoard recorded
    with the logged ``train/loss`` (k = step), so every periodic cost in between (validation, callbacks,
    logging, epoch-end checkpoints) is in it;
  - the whole command: its wall time from the call to the summary line, over the steps; start-up (parsing,
    building, the data's first read) and the closing evaluation included, so it falls as the run grows.

The hand loop (``common.HandStep``) is the config's encoder, network, loss and optimizer on the config's data,
a fixed full batch encoded once (as the framework does), random batches drawn and encoded every step; no
validation, no logging. Its step is its wall time over its steps. Ratios are formed within a repeat against the
mean of the two hand loops around the run, then their median and range over the repeats are printed (the
shared machine's speed drifts between repeats by more than the differences here). Both run with the process
settings ``train.py`` makes (``common.as_train_py``), made once for this process.

``--interleaved``: the machine's speed drifts by several percent between the hand loops before and after a run
(they differ by up to 10 % here), which a ratio against their mean only partly cancels. This measure puts the
hand loop inside the run instead: after every ``--every``-th training step (from the 10th on) a callback
(``common.InterleavedHandLoop``, added to the run's callbacks on its command line) runs ``--hand-burst`` steps
of the hand loop on its own copy of the encoder and network (the config's optimizer, the same data), timed, so
both are timed within milliseconds of each other in one process state. The run's step is the mean gap between
consecutive training-batch starts with the callback's own time taken out (logging steps, epoch-end checkpoints
and every callback of the config included); ratio = that mean over the hand steps' mean, then median and range
over the repeats. The run's later steps each follow hand steps rather than their own previous step; the two
loops' tensor work is the same, so that touches both alike.
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import tempfile
from pathlib import Path

import lightning as L
import torch
import yaml
from common import (
    HandStep,
    InterleavedHandLoop,
    LightningAlone,
    StepClock,
    as_train_py,
    cell,
    hand_loop,
    instantiate,
    interleaved_command,
    lightning_alone_loader,
    quiet,
    set_threads,
    whole_run,
)

from inr.io.command_line import CommandParser
from inr.methods.training import quiet_trainer
from inr.run.cli import cli_main, resolve_config_names

ISOLATED = ["--trainer.callbacks", "null", "--trainer.enable_checkpointing", "false", "--trainer.enable_progress_bar", "false"]
VARIANTS = {  # key: (table row, the command's extra options)
    "configured": ("train.py as configured", []),
    "bare": ("train.py, no callbacks", ["--trainer.callbacks", "null"]),
    # the config as it is but one optimizer step per Lightning step (what the config's inner_steps saves)
    "one_step": ("train.py as configured, inner_steps 1", ["--model.init_args.inner_steps", "1"]),
    # the config as it is but ten optimizer steps per Lightning step
    "ten_steps": ("train.py as configured, inner_steps 10", ["--model.init_args.inner_steps", "10"]),
    # the task's training step alone: no config callbacks, checkpoints or progress bar (the logger stays)
    "isolated": ("train.py, no callbacks, checkpoints or progress bar", ISOLATED),
    # --interleaved only: one part left out at a time (the other measure reads the logger's files)
    "no_logger": ("train.py without its logger", ["--trainer.logger", "false"]),
    "no_checkpoints": ("train.py without checkpoints", ["--trainer.enable_checkpointing", "false"]),
    "no_bar": ("train.py without the progress bar", ["--trainer.enable_progress_bar", "false"]),
    # --interleaved only: the hand loop's step in a bare LightningModule (what Lightning's loop itself costs)
    "lightning": ("Lightning alone (the hand loop's step in a bare module)", None),
}
INTERLEAVED_ONLY = ("no_logger", "lightning")


def hand_loop_step(config: str, steps: int, warmup: int) -> float:
    """Seconds per step of the hand-written loop over ``steps`` steps after ``warmup`` untimed ones."""
    model, dm, _ = instantiate(config)
    return hand_loop(HandStep(model, dm), StepClock(warmup, steps, per_step=False)).step()


def logging_interval(config: str) -> int:
    """The config's ``trainer.log_every_n_steps`` (Lightning's default, 50, where it gives none)."""
    path = Path(resolve_config_names(["--config", config])[1])
    trainer = (yaml.safe_load(path.read_text()) or {}).get("trainer") or {}
    return int(trainer.get("log_every_n_steps", 50))


def readable_logging(config: str, steps: int) -> list[str]:
    """The step as logged is read between the first and the last logged ``train/loss``, so a run must log at two
    steps at least: where ``steps`` is under twice the config's interval, the run logs every ``steps // 2`` steps
    (a note says so); otherwise as configured (no option added)."""
    every = logging_interval(config)
    if steps >= 2 * every:
        return []
    if steps < 2:
        raise SystemExit(f"whole_run.py: error: --steps {steps}: a step time needs 2 steps or more")
    print(
        f"note: {config} logs train/loss every {every} steps; these {steps}-step runs log every {steps // 2}, so that two logged steps frame the step time"
    )
    return ["--trainer.log_every_n_steps", str(steps // 2)]


def bench(config: str, args) -> None:
    names = [VARIANTS[key][0] for key in args.variants]
    logging = readable_logging(config, args.steps)
    steps, hand, whole = ({name: [] for name in names} for _ in range(3))
    for _ in range(args.repeats):
        for key in args.variants:  # hand loop, run, hand loop: each run bracketed by its own pair
            name, extra = VARIANTS[key]
            before = hand_loop_step(config, args.hand_steps, args.warmup)
            step, total = whole_run(config, args.steps, [*extra, *logging])
            after = hand_loop_step(config, args.hand_steps, args.warmup)
            steps[name].append(step)
            hand[name].append((before + after) / 2)
            whole[name].append(total)
            print(
                f"  {config} {name}: hand {before * 1e3:.1f} / {after * 1e3:.1f} ms (after/before {after / before:.2f}), "
                f"logged step {step * 1e3:.1f} ms, whole command {total * 1e3:.1f} ms/step",
                flush=True,
            )
    print(
        f"\n{config}: {args.steps} steps per run, {args.repeats} repeats, {torch.get_num_threads()} thread(s); "
        f"hand loop {args.hand_steps} steps after {args.warmup} warm-up, before and after each run"
    )
    print(
        "| variant | hand loop step (ms) | step as logged (ms) | ratio vs hand loop (range) | whole command / hand loop (range) |"
    )
    print("|---|---:|---:|---|---|")
    for name in names:
        ratios = [s / h for s, h in zip(steps[name], hand[name])]
        wholes = [w / h for w, h in zip(whole[name], hand[name])]
        print(
            f"| {name} | {statistics.median(hand[name]) * 1e3:.1f} | {statistics.median(steps[name]) * 1e3:.1f} | "
            f"{cell(ratios)} | {cell(wholes)} |"
        )


def interleaved_run(config: str, args, extra: list[str]) -> tuple[float, float]:
    """(seconds per step of the run, of the hand loop) from one ``train.py`` run with the hand loop inside."""
    return interleaved_command(config, args.steps, extra, args.every, args.hand_burst)


def interleaved_lightning_alone(config: str, args) -> tuple[float, float]:
    """(seconds per step, of the hand loop) of Lightning alone (``common.LightningAlone``; no logger, checkpoints,
    progress bar or callbacks), the hand loop interleaved on its own copy as in ``interleaved_run``."""
    model, dm, _ = instantiate(config)
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "interleaved.json")
        probe = InterleavedHandLoop(out, args.every, args.hand_burst)
        probe.hand = HandStep(model, dm, seed=1, own_copy=True)
        trainer = quiet_trainer(args.steps, callbacks=[probe])
        trainer.fit(LightningAlone(HandStep(model, dm)), train_dataloaders=lightning_alone_loader(args.steps + 1))
        measured = json.loads(Path(out).read_text())
    return measured["run_step"], measured["hand_step"]


def bench_interleaved(config: str, args) -> None:
    rows: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.repeats):
        for key in args.variants:
            name, extra = VARIANTS[key]
            run, hand = interleaved_lightning_alone(config, args) if extra is None else interleaved_run(config, args, extra)
            rows.setdefault(name, []).append((run, hand))
            print(
                f"  {config} {name}: run step {run * 1e3:.2f} ms, hand step {hand * 1e3:.2f} ms, ratio {run / hand:.3f}",
                flush=True,
            )
    print(
        f"\n{config}: {args.steps} steps per run, {args.repeats} repeats, {torch.get_num_threads()} thread(s); "
        f"{args.hand_burst} hand steps after every {args.every}th step from the 10th on"
    )
    print("| variant | hand step (ms) | run step (ms) | ratio vs hand loop (range) |")
    print("|---|---:|---:|---|")
    for name, pairs in rows.items():
        print(
            f"| {name} | {statistics.median(h for _, h in pairs) * 1e3:.2f} | "
            f"{statistics.median(r for r, _ in pairs) * 1e3:.2f} | {cell([r / h for r, h in pairs])} |"
        )


def profile_whole_run(config: str, steps: int) -> None:
    """cProfile of one whole run (Python functions by own time, the 25 largest): where the framework's own
    code spends its time, beside the tensor work that the hand loop has too."""
    import cProfile
    import pstats

    with tempfile.TemporaryDirectory() as tmp:
        args = ["--config", config, "--trainer.max_steps", str(steps), "--trainer.logger.init_args.save_dir", tmp]
        profiler = cProfile.Profile()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            profiler.runcall(cli_main, args)
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)
    stats.print_callees("_call_callback_hooks|_call_lightning_module_hook")  # time per hook and callback


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["image.yaml", "volume.yaml"])
    parser.add_argument("--steps", type=int, default=100, help="training steps of each train.py run")
    parser.add_argument("--hand-steps", type=int, default=30, help="timed steps of each hand loop")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=["configured", "bare"])
    parser.add_argument("--profile", action="store_true", help="cProfile one run of each config instead")
    parser.add_argument("--interleaved", action="store_true", help="the hand loop inside each run instead")
    parser.add_argument("--every", type=int, default=5, help="--interleaved: hand steps after every N-th step")
    parser.add_argument("--hand-burst", type=int, default=5, help="--interleaved: hand steps each time")
    args = parser.parse_args()
    for key in INTERLEAVED_ONLY:
        if key in args.variants and not args.interleaved:
            parser.error(f"the variant '{key}' is measured with --interleaved only")
    quiet()
    as_train_py()
    set_threads(args.threads)
    L.seed_everything(0, verbose=False)
    for config in args.configs:
        if args.profile:
            profile_whole_run(config, args.steps)
        elif args.interleaved:
            bench_interleaved(config, args)
        else:
            bench(config, args)


if __name__ == "__main__":
    main()
