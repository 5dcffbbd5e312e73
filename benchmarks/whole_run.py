"""Framework tax as users pay it: whole ``train.py`` runs against a hand-written loop timed in the same process
right before and right after.

    python benchmarks/whole_run.py [--configs image.yaml volume.yaml] [--steps 100] [--repeats 5] [--threads 1]
    python benchmarks/whole_run.py --configs volume.yaml --profile      # where a whole run's extra time goes
    python benchmarks/whole_run.py --configs volume.yaml --interleaved  # hand steps inside the run, between its steps

Variants (``--variants``): the command as configured; the same with the training step as it was before it
logged only the steps that reach the logger (``before``: restored in this process by patching two methods);
the command without the config's callbacks (``bare``).

Each repeat runs, back to back in one process: the hand loop, then the command itself (``inr.run.cli.cli_main``,
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
Both run with the malloc thresholds ``train.py`` sets (``inr.io.allocator``), set once for this process.

``--interleaved``: the machine's speed drifts by several percent between the hand loops before and after a run
(they differ by up to 10 % here), which a ratio against their mean only partly cancels. This measure puts the
hand loop inside the run instead: after every ``--every``-th training step (from the 10th on) a callback runs
``--hand-burst`` steps of the hand loop on its own copy of the encoder and network (the config's optimizer, the
same data), timed, so both are timed within milliseconds of each other in one process state. The run's step
is the mean gap between consecutive training-batch starts with the callback's own time taken out (logging
steps, epoch-end checkpoints and every callback of the config included); ratio = that mean over the hand
steps' mean, then median and range over the repeats. The run's later steps each follow hand steps rather than
their own previous step; the two loops' tensor work is the same, so that touches both alike.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import logging
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.io.allocator import retain_freed_memory
from inr.run.cli import build_cli, cli_main, resolve_config_names

warnings.filterwarnings("ignore")
for _name in ("lightning.pytorch", "lightning.fabric"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def encoded_full_batch(encoder, dm) -> tuple[torch.Tensor, torch.Tensor]:
    """(encoded coordinates, values) of the whole training split, encoded once without gradients: the fixed
    full batch of ``batch_size: null``, as the framework caches it."""
    with torch.no_grad():
        return encoder(dm.grid.coords(dm.train_index)), dm.values[dm.train_index]


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
        encoded, target = encoded_full_batch(encoder, dm)
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


def run_command(config: str, steps: int, extra: list[str], run_dir: str):
    """``train.py --config config`` for ``steps`` steps into ``run_dir`` (the logger's, or the run's own with
    ``--trainer.logger false`` among ``extra``), its output thrown away; the CLI object, or an exit with the
    output's end when the run did not finish."""
    save = ["--trainer.logger.init_args.save_dir", run_dir, "--trainer.default_root_dir", run_dir]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        cli = cli_main(["--config", config, "--trainer.max_steps", str(steps), *save, *extra])
    if cli is None or cli.trainer.global_step != steps:
        raise SystemExit(f"{config}: the run did not finish:\n{sink.getvalue()[-2000:]}")
    return cli


def whole_run(config: str, steps: int, extra: list[str]) -> tuple[float, float]:
    """(seconds per step as logged, seconds of the whole command per step) of one ``train.py`` run."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        cli = run_command(config, steps, extra, tmp)
        total = time.perf_counter() - start
        step, _ = logged_step_times(Path(cli.trainer.log_dir))
    return step, total / steps


class InterleavedHandLoop(Callback):
    """After every ``every``-th training step from ``start`` on, ``burst`` timed steps of the hand loop on a
    copy of the run's encoder and network with their own optimizer; records the run's batch starts and the
    time taken out after each step, so the run's own step times can be formed without the hand steps."""

    def __init__(self, every: int = 5, burst: int = 5, start: int = 10, model=None, dm=None) -> None:
        self.every, self.burst, self.start = every, burst, start
        self.model, self.dm = model, dm  # default: the run's own task and DataModule
        self.batch_starts: list[float] = []
        self.taken_out: list[float] = []
        self.hand_steps: list[float] = []

    def on_train_start(self, trainer, pl_module) -> None:
        model = self.model or pl_module
        self.dm = self.dm or trainer.datamodule
        self.encoder, self.network = copy.deepcopy(model.encoder), copy.deepcopy(model.network)
        self.loss_fn = model.loss
        self.optimizer = model.optimizer_factory(self.network.parameters())
        self.generator = torch.Generator().manual_seed(1)
        self.fixed = encoded_full_batch(self.encoder, self.dm) if self.dm.batch_size is None else None

    def on_train_batch_start(self, trainer, *args) -> None:
        self.batch_starts.append(time.perf_counter())

    def on_train_batch_end(self, trainer, *args) -> None:
        step = trainer.global_step
        if step < self.start or step % self.every:
            self.taken_out.append(0.0)
            return
        dm = self.dm
        begin = time.perf_counter()
        for _ in range(self.burst):
            if self.fixed is not None:
                encoded, target = self.fixed
            else:
                index = dm.train_index[torch.randint(len(dm.train_index), (dm.batch_size,), generator=self.generator)]
                encoded, target = self.encoder(dm.grid.coords(index)), dm.values[index]
            loss = self.loss_fn(self.network(encoded), target)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
        spent = time.perf_counter() - begin
        self.hand_steps.append(spent / self.burst)
        self.taken_out.append(spent)

    def run_step(self) -> float:
        """Mean seconds per training step of the run from ``start`` on, the hand steps taken out."""
        starts = self.batch_starts
        gaps = [b - a - out for a, b, out in zip(starts[:-1], starts[1:], self.taken_out)]
        return statistics.mean(gaps[self.start :])


def interleaved_run(config: str, steps: int, every: int, burst: int, extra: list[str]) -> tuple[float, float]:
    """(seconds per step of the run, of the hand loop) from one ``train.py`` run with the hand loop inside."""
    from inr import cli as cli_module

    probe = InterleavedHandLoop(every, burst)
    original = cli_module.INRCLI.instantiate_trainer

    def with_probe(self, **kwargs):
        trainer = original(self, **kwargs)
        trainer.callbacks.insert(0, probe)  # first: its batch start is the earliest hook of each step
        return trainer

    cli_module.INRCLI.instantiate_trainer = with_probe
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_command(config, steps, extra, tmp)
    finally:
        cli_module.INRCLI.instantiate_trainer = original
    return probe.run_step(), statistics.mean(probe.hand_steps)


def interleaved_lightning_alone(config: str, steps: int, every: int, burst: int) -> tuple[float, float]:
    """(seconds per step, of the hand loop) of Lightning alone: the hand loop's step as the ``training_step``
    of a bare module fed index batches by a plain DataLoader (``training_step.py``'s), no logger, checkpoints,
    progress bar or callbacks; the hand loop interleaved as in ``interleaved_run``."""
    from training_step import BareModule, HandBatches, instantiate

    class Bare(BareModule):
        """A fixed full batch encoded once, as the hand loop and the framework do; random batches as given."""

        def training_step(self, index: torch.Tensor, batch_idx: int) -> torch.Tensor:
            if self.dm.batch_size is not None:
                return super().training_step(index, batch_idx)
            if getattr(self, "fixed", None) is None:
                self.fixed = encoded_full_batch(self.encoder, self.dm)
            return self.loss_fn(self.network(self.fixed[0]), self.fixed[1])

    model, dm, _ = instantiate(config)
    dm.setup("fit")
    probe = InterleavedHandLoop(every, burst, model=model, dm=dm)
    trainer = L.Trainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[probe],
    )
    loader = torch.utils.data.DataLoader(HandBatches(dm, steps + 1), batch_size=None)
    trainer.fit(Bare(model, dm), train_dataloaders=loader)
    return probe.run_step(), statistics.mean(probe.hand_steps)


def bench_interleaved(config: str, args) -> None:
    rows = {}
    for _ in range(args.repeats):
        for key in args.variants:
            name, extra, context = VARIANTS[key]
            with context():
                if key == "lightning":
                    run, hand = interleaved_lightning_alone(config, args.steps, args.every, args.hand_burst)
                else:
                    run, hand = interleaved_run(config, args.steps, args.every, args.hand_burst, extra)
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
        ratios = [r / h for r, h in pairs]
        print(
            f"| {name} | {statistics.median(h for _, h in pairs) * 1e3:.2f} | "
            f"{statistics.median(r for r, _ in pairs) * 1e3:.2f} | "
            f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f}) |"
        )


ISOLATED = ["--trainer.callbacks", "null", "--trainer.enable_checkpointing", "false", "--trainer.enable_progress_bar", "false"]


@contextlib.contextmanager
def patched(part: str):
    """The run with one part of the training step replaced by nothing: ``metric`` (the training metrics'
    per-step update) or ``guard`` (the non-finite loss check before backward)."""
    from torchmetrics import MetricCollection

    from inr.tasks.guards import NonFiniteLossGuard

    owner, name = {"metric": (MetricCollection, "update"), "guard": (NonFiniteLossGuard, "on_before_backward")}[part]
    saved = owner.__dict__[name]
    setattr(owner, name, lambda *args, **kwargs: None)
    try:
        yield
    finally:
        setattr(owner, name, saved)


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
    # the task's training step alone: no config callbacks, checkpoints or progress bar (the logger stays)
    "isolated": ("train.py, no callbacks, checkpoints or progress bar", ISOLATED, contextlib.nullcontext),
    # one part left out at a time (--interleaved): the logger, checkpointing, the progress bar; and, from the
    # isolated step, the training metric's update or the non-finite guard (patched out in this process)
    "no_logger": ("train.py without its logger", ["--trainer.logger", "false"], contextlib.nullcontext),
    "no_checkpoints": ("train.py without checkpoints", ["--trainer.enable_checkpointing", "false"], contextlib.nullcontext),
    "no_bar": ("train.py without the progress bar", ["--trainer.enable_progress_bar", "false"], contextlib.nullcontext),
    "isolated_no_metric": ("the isolated step without the training metric's update", ISOLATED, lambda: patched("metric")),
    "isolated_no_guard": ("the isolated step without the non-finite guard", ISOLATED, lambda: patched("guard")),
    # --interleaved only: the hand loop's step in a bare LightningModule (what Lightning's loop itself costs)
    "lightning": ("Lightning alone (the hand loop's step in a bare module)", [], contextlib.nullcontext),
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
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=["configured", "before", "bare"])
    parser.add_argument("--profile", action="store_true", help="cProfile one run of each config instead")
    parser.add_argument("--interleaved", action="store_true", help="the hand loop inside each run instead")
    parser.add_argument("--every", type=int, default=5, help="--interleaved: hand steps after every N-th step")
    parser.add_argument("--hand-burst", type=int, default=5, help="--interleaved: hand steps each time")
    args = parser.parse_args()
    if "lightning" in args.variants and not args.interleaved:
        parser.error("the variant 'lightning' is measured with --interleaved only")
    if "no_logger" in args.variants and not args.interleaved:
        parser.error("the variant 'no_logger' is measured with --interleaved only (the other measure reads the logs)")
    # train.py's malloc thresholds (inr.io.allocator) for the whole process: the command sets them when it
    # starts, and the hand loops that run before and after it in this process must run with the same ones
    retain_freed_memory()
    if args.threads:
        torch.set_num_threads(args.threads)
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
