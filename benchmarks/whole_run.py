"""Framework tax as users pay it: whole ``train.py`` runs against a hand-written loop timed in the same process
right before and right after.

    python benchmarks/whole_run.py [--configs image.yaml volume.yaml] [--steps 100] [--repeats 5] [--threads 1]
    python benchmarks/whole_run.py --configs volume.yaml --profile      # where a whole run's extra time goes

Variants (``--variants``): the command as configured; the same with the training step as it was before it
logged only the steps that reach the logger (``before``: restored in this process by patching two methods);
the command without the config's callbacks (``bare``).

Each repeat runs, back to back in one process: the hand loop, then the command itself (``inr.cli.cli_main``,
what ``python train.py --config C`` runs: the config's callbacks, TensorBoard logging, validation, checkpoints,
the run lock and the closing summary; ``--trainer.max_steps`` set, the progress bar on and its output thrown
away), then the hand loop again. Per run:

  - step as users pay it: s = (t_last − t_first) / (k_last − k_first) from the wall times TensorBoard recorded
    with the logged ``train/loss`` (k = step), so every periodic cost in between (validation, callbacks,
    logging, epoch-end checkpoints) is in it;
  - the whole command: its wall time from the call to the summary line, over the steps; start-up (parsing,
    building, the data's first read) and the closing evaluation included, so it falls as the run grows.

The hand loop is what a user would write for the same training: the config's encoder, network, loss and Adam
on the config's data, a fixed full batch encoded once (as the framework does), random batches drawn and
encoded every step; no validation, no logging. Its step is its wall time over its steps. Ratios are formed
within a repeat against the mean of the two hand loops around the run, then their median and range over the
repeats are printed (the shared machine's speed drifts between repeats by more than the differences here).
Both run with the malloc thresholds ``train.py`` sets (``inr.run.allocator``), set once for this process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import lightning as L
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.cli import build_cli, cli_main, resolve_config_names
from inr.run.allocator import retain_freed_memory

warnings.filterwarnings("ignore")
for _name in ("lightning.pytorch", "lightning.fabric"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def hand_loop(config: str, steps: int, warmup: int) -> float:
    """Seconds per step of the hand-written loop over ``steps`` steps after ``warmup`` untimed ones."""
    cli = build_cli(resolve_config_names(["--config", config, "--trainer.logger", "false"]))
    model, dm = cli.model, cli.datamodule
    dm.setup("fit")
    encoder, network, loss_fn = model.encoder, model.network, model.loss
    opt = model.optimizer_factory(network.parameters())  # the config's optimizer (Adam, its lr)
    train_index, values, grid = dm.train_index, dm.values, dm.grid
    gen = torch.Generator().manual_seed(0)
    full = dm.batch_size is None
    if full:
        with torch.no_grad():
            encoded, target = encoder(grid.coords(train_index)), values[train_index]
    for i in range(warmup + steps):
        if i == warmup:
            start = time.perf_counter()
        if not full:
            index = train_index[torch.randint(len(train_index), (dm.batch_size,), generator=gen)]
            encoded, target = encoder(grid.coords(index)), values[index]
        loss = loss_fn(network(encoded), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps


def logged_step_times(run: Path) -> tuple[float, int]:
    """(seconds per step between the first and the last logged ``train/loss``, steps between them)."""
    (event_file,) = run.glob("events.out.tfevents.*")
    acc = EventAccumulator(str(event_file), size_guidance={"scalars": 0})
    acc.Reload()
    events = acc.Scalars("train/loss")
    first, last = events[0], events[-1]
    return (last.wall_time - first.wall_time) / (last.step - first.step), last.step - first.step


def whole_run(config: str, steps: int, extra: list[str]) -> tuple[float, float]:
    """(seconds per step as logged, seconds of the whole command per step) of one ``train.py`` run."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--config", config, "--trainer.max_steps", str(steps), "--trainer.logger.init_args.save_dir", tmp, *extra]
        sink = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            cli = cli_main(args)
        total = time.perf_counter() - start
        if cli is None or cli.trainer.global_step != steps:
            raise SystemExit(f"{config}: the run did not finish:\n{sink.getvalue()[-2000:]}")
        step, _ = logged_step_times(Path(cli.trainer.log_dir))
    return step, total / steps


@contextlib.contextmanager
def logging_every_step():
    """The training step as it was before it logged only the steps that reach the logger: ``self.log`` and the
    metrics' per-batch value on every step, and the occupancy IoU's per-update target check."""
    from inr.tasks import INRModule, VolumeFitting

    saved = INRModule.logs_this_step, VolumeFitting.make_train_metrics
    INRModule.logs_this_step, VolumeFitting.make_train_metrics = (lambda self: True), VolumeFitting.make_metrics
    try:
        yield
    finally:
        INRModule.logs_this_step, VolumeFitting.make_train_metrics = saved


VARIANTS = {
    "configured": ("train.py as configured", [], contextlib.nullcontext),
    "before": ("train.py as configured, logging every step (before)", [], logging_every_step),
    "bare": ("train.py, no callbacks", ["--trainer.callbacks", "null"], contextlib.nullcontext),
}


def bench(config: str, args) -> None:
    variants = {VARIANTS[key][0]: [] for key in args.variants}
    hand, whole = {k: [] for k in variants}, {k: [] for k in variants}
    for _ in range(args.repeats):
        for key in args.variants:  # hand loop, run, hand loop: each run bracketed by its own pair
            name, extra, context = VARIANTS[key]
            before = hand_loop(config, args.hand_steps, args.warmup)
            with context():
                step, total = whole_run(config, args.steps, extra)
            after = hand_loop(config, args.hand_steps, args.warmup)
            variants[name].append(step)
            hand[name].append((before + after) / 2)
            whole[name].append(total)
            drift = after / before
            print(
                f"  {config} {name}: hand {before * 1e3:.1f} / {after * 1e3:.1f} ms (after/before {drift:.2f}), "
                f"logged step {step * 1e3:.1f} ms, whole command {total * 1e3:.1f} ms/step",
                flush=True,
            )

    def cell(xs: list[float]) -> str:
        return f"{statistics.median(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})"

    print(
        f"\n{config}: {args.steps} steps per run, {args.repeats} repeats, {torch.get_num_threads()} thread(s); "
        f"hand loop {args.hand_steps} steps after {args.warmup} warm-up, before and after each run"
    )
    print(
        "| variant | hand loop step (ms) | step as logged (ms) | ratio vs hand loop (range) | whole command / hand loop (range) |"
    )
    print("|---|---:|---:|---|---|")
    for name, steps in variants.items():
        ratios = [s / h for s, h in zip(steps, hand[name])]
        wholes = [w / h for w, h in zip(whole[name], hand[name])]
        print(
            f"| {name} | {statistics.median(hand[name]) * 1e3:.1f} | {statistics.median(steps) * 1e3:.1f} | "
            f"{cell(ratios)} | {cell(wholes)} |"
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["image.yaml", "volume.yaml"])
    parser.add_argument("--steps", type=int, default=100, help="training steps of each train.py run")
    parser.add_argument("--hand-steps", type=int, default=30, help="timed steps of each hand loop")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--profile", action="store_true", help="cProfile one run of each config instead")
    args = parser.parse_args()
    # train.py's malloc thresholds (inr.run.allocator) for the whole process: the command sets them when it
    # starts, and the hand loops that run before and after it in this process must run with the same ones
    retain_freed_memory()
    if args.threads:
        torch.set_num_threads(args.threads)
    L.seed_everything(0, verbose=False)
    for config in args.configs:
        if args.profile:
            profile_whole_run(config, args.steps)
        else:
            bench(config, args)


if __name__ == "__main__":
    main()
