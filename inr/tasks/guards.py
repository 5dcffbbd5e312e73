"""``NonFiniteLossGuard``: stops training at the first NaN/inf loss, and no checkpoint ever holds its weights."""

from __future__ import annotations

import os
from typing import Any, Optional

import lightning as L
import torch
from torch import Tensor


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
    """

    def __init__(self, lagged: Optional[bool] = None) -> None:
        self.lagged = lagged
        self._pending: Optional[tuple[int, int, Tensor, Tensor, Any]] = None  # step, epoch, loss, flag, event
        # the newest checkpoint known good when a step began: a refused write may have replaced a callback's path
        self._last_good: Optional[str] = None

    supports_members = True  # the loss of a stacked model is the sum of its members': their own losses name who diverged

    def on_before_backward(self, trainer: L.Trainer, pl_module: L.LightningModule, loss: Tensor) -> None:
        self.read_pending(trainer)
        lagged = self.lagged if self.lagged is not None else loss.device.type != "cpu"
        # a stacked model's losses per member (inr.tasks.members), (K,): reported in place of their sum
        members = getattr(pl_module, "member_losses", None)
        if members is not None:
            loss = members
        if not lagged:
            if not torch.isfinite(loss).all():
                self._raise(trainer, loss, trainer.global_step, trainer.current_epoch)
            return
        self._last_good = last_checkpoint(trainer, self._last_good)
        loss = loss.detach()
        bad = torch.logical_not(torch.isfinite(loss).all())
        event = None
        if bad.is_cuda:
            host = torch.empty((), dtype=torch.bool, pin_memory=True)
            host.copy_(bad, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
            bad = host
        self._pending = (trainer.global_step, trainer.current_epoch, loss, bad, event)

    def read_pending(self, trainer: L.Trainer) -> None:
        """Reads the last step's flag, if not yet read; raises if its loss was not finite."""
        if self._pending is None:
            return
        step, epoch, loss, bad, event = self._pending
        self._pending = None
        if event is not None:
            event.synchronize()  # waits for that step's loss only, not for the work queued after it
        if bool(bad):
            self._raise(trainer, loss, step, epoch, self._last_good)

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict[str, Any]) -> None:
        self.read_pending(trainer)  # raising here writes nothing: Lightning writes after this hook

    def on_validation_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.read_pending(trainer)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.read_pending(trainer)

    @staticmethod
    def _raise(trainer: L.Trainer, loss: Tensor, step: int, epoch: int, known_good: Optional[str] = None) -> None:
        ckpt = last_checkpoint(trainer, known_good)
        where = f"; last good checkpoint: {ckpt}" if ckpt else "; no checkpoint had been written yet"
        raise TrainingDiverged(f"training stopped: {describe_loss(loss)} at step {step} (epoch {epoch}){where}")


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
