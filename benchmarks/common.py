"""What the benchmark scripts share: a config's model and data built as train.py builds them, the hand-written
reference step, the step clocks, the framework's and Lightning's timed fits, whole ``train.py`` runs, the
interleaving of variants, the ratio cells of the tables and the common command-line options.

Every script compares variants measured side by side in one process: each repeat runs every variant once,
in turn, so a drift of the shared machine's speed touches them alike; a ratio is formed within a repeat
(variant / reference of the same repeat), then its median and range over the repeats are printed.

The reference is a hand-written PyTorch loop (``HandStep``), one for both kinds of step a config can have:
with ``batch_size: null`` the whole training split every step, encoded once without gradients (as the task
caches a fixed encoding); otherwise ``batch_size`` random training points per step, their coordinates computed
and encoded. It runs the config's own encoder, network, loss and optimizer, and nothing else: no metrics,
logging, hooks or guard. Scripts whose step is of another kind (an inverse problem's operator, a radiance
field's renderer) write theirs out and say why. Scripts that time plain torch code (an encoding, a network's
step on its own, the NTK, an allocator setting) need none of this and do not import it.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import resource
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Optional, TypeVar

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import ProgressBar

from inr.encoders import GaussianEncoding
from inr.io.allocator import retain_freed_memory
from inr.methods.training import quiet_trainer, silence_lightning
from inr.networks import MLP
from inr.run.cli import build_cli, cli_main, resolve_config_names
from inr.run.gpu_probe import skip_failing_gpu_probe
from inr.tasks.members import build_members
from inr.tasks.optimizers import make_optimizer

T = TypeVar("T")

# --tiny, the row "as a user runs it": the tiny problem of the default image config, 8×8 training pixels
# (a 16² image, every other pixel), 8 Gaussian features and a 2×16 MLP, trained by train.py with everything the
# config turns on (its callbacks, validation, checkpoints, logger and progress bar)
TINY_AS_RUN = [
    "--data.init_args.resolution",
    "16",
    "--model.init_args.encoder.init_args.num_features",
    "8",
    "--model.init_args.network.init_args.width",
    "16",
    "--model.init_args.network.init_args.depth",
    "2",
]


# --- the process -----------------------------------------------------------------------------------------
def quiet() -> None:
    """No Lightning notices (a Trainer's banner per timed fit) and no warnings: they would bury the tables."""
    silence_lightning()
    warnings.filterwarnings("ignore")


def as_train_py(glibc_defaults: bool = False) -> bool:
    """The process settings ``train.py`` makes when it starts (``inr.run.cli.cli_main``), made once for this whole
    process so that the hand loop and the framework run under the same ones: glibc's malloc thresholds
    (``inr.io.allocator``; unless ``glibc_defaults``) and, without a CUDA device, no NVML probe per optimizer
    step (``inr.run.gpu_probe``). Returns whether the malloc thresholds were set."""
    skip_failing_gpu_probe()
    return False if glibc_defaults else retain_freed_memory()


def add_step_arguments(parser: argparse.ArgumentParser, steps: int = 20, warmup: int = 3, repeats: int = 5) -> None:
    """``--steps``, ``--warmup``, ``--repeats`` and ``--threads``: the options of every step benchmark."""
    parser.add_argument("--steps", type=int, default=steps, help="timed steps of each run")
    parser.add_argument("--warmup", type=int, default=warmup, help="untimed steps before them")
    parser.add_argument("--repeats", type=int, default=repeats, help="interleaved repeats of every variant")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")


def add_override_argument(parser: argparse.ArgumentParser, example: str) -> None:
    """``--override KEY VALUE ...``: config overrides applied to every variant, the hand loop's included (last
    option: it takes the rest of the command line)."""
    parser.add_argument("--override", nargs=argparse.REMAINDER, default=[], help=f"config overrides, e.g. {example}")


def set_threads(threads: Optional[int]) -> None:
    if threads:
        torch.set_num_threads(threads)


# --- a config's model and data ---------------------------------------------------------------------------
def instantiate(config: str, extra: Sequence[str] = ()) -> tuple[Any, Any, list[L.Callback]]:
    """Model, DataModule and the config's own callbacks (those of ``inr.callbacks``; no checkpointing or
    progress bar, which every timed variant here runs without), built from ``config`` and the options ``extra``
    (overlays too: ``--config methods/siren.yaml``) as ``train.py`` builds them; no logger (the timed fits make
    their own Trainers)."""
    cli = build_cli(resolve_config_names(["--config", config, *extra, "--trainer.logger", "false"]))
    callbacks = [
        cb for cb in cli.trainer.callbacks if type(cb).__module__.startswith("inr.callbacks") and not isinstance(cb, ProgressBar)
    ]
    return cli.model, cli.datamodule, callbacks


class HandStep:
    """The hand-written reference step of a config's model: its encoder, network, loss and optimizer in plain
    PyTorch on its data, nothing else.

    Batches as the framework draws them: with ``batch_size: null`` the whole training split, encoded once
    without gradients (as ``INRModule.cache_encoding`` does for an encoder without trainable parameters) unless
    ``encode_every_step``; otherwise ``batch_size`` random training points per step (a generator seeded by
    ``seed`` on ``device``), their coordinates computed and encoded. ``own_copy``: train deep copies of the
    encoder and network (beside a run that trains the originals).
    """

    def __init__(
        self, model, dm, device: str = "cpu", encode_every_step: bool = False, seed: int = 0, own_copy: bool = False
    ) -> None:
        take = copy.deepcopy if own_copy else (lambda module: module)
        self.encoder, self.network = take(model.encoder).to(device), take(model.network).to(device)
        self.loss_fn = model.loss
        trainable = [p for m in (self.encoder, self.network) for p in m.parameters() if p.requires_grad]
        # the config's optimizer and its settings, in the implementation the framework picks for the device
        self.optimizer = make_optimizer(model.optimizer_factory, trainable)
        self.grid, self.batch_size = dm.grid, dm.batch_size
        self.train_index, self.values = dm.train_index.to(device), dm.values.to(device)
        self.generator = torch.Generator(device=device).manual_seed(seed)
        self.points = self.batch_size or len(self.train_index)
        self.fixed = None
        encoder_trains = any(p.requires_grad for p in self.encoder.parameters())
        if self.batch_size is None and not encode_every_step and not encoder_trains:
            with torch.no_grad():  # (n, d) -> (n, m), once
                self.fixed = self.encoder(self.grid.coords(self.train_index)), self.values[self.train_index]

    def loss(self) -> torch.Tensor:
        """One batch's loss: the fixed encoded batch, or a batch drawn, its coordinates computed and encoded."""
        if self.fixed is not None:
            encoded, target = self.fixed
        else:
            index = self.train_index
            if self.batch_size is not None:
                draw = torch.randint(len(index), (self.batch_size,), generator=self.generator, device=index.device)
                index = index[draw]
            encoded, target = self.encoder(self.grid.coords(index)), self.values[index]
        return self.loss_fn(self.network(encoded), target)

    def step(self) -> None:
        loss = self.loss()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()


class LightningAlone(L.LightningModule):
    """The hand step as a bare ``training_step`` and nothing else: what Lightning's loop, hooks and optimizer
    closure cost by themselves. Fed by ``lightning_alone_loader``, whose batches it ignores."""

    def __init__(self, hand: HandStep) -> None:
        super().__init__()
        self.encoder, self.network = hand.encoder, hand.network
        self.hand = hand

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        return self.hand.loss()

    def configure_optimizers(self):
        return self.hand.optimizer


def lightning_alone_loader(steps: int) -> torch.utils.data.DataLoader:
    """``steps`` placeholder batches (the step numbers) for ``LightningAlone``."""
    return torch.utils.data.DataLoader(range(steps), batch_size=None)


# --- clocks ----------------------------------------------------------------------------------------------
def minor_faults() -> int:
    """Minor page faults of this process so far (each maps in one fresh 4 KiB page)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


class StepClock:
    """Time stamps after each of ``warmup + steps + 1`` steps, and the process's minor page faults at each.

    ``per_step``: the step is the median gap between stamps after the warm-up; otherwise the mean step over the
    window from the warm-up's end to the last stamp. ``sync`` (a GPU's ``torch.cuda.synchronize``) drains the
    device before the stamps that count: every stamp when ``per_step`` (each step's device time), only the
    window's two ends otherwise (as in a user's run, the host may run ahead of the device, so per-step host
    work hides behind device work where there is enough of it).

    Example:
        >>> clock = StepClock(warmup=1, steps=3)
        >>> clock.stamps = [0.0, 1.0, 1.5, 2.5, 3.0]
        >>> round(clock.median(), 3), round(clock.mean(), 3)  # gaps 0.5, 1.0, 0.5 after the warm-up
        (0.5, 0.667)
    """

    def __init__(self, warmup: int, steps: int, per_step: bool = True, sync: Optional[Callable[[], None]] = None) -> None:
        self.warmup, self.steps, self.per_step, self.sync = warmup, steps, per_step, sync
        self.steps_per_stamp = 1  # optimizer steps between two stamps (a Lightning step of ``inner_steps``)
        self.stamps: list[float] = []
        self.faults: list[int] = []

    @property
    def runs(self) -> int:
        """Steps to run: the warm-up, the timed steps and the one whose stamp closes the last gap."""
        return self.warmup + self.steps + 1

    def stamp(self) -> None:
        if self.sync is not None and (self.per_step or len(self.stamps) in (self.warmup, self.warmup + self.steps)):
            self.sync()
        self.stamps.append(time.perf_counter())
        self.faults.append(minor_faults())

    def median(self) -> float:
        return median_gap(self.stamps, self.warmup)

    def mean(self) -> float:
        last = min(self.warmup + self.steps, len(self.stamps) - 1)
        return (self.stamps[last] - self.stamps[self.warmup]) / (last - self.warmup)

    def step(self) -> float:
        """Seconds per optimizer step: ``median()`` when ``per_step``, else ``mean()``, over ``steps_per_stamp``."""
        return (self.median() if self.per_step else self.mean()) / self.steps_per_stamp

    def faults_per_step(self) -> float:
        """Mean minor page faults per optimizer step after the warm-up."""
        return (self.faults[-1] - self.faults[self.warmup]) / (len(self.faults) - 1 - self.warmup) / self.steps_per_stamp


def median_gap(stamps: Sequence[float], warmup: int) -> float:
    """Median gap between consecutive stamps after the first ``warmup`` ones.

    Example:
        >>> median_gap([0.0, 5.0, 6.0, 7.5, 8.5], warmup=1)
        1.0
    """
    return statistics.median(b - a for a, b in zip(stamps[warmup:], stamps[warmup + 1 :]))


class StampEachStep(L.Callback):
    """Stamps a ``StepClock`` at every ``on_train_batch_end``: everything a run does per step is in the gaps."""

    def __init__(self, clock: StepClock) -> None:
        self.clock = clock

    def on_train_batch_end(self, *args) -> None:
        self.clock.stamp()


def hand_loop(hand: HandStep, clock: StepClock, profiler=None) -> StepClock:
    """``clock.runs`` steps of ``hand``, stamped; ``profiler`` (a torch.profiler.profile) records the steps after
    the warm-up."""
    for i in range(clock.runs):
        if profiler is not None and i == clock.warmup:
            profiler.start()
        hand.step()
        clock.stamp()
    if profiler is not None:
        profiler.stop()
    return clock


def framework_step(
    config: str,
    clock: StepClock,
    extra: Sequence[str] = (),
    with_callbacks: bool = False,
    precision: str = "32-true",
    accelerator: str = "cpu",
) -> StepClock:
    """The framework's step: the config's task in a real ``Trainer.fit`` (metrics, logging hooks, the guard, data
    hooks; no checkpoints, progress bar or validation), stamped after every Lightning step. ``with_callbacks``:
    the config's own callbacks and a TensorBoard logger in a temporary directory, as the run would have them.
    With the config's ``inner_steps`` K a Lightning step is K optimizer steps: the run takes K times as many,
    and the clock's step is per optimizer step (the stamp's gap over K, Lightning's per-step cost shared)."""
    model, dm, callbacks = instantiate(config, extra)
    clock.steps_per_stamp = getattr(model, "inner_steps", 1)
    with tempfile.TemporaryDirectory() as tmp:
        logger = L.pytorch.loggers.TensorBoardLogger(tmp, name="bench") if with_callbacks else False
        trainer = quiet_trainer(
            clock.runs * clock.steps_per_stamp,
            logger=logger,
            callbacks=[StampEachStep(clock), *(callbacks if with_callbacks else [])],
            precision=precision,
            accelerator=accelerator,
        )
        trainer.fit(model, datamodule=dm)
    return clock


def lightning_alone_step(
    config: str, clock: StepClock, extra: Sequence[str] = (), device: str = "cpu", encode_every_step: bool = False
) -> StepClock:
    """Lightning alone (``LightningAlone``) on the config's model and data, stamped after every step; its step does
    what the hand loop it is compared with does (``encode_every_step`` as there)."""
    model, dm, _ = instantiate(config, extra)
    accelerator = "gpu" if device.startswith("cuda") else "cpu"
    hand = HandStep(model, dm, device, encode_every_step=encode_every_step)
    trainer = quiet_trainer(clock.runs, callbacks=[StampEachStep(clock)], accelerator=accelerator)
    trainer.fit(LightningAlone(hand), train_dataloaders=lightning_alone_loader(clock.runs))
    return clock


# --- whole train.py runs ---------------------------------------------------------------------------------
def run_command(config: str, steps: int, extra: Sequence[str], run_dir: str):
    """``train.py --config config`` for ``steps`` steps into ``run_dir`` (the logger's, or the run's own with
    ``--trainer.logger false`` among ``extra``), in this process, its output thrown away; the CLI object, or an
    exit with the output's end when the run did not finish."""
    save = ["--trainer.logger.init_args.save_dir", run_dir, "--trainer.default_root_dir", run_dir]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        cli = cli_main(["--config", config, "--trainer.max_steps", str(steps), *save, *extra])
    if cli is None or cli.trainer.global_step != steps:
        raise SystemExit(f"{config}: the run did not finish:\n{sink.getvalue()[-2000:]}")
    return cli


def logged_step_times(run: Path, group: int = 1) -> tuple[float, int]:
    """(seconds per step between the first and the last logged ``train/loss``, steps between them), from the wall
    times TensorBoard recorded with them.

    With ``group`` = K > 1 optimizer steps per Lightning step (``inner_steps``) a group's logged values are all
    written when the group ends, so a logged step's wall time is its group's end: each group counts once, at its
    last step (K·g + K − 1, or the run's last step for a group cut short), and at least two groups must log. (Read
    at the logged steps themselves, the window would start up to K − 1 steps before the time it is measured from:
    by K = 100, logging every 50 and 500 steps, the step came out 400/450 of its length.)

    Example:
        >>> group_ends([(49, 1.0), (99, 1.0), (149, 2.0), (199, 2.0), (219, 2.5)], 100)
        [(99, 1.0), (199, 2.0), (219, 2.5)]
    """
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (event_file,) = run.glob("events.out.tfevents.*")
    acc = EventAccumulator(str(event_file), size_guidance={"scalars": 0})
    acc.Reload()
    points = group_ends([(e.step, e.wall_time) for e in acc.Scalars("train/loss")], group)
    if len(points) < 2:
        raise SystemExit(f"{run}: train/loss was logged in fewer than two groups of {group} steps; run more steps")
    (first, t_first), (last, t_last) = points[0], points[-1]
    return (t_last - t_first) / (last - first), last - first


def group_ends(logged: Sequence[tuple[int, float]], group: int) -> list[tuple[int, float]]:
    """(step, wall time) of logged steps -> one point per group of ``group`` steps: the group's last step (the last
    logged step for the run's last group) with the wall time its values were written at."""
    if group <= 1:
        return list(logged)
    last_step = max(step for step, _ in logged)
    ends: dict[int, float] = {}
    for step, wall in logged:
        ends[step // group] = wall  # written together when the group ended: the last one's time stands for it
    return [(min(g * group + group - 1, last_step), wall) for g, wall in sorted(ends.items())]


def whole_run(config: str, steps: int, extra: Sequence[str]) -> tuple[float, float]:
    """(seconds per step as logged, seconds of the whole command per step) of one ``train.py`` run."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        cli = run_command(config, steps, extra, tmp)
        total = time.perf_counter() - start
        step, _ = logged_step_times(Path(cli.trainer.log_dir), group=getattr(cli.model, "inner_steps", 1))
    return step, total / steps


class InterleavedHandLoop(L.Callback):
    """After every ``every``-th optimizer step from ``start`` on (after the Lightning step that took it, when a
    Lightning step takes several: ``inner_steps``), ``burst`` timed steps of a ``HandStep`` on copies of the run's
    encoder and network (the config's optimizer, the same data, a generator of its own), so hand steps and the
    run's steps meet the same machine state within milliseconds. Records the run's batch starts, the optimizer
    step at each, and the time taken out after each; at the end of training writes ``{"run_step", "hand_step"}``
    (seconds per optimizer step) to ``out``, a JSON file, since the command builds this callback from its class
    path (``interleaved_callback_argument``) and keeps no handle to it. Where it stands among the run's callbacks
    does not matter: each gap between two of its batch starts holds exactly one Lightning step's worth of every hook.

    ``hand``: a HandStep to use instead (for a module that is not an ``INRModule``)."""

    def __init__(self, out: str, every: int = 5, burst: int = 5, start: int = 10) -> None:
        self.out, self.every, self.burst, self.start = out, every, burst, start
        self.hand: Optional[HandStep] = None
        self.batch_starts: list[float] = []
        self.start_steps: list[int] = []
        self.taken_out: list[float] = []
        self.hand_steps: list[float] = []

    def on_train_start(self, trainer, pl_module) -> None:
        if self.hand is None:
            self.hand = HandStep(pl_module, trainer.datamodule, str(pl_module.device), seed=1, own_copy=True)

    def on_train_batch_start(self, trainer, *args) -> None:
        self.batch_starts.append(time.perf_counter())
        self.start_steps.append(trainer.global_step)

    def on_train_batch_end(self, trainer, *args) -> None:
        step, before = trainer.global_step, self.start_steps[-1]
        if step < self.start or step // self.every == before // self.every:  # no multiple of `every` reached
            self.taken_out.append(0.0)
            return
        begin = time.perf_counter()
        for _ in range(self.burst):
            self.hand.step()
        spent = time.perf_counter() - begin
        self.hand_steps.append(spent / self.burst)
        self.taken_out.append(spent)

    def on_train_end(self, trainer, pl_module) -> None:
        Path(self.out).write_text(json.dumps({"run_step": self.run_step(), "hand_step": statistics.mean(self.hand_steps)}))

    def run_step(self) -> float:
        """Mean seconds per optimizer step of the run from step ``start`` on, the hand steps taken out."""
        starts, steps = self.batch_starts, self.start_steps
        spans = [
            (b - a - out, n - m)
            for a, b, m, n, out in zip(starts[:-1], starts[1:], steps[:-1], steps[1:], self.taken_out)
            if m >= self.start
        ]
        if not spans:
            raise SystemExit(f"InterleavedHandLoop: no Lightning step began at or after optimizer step {self.start}")
        return sum(t for t, _ in spans) / sum(n for _, n in spans)


def interleaved_callback_argument(out: str, every: int, burst: int) -> str:
    """The command-line option that appends an ``InterleavedHandLoop`` to a run's callbacks (this module must be
    importable as ``common``: the scripts run from benchmarks/, which is then first on ``sys.path``)."""
    spec = {"class_path": f"{__name__}.InterleavedHandLoop", "init_args": {"out": out, "every": every, "burst": burst}}
    return f"--trainer.callbacks+={json.dumps(spec)}"


def interleaved_command(config: str, steps: int, extra: Sequence[str], every: int, burst: int) -> tuple[float, float]:
    """(seconds per optimizer step of the run, of the hand loop) from one ``train.py`` run with an
    ``InterleavedHandLoop`` among its callbacks (``burst`` hand steps after every ``every``-th optimizer step)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "interleaved.json")
        run_command(config, steps, [*extra, interleaved_callback_argument(out, every, burst)], tmp)
        measured = json.loads(Path(out).read_text())
    return measured["run_step"], measured["hand_step"]


# --- variants and tables ---------------------------------------------------------------------------------
def interleave(variants: dict[str, Callable[[], T]], repeats: int) -> dict[str, list[T]]:
    """Each variant once per repeat, in order, ``repeats`` times: a drift of the machine's speed touches all alike.

    Example:
        >>> calls = []
        >>> interleave({"a": lambda: calls.append("a") or 1, "b": lambda: calls.append("b") or 2}, 2), calls
        ({'a': [1, 1], 'b': [2, 2]}, ['a', 'b', 'a', 'b'])
    """
    results: dict[str, list[T]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, run in variants.items():
            results[name].append(run())
    return results


def paired_ratios(values: Iterable[float], base: Iterable[float]) -> list[float]:
    """value / base within each repeat."""
    return [v / b for v, b in zip(values, base)]


def cell(xs: Sequence[float], digits: int = 3, range_digits: Optional[int] = None) -> str:
    """``median (min–max)`` of ``xs``.

    Example:
        >>> cell([1.02, 0.98, 1.10], digits=3, range_digits=2)
        '1.020 (0.98–1.10)'
    """
    r = digits if range_digits is None else range_digits
    return f"{statistics.median(xs):.{digits}f} ({min(xs):.{r}f}–{max(xs):.{r}f})"


# --- stacked members (benchmarks/stacked.py, gpu_check.py part 6) ---------------------------------------
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
    return median_gap(stamps, warmup)


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


def throughput_ratio(single_step: float, stacked_step: float, k: int) -> float:
    """Member-steps per second of a K-member stacked step over one single model's: K · t_single / t_stacked.

    Example:
        >>> throughput_ratio(0.010, 0.016, 8)
        5.0
    """
    return k * single_step / stacked_step
