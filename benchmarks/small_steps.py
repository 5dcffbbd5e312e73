"""Small steps: where the tiny problem's time goes, train.py's logged step against a plain hand loop, part by part.

    OMP_NUM_THREADS=1 python benchmarks/small_steps.py --steps 2000 --repeats 5 --threads 1

The tiny problem as a user runs image.yaml (``common.TINY_AS_RUN``: 8×8 training pixels, 8 Gaussian features, a 2×16
MLP; K = 100 optimizer steps per Lightning step, logging every 50, validation every 100 steps, the spectrum every 10,
images and validation within the ``MonitoringBudget``'s 5 %), through ``train.py`` (``inr.run.cli.cli_main`` in this
process), its step read from the wall times TensorBoard recorded with the logged ``train/loss`` at the ends of its
groups (``common.logged_step_times``). The reference is the hand loop (``common.HandStep``: the config's encoder
applied once to the fixed full batch, its ``nn.Sequential`` network, loss and Adam, nothing else), timed before
and after each run; a ratio is the run's step over the mean of the two, formed within a repeat.

The variants take one part away at a time, each on top of the one before, so the differences between consecutive
rows are what each part costs per optimizer step:

  1. ``configured``: train.py as image.yaml runs it;
  2. ``no_callbacks``: without the config's callbacks (the budget, the image logger, the spectral measurements);
  3. ``no_validation``: and without validation (``trainer.limit_val_batches 0``);
  4. ``no_checkpoints``: and without checkpoints and the progress bar;
  5. ``two_logs``: and logging only at the two steps the window is read between (``log_every_n_steps`` = half
     the run): what is left is Lightning's loop once per group of 100 steps and the framework's steps;
  6. ``task_step``: the framework's own optimizer step called by hand, outside Lightning (``TaskStep``: the task's
     ``step_loss`` (field through its cached encoding, measurement, loss), backward, the optimizer): what the
     framework's step costs without Lightning, the training metrics, the guard or the callbacks.

``--account``: one run as configured with a timer around each piece of the work (``ACCOUNTED``: the function is
unchanged, the timer adds two clock reads), read between the ends of the run's second and last groups, as the
logged step is: per optimizer step, the time of each piece inside the groups (the step's batch, forward and loss,
backward, the optimizer, the bookkeeping between steps: metrics, guard, the callbacks' between-step hooks), what is
left of ``run_group`` around them, and the time outside the groups (Lightning's loop, validation, the callbacks'
batch and epoch hooks, the logger's writes), against the hand loop timed before and after the run.
"""

from __future__ import annotations

import statistics
import time

import lightning as L
import torch
from common import TINY_AS_RUN, HandStep, StepClock, as_train_py, cell, hand_loop, instantiate, quiet, set_threads, whole_run

from inr.io.command_line import CommandParser
from inr.tasks.optimizers import make_optimizer

CONFIG = "image.yaml"
NO_CALLBACKS = ["--trainer.callbacks", "null"]
NO_VALIDATION = [*NO_CALLBACKS, "--trainer.limit_val_batches", "0"]
NO_CHECKPOINTS = [*NO_VALIDATION, "--trainer.enable_checkpointing", "false", "--trainer.enable_progress_bar", "false"]
VARIANTS = {  # key: (table row, train.py's extra options; None: the task's step by hand)
    "configured": ("train.py as configured", []),
    "no_callbacks": ("without the config's callbacks (budget, images, spectral)", NO_CALLBACKS),
    "no_validation": ("and without validation", NO_VALIDATION),
    "no_checkpoints": ("and without checkpoints and progress bar", NO_CHECKPOINTS),
    "two_logs": ("and logging at the window's two ends only", NO_CHECKPOINTS),  # + log_every_n_steps: steps // 2
    "task_step": ("the framework's step by hand, outside Lightning", None),
}


class TaskStep:
    """The framework's own optimizer step called by hand: ``task.step_loss`` on the full training batch (its field
    through the encoding the task caches, its measurement and loss), backward, the config's optimizer."""

    def __init__(self, model, dm) -> None:
        dm.setup("fit")
        model.attach_data(dm)
        self.task, self.batch = model, dm.gather(None, torch.device("cpu"))
        self.optimizer = make_optimizer(model.optimizer_factory, [p for p in model.parameters() if p.requires_grad])

    def step(self) -> None:
        out = self.task.step_loss(self.batch)
        self.optimizer.zero_grad(set_to_none=True)
        out.loss.backward()
        self.optimizer.step()


def timed(stepper, steps: int, warmup: int) -> float:
    return hand_loop(stepper, StepClock(warmup, steps, per_step=False)).step()


def hand_step(steps: int, warmup: int) -> float:
    model, dm, _ = instantiate(CONFIG, TINY_AS_RUN)
    return timed(HandStep(model, dm), steps, warmup)


def variant_step(key: str, args) -> float:
    """Seconds per optimizer step of one variant."""
    _, extra = VARIANTS[key]
    if extra is None:
        model, dm, _ = instantiate(CONFIG, TINY_AS_RUN)
        return timed(TaskStep(model, dm), args.hand_steps, args.warmup)
    if key == "two_logs":
        extra = [*extra, "--trainer.log_every_n_steps", str(args.steps // 2)]
    step, _ = whole_run(CONFIG, args.steps, [*TINY_AS_RUN, *extra])
    return step


def accounted() -> list[tuple[str, object, str]]:
    """(row, owner, attribute) of every timed piece; nested pieces are listed inside what holds them."""
    from lightning.pytorch.loggers import TensorBoardLogger
    from lightning.pytorch.loops import evaluation_loop
    from lightning.pytorch.trainer import call

    from inr.callbacks.spectral import SpectralBiasCallback
    from inr.data.module import BatchGroup
    from inr.run.progress import ProgressBar
    from inr.run.saving import RunCheckpoint
    from inr.run.signals import GracefulStop
    from inr.tasks import steps
    from inr.tasks.base import INRModule
    from inr.tasks.guards import NonFiniteLossGuard

    return [
        ("in groups: the rest of run_group (its own bookkeeping)", steps, "run_group"),
        ("in groups: the step's batch (BatchGroup[j])", BatchGroup, "__getitem__"),
        ("in groups: forward and loss (task.step_loss)", INRModule, "step_loss"),
        ("in groups: backward (task.backward)", INRModule, "backward"),
        ("in groups: optimizer step", torch.optim.Adam, "step"),
        ("in groups: zero_grad", torch.optim.Optimizer, "zero_grad"),
        ("in groups: training metrics, a step kept", steps.GroupMetrics, "add"),
        ("in groups: training metrics, updated at the group's end", steps.GroupMetrics, "flush"),
        ("in groups: logging steps' values", INRModule, "group_log_values"),
        ("in groups: logging steps to Lightning's log", INRModule, "log_group"),
        ("in groups: the non-finite guard", NonFiniteLossGuard, "watch_group"),
        ("in groups: between steps, GracefulStop", GracefulStop, "on_inner_step_end"),
        ("in groups: between steps, RunCheckpoint", RunCheckpoint, "on_inner_step_end"),
        ("in groups: between steps, ProgressBar", ProgressBar, "on_inner_step_end"),
        ("in groups: between steps, SpectralBiasCallback", SpectralBiasCallback, "on_inner_step_end"),
        ("outside: validation", evaluation_loop._EvaluationLoop, "run"),
        ("outside: callbacks, on_train_batch_end", call, "_call_callback_hooks:on_train_batch_end"),
        ("outside: callbacks, on_train_epoch_end", call, "_call_callback_hooks:on_train_epoch_end"),
        ("outside: callbacks, other hooks", call, "_call_callback_hooks"),
        ("outside: TensorBoard writes", TensorBoardLogger, "log_metrics"),
    ]


class Accounts:
    """Timers around the pieces of ``accounted()``, each charged its own time only (what a timed piece inside it took
    goes to that piece), and a snapshot of the totals at every group's end."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.snapshots: list[tuple[float, dict[str, float]]] = []
        self.restore: list[tuple[object, str, object]] = []
        self.hooks: dict[str, str] = {}
        self.stack: list[list[float]] = []  # [start, time of the timed pieces inside] of each open timer

    def charge(self, row: str, run, *args, **kwargs):
        self.stack.append([time.perf_counter(), 0.0])
        try:
            return run(*args, **kwargs)
        finally:
            start, inner = self.stack.pop()
            elapsed = time.perf_counter() - start
            self.totals[row] = self.totals.get(row, 0.0) + elapsed - inner
            if self.stack:
                self.stack[-1][1] += elapsed

    def wrap(self, row: str, owner: object, attribute: str) -> None:
        name, _, hook = attribute.partition(":")
        if hook:  # one hook of Lightning's callback-hook caller (the others under its own row)
            self.hooks[hook] = row
            return
        original = getattr(owner, name)
        if name == "_call_callback_hooks":

            def timed(trainer, hook_name, *args, **kwargs):
                return self.charge(self.hooks.get(hook_name, row), original, trainer, hook_name, *args, **kwargs)

        elif name == "run_group":  # a group ends: the totals so far

            def timed(*args, **kwargs):
                try:
                    return self.charge(row, original, *args, **kwargs)
                finally:
                    self.snapshots.append((time.perf_counter(), dict(self.totals)))

        else:

            def timed(*args, **kwargs):
                return self.charge(row, original, *args, **kwargs)

        self.restore.append((owner, name, original))
        setattr(owner, name, timed)

    def undo(self) -> None:
        for owner, name, original in reversed(self.restore):
            setattr(owner, name, original)


HAND_PIECES = {  # the hand loop's pieces beside the framework's
    "forward and loss": "in groups: forward and loss (task.step_loss)",
    "zero_grad": "in groups: zero_grad",
    "backward": "in groups: backward (task.backward)",
    "optimizer step": "in groups: optimizer step",
}


def hand_pieces(steps: int, warmup: int) -> dict[str, float]:
    """Seconds per step of each piece of the hand loop's step (``HandStep.step`` written out with clock reads)."""
    model, dm, _ = instantiate(CONFIG, TINY_AS_RUN)
    hand = HandStep(model, dm)
    totals = dict.fromkeys(HAND_PIECES, 0.0)
    for i in range(warmup + steps):
        marks = [time.perf_counter()]
        loss = hand.loss()
        marks.append(time.perf_counter())
        hand.optimizer.zero_grad(set_to_none=True)
        marks.append(time.perf_counter())
        loss.backward()
        marks.append(time.perf_counter())
        hand.optimizer.step()
        marks.append(time.perf_counter())
        if i >= warmup:
            for key, a, b in zip(HAND_PIECES, marks, marks[1:]):
                totals[key] += b - a
    return {HAND_PIECES[key]: t / steps for key, t in totals.items()}


def account(args) -> None:
    """One run as configured with every piece timed; per optimizer step between its second and last group ends."""
    hand_before = hand_step(args.hand_steps, args.warmup)
    accounts = Accounts()
    for row, owner, attribute in sorted(accounted(), key=lambda r: ":" not in r[2]):  # the hooks' names first
        accounts.wrap(row, owner, attribute)
    try:
        step, _ = whole_run(CONFIG, args.steps, TINY_AS_RUN)
    finally:
        accounts.undo()
    hand_after = hand_step(args.hand_steps, args.warmup)
    pieces_of_hand = hand_pieces(args.hand_steps, args.warmup)
    hand = (hand_before + hand_after) / 2
    (t0, first), (t1, last) = accounts.snapshots[0], accounts.snapshots[-1]
    n = GROUP * (len(accounts.snapshots) - 1)
    per_step = {row: (last.get(row, 0.0) - first.get(row, 0.0)) / n for row in last}
    window = (t1 - t0) / n
    print(
        f"\ntiny problem, train.py as configured, {args.steps} steps, {torch.get_num_threads()} thread(s): step as logged "
        f"{step * 1e3:.3f} ms, the window between group ends {window * 1e3:.3f} ms per step; hand loop {hand * 1e3:.3f} ms "
        f"({hand_before * 1e3:.3f} before, {hand_after * 1e3:.3f} after the run)"
    )
    print("| piece (its own time) | µs per optimizer step | the hand loop's (µs) | share of the hand step |")
    print("|---|---:|---:|---:|")
    rows = [*per_step.items(), ("outside: the rest (Lightning's loop, loaders, untimed hooks)", window - sum(per_step.values()))]
    for row, t in rows:
        mine = pieces_of_hand.get(row)
        print(f"| {row} | {t * 1e6:.1f} | {'' if mine is None else f'{mine * 1e6:.1f}'} | {t / hand:.3f} |", flush=True)
    print(f"| total: the window | {window * 1e6:.1f} | {hand * 1e6:.1f} | {window / hand:.3f} |", flush=True)


GROUP = 100  # image.yaml's inner_steps


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="optimizer steps of each train.py run (≥ 2 groups of 100)")
    parser.add_argument("--hand-steps", type=int, default=500, help="timed steps of each hand loop and task-step loop")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--account", action="store_true", help="time each piece of one configured run instead")
    args = parser.parse_args()
    quiet()
    as_train_py()
    set_threads(args.threads)
    L.seed_everything(0, verbose=False)
    if args.account:
        account(args)
        return
    ratios: dict[str, list[float]] = {key: [] for key in args.variants}
    steps: dict[str, list[float]] = {key: [] for key in args.variants}
    hands: list[float] = []
    for repeat in range(args.repeats):
        for key in args.variants:  # hand loop, variant, hand loop
            before = hand_step(args.hand_steps, args.warmup)
            step = variant_step(key, args)
            after = hand_step(args.hand_steps, args.warmup)
            hand = (before + after) / 2
            ratios[key].append(step / hand)
            steps[key].append(step)
            hands.append(hand)
            print(
                f"  repeat {repeat + 1} {key}: hand {before * 1e3:.3f} / {after * 1e3:.3f} ms, step {step * 1e3:.3f} ms, "
                f"ratio {step / hand:.3f}",
                flush=True,
            )
    print(
        f"\ntiny problem ({CONFIG} + TINY_AS_RUN), {args.steps} steps per run, {args.repeats} repeats, "
        f"{torch.get_num_threads()} thread(s); hand loop {statistics.median(hands) * 1e3:.3f} ms per step (median)"
    )
    print("| variant | step (ms) | ratio vs hand loop (range) | this part (ratio points, median of paired differences) |")
    print("|---|---:|---|---|")
    previous = None
    for key in args.variants:
        part = ""
        if previous is not None:
            part = f"{statistics.median(a - b for a, b in zip(ratios[previous], ratios[key])):+.3f} (the part taken away)"
        print(f"| {VARIANTS[key][0]} | {statistics.median(steps[key]) * 1e3:.3f} | {cell(ratios[key])} | {part} |", flush=True)
        previous = key


if __name__ == "__main__":
    main()
