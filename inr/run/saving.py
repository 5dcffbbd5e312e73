"""``RunCheckpoint``: when a run writes its checkpoints — every few minutes of training, when training ends, and at
the steps or epochs a config asks for — so that their cost follows wall time, not the length of an epoch.

A full-batch epoch is ten optimizer steps; writing ``last.ckpt`` after each one costs a tiny problem more than its
training (an atomic, fsynced write of tens of milliseconds against steps of a few: benchmarks/README.md, "Small
steps"), and on a GPU even the default image config's steps are a millisecond. The command line's checkpoint
(``--checkpoint.*``) is this class, whose defaults are a checkpoint every ``every_n_minutes`` (5) of training and
at its end; SIGTERM and Ctrl-C still save on the spot (``inr.run.signals``), so a stopped run loses nothing.
Lightning's ``train_time_interval`` is the same time trigger in its own unit (``--checkpoint.train_time_interval
0:10:00``): given, it replaces ``every_n_minutes``. ``every_n_train_steps`` saves at exactly those optimizer
steps, also between the steps of one Lightning step (``inner_steps`` > 1: ``on_inner_step_end``), and resuming
from such a checkpoint repeats exactly what the uninterrupted run did; ``every_n_epochs`` saves at the end of
those epochs, as ``ModelCheckpoint`` does.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any, Optional

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint

from inr.errors import InputError
from inr.run.signals import final_step_done


class RunCheckpoint(ModelCheckpoint):
    """``ModelCheckpoint`` that also saves every ``every_n_minutes`` of training (alongside any of its own
    triggers, which Lightning keeps mutually exclusive) and always at the end of training, and whose step
    trigger counts optimizer steps whatever the optimization mode (Lightning's manual-optimization branch
    ignores its own time trigger). Other arguments: ``ModelCheckpoint``'s.

    Example:
        >>> RunCheckpoint(every_n_minutes=5, every_n_epochs=0).every_n_minutes
        5.0
    """

    def __init__(
        self,
        *args: Any,
        every_n_minutes: Optional[float] = None,
        train_time_interval: Optional[timedelta] = None,
        **kwargs: Any,
    ) -> None:
        # Lightning's name for the time trigger sets the same cadence (and, like every_n_minutes, combines with the
        # step and epoch triggers): given, it replaces every_n_minutes, the command's default of 5 minutes included
        if train_time_interval is not None:
            if not train_time_interval.total_seconds() > 0:
                raise InputError(
                    f"checkpoint.train_time_interval must be a positive time (e.g. 0:10:00), got {train_time_interval}"
                )
            every_n_minutes = train_time_interval.total_seconds() / 60.0
        super().__init__(*args, **kwargs)
        if every_n_minutes is not None and not every_n_minutes > 0:
            raise InputError(f"checkpoint.every_n_minutes must be > 0 minutes (or null: no time trigger), got {every_n_minutes}")
        self.every_n_minutes = None if every_n_minutes is None else float(every_n_minutes)

    def _interval_seconds(self) -> Optional[float]:
        return None if self.every_n_minutes is None else 60.0 * self.every_n_minutes

    def _time_due(self, trainer: L.Trainer) -> bool:
        """The interval has passed since the last save (rank 0's clock decides for every rank)."""
        interval = self._interval_seconds()
        if interval is None:
            return False
        last = self._last_time_checked
        due = last is not None and time.monotonic() - last >= interval
        return bool(trainer.strategy.broadcast(due)) if trainer.world_size > 1 else due

    def _step_due(self, trainer: L.Trainer) -> bool:
        return self._every_n_train_steps >= 1 and trainer.global_step % self._every_n_train_steps == 0

    def save_now(self, trainer: L.Trainer) -> None:
        """The newest ``epoch=…-step=….ckpt`` (as ``save_top_k`` keeps them) and ``last.ckpt``, at this step."""
        candidates = self._monitor_candidates(trainer)
        self._save_topk_checkpoint(trainer, candidates)
        self._save_last_checkpoint(trainer, candidates)
        self._last_time_checked = time.monotonic()

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if self._should_skip_saving_checkpoint(trainer):
            return
        if self._step_due(trainer) | self._time_due(trainer):  # both evaluated: the time check is a collective
            self.save_now(trainer)

    def on_inner_step_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Between two optimizer steps of one Lightning step: the step trigger, exactly."""
        # the cheap step test first: this runs between every two inner steps
        if self._step_due(trainer) and not self._should_skip_saving_checkpoint(trainer):
            self.save_now(trainer)

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        super().on_train_epoch_end(trainer, pl_module)
        if final_step_done(trainer) and not self._should_skip_saving_checkpoint(trainer):
            # the final state as last.ckpt (as Lightning's save_last at the end), before the closing work
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))
