"""``NonFiniteLossGuard``: stops training at the first NaN/inf loss, before it reaches the weights."""

from __future__ import annotations

import lightning as L
import torch
from torch import Tensor


class TrainingDiverged(RuntimeError):
    """The loss became non-finite; the message names the step and the last checkpoint written before it."""


def last_checkpoint(trainer: L.Trainer) -> str | None:
    paths = [
        p
        for cb in trainer.checkpoint_callbacks
        for p in (getattr(cb, "last_model_path", ""), getattr(cb, "best_model_path", ""))
        if p
    ]
    return paths[0] if paths else None


class NonFiniteLossGuard(L.Callback):
    """Checks the loss before every backward pass; a NaN or inf raises ``TrainingDiverged``.

    Raising before backward means neither the optimizer step nor an epoch-end checkpoint sees the bad
    values, so the checkpoints on disk stay the last good ones. Every task installs it (``configure_callbacks``).
    """

    def on_before_backward(self, trainer: L.Trainer, pl_module: L.LightningModule, loss: Tensor) -> None:
        if not torch.isfinite(loss).all():
            ckpt = last_checkpoint(trainer)
            where = f"; last good checkpoint: {ckpt}" if ckpt else "; no checkpoint had been written yet"
            raise TrainingDiverged(
                f"training stopped: the loss is {float(loss.detach().float().flatten()[0])} at step "
                f"{trainer.global_step} (epoch {trainer.current_epoch}){where}"
            )
