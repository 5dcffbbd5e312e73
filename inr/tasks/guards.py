"""``NonFiniteLossGuard``: stops training at the first NaN/inf loss, and no checkpoint ever holds its weights;
it also warns once when the loss of the first steps rises and stays up (a learning rate far too high)."""

from __future__ import annotations

import os
from typing import Any, Optional

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_warn
from torch import Tensor

# The early-rise warning: over the RISE_WINDOW steps after the first, the loss never came back below
# RISE_FACTOR × the first step's loss. A learning rate that suits the task lowers the loss within a few steps;
# Adam's first steps can overshoot, but not for ten steps in a row (image.yaml at lr 1e6: 0.075 -> 0.28 from
# step 1 on; at lr 1e-2 the loss falls every step).
RISE_WINDOW = 10
RISE_FACTOR = 2.0


class TrainingDiverged(RuntimeError):
    """The loss became non-finite; the message names the step and the last checkpoint written before it."""


def last_checkpoint(trainer: L.Trainer, *also: Optional[str]) -> str | None:
    """The newest checkpoint file that exists on disk among those the checkpoint callbacks name and ``also``
    (a path a callback set just before a write that was then refused is skipped)."""
    named = [(cb.last_model_path, cb.best_model_path) for cb in trainer.checkpoint_callbacks if hasattr(cb, "best_model_path")]
    paths = {p for pair in named for p in pair if p and os.path.exists(p)} | {p for p in also if p and os.path.exists(p)}
    return max(paths, key=os.path.getmtime) if paths else None


class NonFiniteLossGuard(L.Callback):
    """Checks every step's loss; a NaN or inf raises ``TrainingDiverged`` naming the step.

    On the CPU the loss is checked before its backward pass, so neither the optimizer step nor a checkpoint
    sees the bad values. On an accelerator, reading the loss on the host before every backward would make the
    host wait for the device every step, and the host could never run ahead to hide its own per-step work
    (Lightning's loop, hooks, closure) behind the device's. There the check stays on the device: step k's
    "non-finite" flag is copied to pinned host memory without blocking and read at step k + 1, by when it has
    arrived. Step k's own update may then have reached the weights in memory, but no checkpoint does: every
    unread flag is read before a checkpoint is written (``on_save_checkpoint``), before validation and at the
    end of training. ``lagged`` forces either way (None: lagged unless the loss is on the CPU).

    A task taking K optimizer steps per Lightning step (``inner_steps``) hands over the losses of a group's
    steps when the group ends (``watch_group``): one check per group, read at once on the CPU and at the next
    group's start on an accelerator; the error names the first step whose loss was not finite. A checkpoint
    written between the steps of a group first checks the steps taken so far.
    """

    def __init__(self, lagged: Optional[bool] = None) -> None:
        self.lagged = lagged
        self._early: Optional[list[Tensor]] = []  # losses of the first RISE_WINDOW + 1 steps (None: judged)
        # first step, epoch, losses of the steps from it (n, ...), flag, event
        self._pending: Optional[tuple[int, int, Tensor, Tensor, Any]] = None
        # the newest checkpoint known good when a step began: a refused write may have replaced a callback's path
        self._last_good: Optional[str] = None

    supports_members = True  # the loss of a stacked model is the sum of its members': their own losses name who diverged

    def on_before_backward(self, trainer: L.Trainer, pl_module: L.LightningModule, loss: Tensor) -> None:
        if not pl_module.automatic_optimization:  # inner steps: their losses come by group (watch_group)
            return
        self.read_pending(trainer)
        self._watch_early_rise(trainer, loss[None])
        # a stacked model's losses per member (inr.tasks.members.Members.losses), (K,): reported in place of their sum
        stack = getattr(pl_module, "stack", None)
        members = None if stack is None else stack.losses
        self._watch(trainer, (members if members is not None else loss).detach()[None], trainer.global_step)

    def watch_group(
        self, trainer: L.Trainer, pl_module: L.LightningModule, losses: Tensor, first_step: int, logs: bool = False
    ) -> None:
        """The losses (n, ...) of steps ``first_step`` .. ``first_step + n − 1``, taken in one Lightning step; ``logs``:
        one of them logged (the early-rise judgement reads the host then)."""
        self.read_pending(trainer)
        self._collect_early(losses.detach().float().reshape(len(losses), -1).sum(dim=1))  # a stacked model: the sum
        if logs or trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
            self._judge_early_rise(trainer)
        self._watch(trainer, losses.detach(), first_step)

    def _watch(self, trainer: L.Trainer, losses: Tensor, first_step: int) -> None:
        """Checks the losses (n, ...) of the steps from ``first_step`` at once (CPU) or after the next step's start."""
        lagged = self.lagged if self.lagged is not None else losses.device.type != "cpu"
        if not lagged:
            if not torch.isfinite(losses).all():
                self._raise(trainer, losses, first_step, trainer.current_epoch)
            return
        self._last_good = last_checkpoint(trainer, self._last_good)
        bad = torch.logical_not(torch.isfinite(losses).all())
        event = None
        if bad.is_cuda:
            host = torch.empty((), dtype=torch.bool, pin_memory=True)
            host.copy_(bad, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
            bad = host
        self._pending = (first_step, trainer.current_epoch, losses, bad, event)

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if not pl_module.automatic_optimization:  # the previous group's flag has had the fetch to arrive
            self.read_pending(trainer)

    def _watch_early_rise(self, trainer: L.Trainer, losses: Tensor) -> None:
        """Collect the first steps' losses on the device and judge them once, in one host read made at a step
        that logs (which reads the loss anyway), so the steps between stay free of host reads."""
        if self._early is None:
            return
        self._collect_early(losses.detach().float().reshape(-1)[:1])
        logs = (trainer.global_step + 1) % max(1, trainer.log_every_n_steps) == 0
        if logs or trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
            self._judge_early_rise(trainer)

    def _collected(self) -> int:
        return sum(len(x) for x in self._early) if self._early is not None else 0

    def _collect_early(self, losses: Tensor) -> None:
        """Keeps the losses (n,) of the next steps, up to the first RISE_WINDOW + 1 steps (on the device)."""
        if self._early is not None and self._collected() <= RISE_WINDOW:
            self._early.append(losses[: RISE_WINDOW + 1 - self._collected()])

    def _judge_early_rise(self, trainer: L.Trainer) -> None:
        if self._early is None or self._collected() <= RISE_WINDOW:
            return
        losses = torch.cat(self._early).tolist()[: RISE_WINDOW + 1]
        self._early = None
        first, after = losses[0], min(losses[1:])
        if first > 0 and after > RISE_FACTOR * first:
            lr = trainer.optimizers[0].param_groups[0].get("lr") if trainer.optimizers else None
            rank_zero_warn(
                f"the loss rose from {first:.4g} at the first step to at least {after:.4g} over the next {RISE_WINDOW} steps; "
                f"the learning rate{f' ({lr:g})' if isinstance(lr, (int, float)) else ''} is probably too high "
                "(model.init_args.optimizer.init_args.lr)"
            )

    def read_pending(self, trainer: L.Trainer) -> None:
        """Reads the last step's (or group's) flag, if not yet read; raises if a loss was not finite."""
        if self._pending is None:
            return
        step, epoch, losses, bad, event = self._pending
        self._pending = None
        if event is not None:
            event.synchronize()  # waits for that step's loss only, not for the work queued after it
        if bool(bad):
            self._raise(trainer, losses, step, epoch, self._last_good)

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict[str, Any]) -> None:
        self.read_pending(trainer)  # raising here writes nothing: Lightning writes after this hook
        progress = getattr(pl_module, "inner_progress", None)
        if progress is not None:  # a checkpoint between the steps of a group: the steps taken so far
            first, losses, taken = progress
            if not torch.isfinite(losses[:taken]).all():
                self._raise(trainer, losses[:taken], first, trainer.current_epoch, self._last_good)

    def on_validation_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.read_pending(trainer)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.read_pending(trainer)
        self._judge_early_rise(trainer)

    @staticmethod
    def _raise(trainer: L.Trainer, losses: Tensor, first_step: int, epoch: int, known_good: Optional[str] = None) -> None:
        """Names the first of the steps from ``first_step`` whose loss (a row of ``losses``, (n, ...)) is not finite."""
        finite = torch.isfinite(losses.detach().reshape(len(losses), -1)).all(dim=1).cpu()
        j = int(torch.nonzero(~finite)[0, 0]) if not finite.all() else 0
        ckpt = last_checkpoint(trainer, known_good)
        where = f"; last good checkpoint: {ckpt}" if ckpt else "; no checkpoint had been written yet"
        raise TrainingDiverged(f"training stopped: {describe_loss(losses[j])} at step {first_step + j} (epoch {epoch}){where}")


def describe_loss(loss: Tensor) -> str:
    """The text of a non-finite loss: "the loss is nan"; for the losses of K members (K,), those not finite.

    Example:
        >>> describe_loss(torch.tensor([0.1, float("nan"), 0.2, float("inf")]))
        'the loss of members 1, 3 is nan, inf'
    """
    values = loss.detach().float().flatten().cpu()
    if loss.ndim == 0:
        return f"the loss is {float(values[0])}"
    bad = [k for k, v in enumerate(values.tolist()) if not torch.isfinite(torch.tensor(v))]
    which = "member" + ("s" if len(bad) > 1 else "")
    return f"the loss of {which} {', '.join(map(str, bad))} is {', '.join(str(float(values[k])) for k in bad)}"
