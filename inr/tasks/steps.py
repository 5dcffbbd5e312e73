"""K optimizer steps inside one Lightning training step (``INRModule(inner_steps=K)``): Lightning's per-batch
cost (its loop, hooks, fetching, logging connector) is paid once per K steps instead of every step.

A group of K batches (``inr.data.module.BatchGroup``: K consecutive draws of the sampler, as K = 1 draws them)
is trained by ``run_group`` under manual optimization: per step, the task's forward and loss
(``step_loss``), zero_grad, backward, gradient clipping with the Trainer's settings, the optimizer's step, the
scheduler's step, and Lightning's optimizer-step counter, so ``global_step`` counts optimizer steps and
``max_steps`` stops exactly (a group is cut at it). The arithmetic of every step is that of K = 1, so K > 1
ends bit for bit where K = 1 ends (tests/tasks/test_inner_steps.py). What the loop calls on the task is
``inr.tasks.engine.SteppedTask``.

What runs once per group instead of once per step: the training metrics' update (one update on the group's
predictions), the non-finite check (one host read per group on a CPU; a device flag read at the next group's
start on an accelerator: ``NonFiniteLossGuard.watch_group``, which names the diverging step), and logging:
every ``log_every_n_steps``-th step's values are written to the loggers at their own step when the group ends.

Between two steps of a group, callbacks that define ``on_inner_step_end(trainer, pl_module)`` run (a
checkpoint due at that step, a stop requested by a signal): a checkpoint written there is exact, since the
loader counts the epoch's trained steps, not Lightning's batches (``inr.data.module.ResumableLoader``).

Under a precision plugin with a gradient scaler (16-mixed) the steps go through Lightning's own
``manual_backward`` and ``LightningOptimizer.step``, which scale and unscale (as they do with the task's
``lightning_steps`` set); otherwise the backward and the step are called directly, since Lightning's per-step hooks cost about a fifth of a tiny step
(benchmarks/README.md, "Small steps"). Per-step hooks (``on_before_backward``, ``on_after_backward``,
``on_before_optimizer_step``) are not called on that direct path.
"""

from __future__ import annotations

from typing import Any, Optional

import lightning as L
from torch import Tensor

from inr.errors import InputError
from inr.tasks.engine import LoggedStep, StepLoss, SteppedTask

# Predictions kept for one batched metric update; beyond this many values the update runs and starts again,
# so a group of large batches holds at most this much (plus its last step's prediction) for the metrics.
METRIC_FLUSH_VALUES = 1 << 24


def check_inner_steps(inner_steps: int) -> int:
    """K ≥ 1, refused with one line otherwise.

    Example:
        >>> check_inner_steps(8)
        8
    """
    if isinstance(inner_steps, bool) or not isinstance(inner_steps, int) or inner_steps < 1:
        raise InputError(f"model.inner_steps must be an integer ≥ 1 (optimizer steps per training batch), got {inner_steps}")
    return inner_steps


def check_trainer(trainer: L.Trainer) -> None:
    """Refuse what K > 1 cannot do, before anything runs."""
    if trainer.accumulate_grad_batches != 1:
        raise InputError(
            f"trainer.accumulate_grad_batches {trainer.accumulate_grad_batches}: with model.inner_steps > 1 every batch "
            "is its own optimizer step; accumulate over larger batches (data.batch_size) instead"
        )


def logging_steps(first: int, count: int, every: int) -> list[int]:
    """The steps s in first..first+count−1 whose values reach the logger: (s + 1) a multiple of ``every``
    (Lightning's ``log_every_n_steps``, counted in optimizer steps).

    Example:
        >>> logging_steps(5, 10, 4)
        [7, 11]
    """
    if every < 1:
        return []
    return [s for s in range(first, first + count) if (s + 1) % every == 0]


def steps_allowed(trainer: L.Trainer, planned: int) -> int:
    """How many of a group's ``planned`` steps to take: all, or those left before ``max_steps``."""
    if trainer.max_steps is None or trainer.max_steps < 0:
        return planned
    return max(0, min(planned, trainer.max_steps - trainer.global_step))


def inner_observers(trainer: L.Trainer) -> list[Any]:
    """The callbacks with an ``on_inner_step_end`` hook, in the Trainer's order."""
    return [cb for cb in trainer.callbacks if callable(getattr(cb, "on_inner_step_end", None))]


def first_scheduler(task: SteppedTask) -> Optional[Any]:
    schedulers = task.lr_schedulers()
    if schedulers is None:
        return None
    if isinstance(schedulers, list):
        raise InputError("model.scheduler: one learning-rate scheduler at most with model.inner_steps > 1")
    return schedulers


def group_ends_epoch(trainer: L.Trainer) -> bool:
    return bool(trainer.fit_loop.epoch_loop.batch_progress.is_last_batch)


class GroupMetrics:
    """The predictions and targets of a group's steps that do not log, updated into the training metrics in one
    call (``update``) when the group ends or when they exceed ``METRIC_FLUSH_VALUES`` values."""

    def __init__(self, task: SteppedTask) -> None:
        self.task, self.raws, self.targets, self.values = task, [], [], 0

    def add(self, raw: Tensor, target: Tensor) -> None:
        self.raws.append(raw)
        self.targets.append(target)
        self.values += raw.numel()
        if self.values >= METRIC_FLUSH_VALUES:
            self.flush()

    def flush(self) -> None:
        if self.raws:
            self.task.update_group_metrics(self.raws, self.targets)
        self.raws, self.targets, self.values = [], [], 0


def run_group(task: SteppedTask, group: Any) -> None:
    """The steps of ``group`` (see the module docstring); returns nothing (manual optimization)."""
    trainer = task.trainer
    optimizer = task.optimizers()
    raw_optimizer = optimizer.optimizer
    scheduler = first_scheduler(task)
    progress = trainer.fit_loop.epoch_loop.manual_optimization.optim_step_progress
    strategy = trainer.strategy
    scaler = getattr(trainer.precision_plugin, "scaler", None)
    direct = scaler is None and not task.lightning_steps
    clip_val, clip_algorithm = trainer.gradient_clip_val, trainer.gradient_clip_algorithm
    count = steps_allowed(trainer, len(group))
    first = trainer.global_step
    observers = inner_observers(trainer)
    # every log_every_n_steps-th step reaches the loggers; the group that ends the epoch (or a stop) also takes its
    # last step's values (progress bar, callback_metrics) and so closes the epoch's values, as K = 1 does
    to_logger = set(logging_steps(first, count, trainer.log_every_n_steps))
    closes = count > 0 and (trainer.should_stop or group_ends_epoch(trainer))
    logs = to_logger | ({first + count - 1} if closes else set())
    graphed = task.graphed_steps()
    metrics, logged, watched = GroupMetrics(task), [], None
    out = batch = None
    # the per-step attributes are plain values: written straight into the module's __dict__, past
    # nn.Module.__setattr__'s parameter/buffer/submodule checks (a visible share of a tiny step)
    attributes = vars(task)
    for j in range(count):
        if graphed is not None:  # forward, backward, clipping and the update: one replay (inr.tasks.graphs)
            out, values = graphed.step(group, j)
            batch = {"values": values, "full_batch": graphed.full_batch}
            progress.increment_ready()
            progress.increment_completed()
        elif direct:
            batch = group[j]
            out = task.step_loss(batch)
            raw_optimizer.zero_grad(set_to_none=True)
            strategy.pre_backward(out.loss)
            task.backward(out.loss)
            strategy.post_backward(out.loss)
            if clip_val:
                task.configure_gradient_clipping(raw_optimizer, clip_val, clip_algorithm)
            raw_optimizer.step()
            progress.increment_ready()
            progress.increment_completed()
        else:  # Lightning's manual path: the scaler scales, unscales and skips steps with inf gradients
            batch = group[j]
            out = task.step_loss(batch)
            optimizer.zero_grad(set_to_none=True)
            task.manual_backward(out.loss)
            if clip_val:
                if scaler is not None:
                    scaler.unscale_(raw_optimizer)
                task.configure_gradient_clipping(raw_optimizer, clip_val, clip_algorithm)
            optimizer.step()
        if scheduler is not None:
            scheduler.step()
        if watched is None:  # (K, *watched): the losses of the group's steps, on the device
            watched = out.watched.detach().new_empty((count, *out.watched.shape))
        watched[j] = out.watched.detach()
        attributes["inner_progress"] = (first, watched, j + 1)
        step = first + j
        if step in logs:
            logged.append((step, task.group_log_values(batch, out), step in to_logger))
        elif graphed is None:
            metrics.add(out.raw.detach(), batch["values"])
        else:  # a graph's outputs (and a random batch's targets) are rewritten by its next replay
            metrics.add(out.raw.detach().clone(), batch["values"] if graphed.full_batch else batch["values"].clone())
        if j < count - 1 and observers:
            attributes["inner_output"] = (batch, out)
            for observer in observers:
                observer.on_inner_step_end(trainer, task)
    metrics.flush()
    if count:
        if graphed is not None:  # kept past the group: a copy of the graph's outputs
            raw = out.raw.detach().clone()
            out = StepLoss(out.loss, out.watched, raw, raw if out.field is out.raw else out.field.detach().clone())
        task.record_grid_prediction(batch, out)
        task.log_group(logged)
        guard = task.divergence_guard()
        if guard is not None:
            guard.watch_group(trainer, task, watched, first, logs=bool(logged))
    task.inner_progress = task.inner_output = None
    # Lightning's logging step counts its batches; keep it on the optimizer steps (what K = 1 logs against)
    trainer.fit_loop.epoch_loop._batches_that_stepped = trainer.global_step - 1


def write_logs(task: SteppedTask, logged: list[LoggedStep]) -> None:
    """The values of each logging step that reaches the loggers to them, at that step (with the epoch, as
    Lightning adds it), and the latest values to the progress bar and ``trainer.callback_metrics``."""
    if not logged:
        return
    trainer = task.trainer
    epoch = trainer.current_epoch
    for step, values, to_logger in logged:
        if not to_logger or not trainer.loggers:
            continue
        scalars = {key: float(value) for key, value in values.items()}  # the host reads of a logging step
        for logger in trainer.loggers:
            logger.log_metrics({**scalars, "epoch": float(epoch)}, step=step)
    task.log_dict({key: value.detach() for key, value in logged[-1][1].items()}, prog_bar=True, logger=False)


AUTOMATIC_KEY = "epoch_loop.automatic_optimization.optim_progress"
MANUAL_KEY = "epoch_loop.manual_optimization.optim_step_progress"


def carry_step_count(checkpoint: dict[str, Any], automatic: bool) -> None:
    """A checkpoint written with the other K (K = 1 counts its steps in Lightning's automatic-optimization
    progress, K > 1 in the manual one) resumes at its step: the count of the mode that saved it is copied, in
    the checkpoint, into the progress of the mode this run uses, before Lightning restores its loops.

    Example:
        >>> ckpt = {"loops": {"fit_loop": {
        ...     AUTOMATIC_KEY: {"optimizer": {"step": {"total": {"ready": 7, "completed": 7},
        ...                                            "current": {"ready": 2, "completed": 2}}}},
        ...     MANUAL_KEY: {"total": {"ready": 0, "completed": 0}, "current": {"ready": 0, "completed": 0}}}}}
        >>> carry_step_count(ckpt, automatic=False)
        >>> ckpt["loops"]["fit_loop"][MANUAL_KEY]["total"]
        {'ready': 7, 'completed': 7}
    """
    loop = (checkpoint.get("loops") or {}).get("fit_loop")
    if not isinstance(loop, dict) or AUTOMATIC_KEY not in loop or MANUAL_KEY not in loop:
        return
    auto, manual = loop[AUTOMATIC_KEY].get("optimizer", {}).get("step"), loop[MANUAL_KEY]
    if not isinstance(auto, dict) or not isinstance(manual, dict):
        return
    source, target = (manual, auto) if automatic else (auto, manual)
    if source.get("total", {}).get("completed", 0) > target.get("total", {}).get("completed", 0):
        for part in ("total", "current"):
            target[part] = {**target.get(part, {}), **{k: source[part][k] for k in ("ready", "completed")}}


def reopen_cut_epoch(checkpoint: dict[str, Any], steps_per_epoch: Optional[int]) -> None:
    """A run stopped by ``max_steps`` inside a group that was its epoch's last Lightning batch saved
    ``is_last_batch``, from which Lightning would resume at the next epoch; where the training loader's pass still
    has steps to train (``batches_done`` < ``steps_per_epoch``), the epoch is reopened in the checkpoint, so the
    resumed run trains them, as the uninterrupted run did.

    Example:
        >>> ckpt = {"loops": {"fit_loop": {"epoch_loop.batch_progress": {"is_last_batch": True},
        ...     "state_dict": {"combined_loader": [{"epoch": 1, "batches_done": 3}]}}}}
        >>> reopen_cut_epoch(ckpt, 5)
        >>> ckpt["loops"]["fit_loop"]["epoch_loop.batch_progress"]["is_last_batch"]
        False
    """
    loop = (checkpoint.get("loops") or {}).get("fit_loop")
    if not isinstance(loop, dict) or steps_per_epoch is None:
        return
    progress = loop.get("epoch_loop.batch_progress")
    loaders = (loop.get("state_dict") or {}).get("combined_loader") or []
    done = [state.get("batches_done") for state in loaders if isinstance(state, dict)]
    if (
        isinstance(progress, dict)
        and progress.get("is_last_batch")
        and done
        and all(isinstance(d, int) and d < steps_per_epoch for d in done)
    ):
        progress["is_last_batch"] = False
