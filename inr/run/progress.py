"""Lightning's progress bar, redrawn at most every ``min_interval`` seconds instead of after every step.

Lightning's ``TQDMProgressBar`` redraws the bar and rebuilds its metrics after every training step
(``refresh_rate: 1``), and its steps-based ``refresh_rate`` is a poor fit when one config's step takes 30 ms
on one machine and 700 ms on another. The redraw costs about 0.6 ms of Python per step (a cProfile of 200
steps of volume.yaml: 125 ms in ``on_train_batch_end``), about 2 % of a 30 ms CPU step and more of a
GPU's. Redrawn at most ten times a second (tqdm's own default ``mininterval``), the bar looks the same to a
person and costs next to nothing. The last batch of an epoch is always drawn, so the bar ends at its total.

With several optimizer steps per Lightning step (``inner_steps``) the bar also moves between them, at the same
pace. A run bounded by ``max_steps`` (every config here) counts optimiser steps over the whole run — ``step
273/300, epoch 27`` — instead of Lightning's batches of the current epoch (``Epoch 27: 3/10``): an epoch of
a full-batch run is a bookkeeping unit of 10 steps, and the question a user asks is how far the run is. A
resumed run starts the bar at the checkpoint's step.
"""

from __future__ import annotations

import time
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import TQDMProgressBar


class ProgressBar(TQDMProgressBar):
    """``TQDMProgressBar`` whose training bar is redrawn when ``min_interval`` seconds have passed since the
    last redraw, or at the epoch's last batch; the CLI installs it unless the config names a progress bar or
    turns it off (``trainer.enable_progress_bar: false``).

    Example:
        >>> ProgressBar(min_interval=0.5).min_interval
        0.5
    """

    supports_members = True  # shows the logged values only, whatever the model

    def __init__(self, min_interval: float = 0.1, refresh_rate: int = 1, process_position: int = 0, leave: bool = False) -> None:
        super().__init__(refresh_rate=refresh_rate, process_position=process_position, leave=leave)
        self.min_interval = float(min_interval)
        self._drawn_at = -float("inf")

    @staticmethod
    def counts_steps(trainer: L.Trainer) -> bool:
        """Whether the bar counts the run's optimiser steps (``max_steps`` set) rather than an epoch's batches."""
        return trainer.max_steps is not None and trainer.max_steps > 0

    def on_train_epoch_start(self, trainer: L.Trainer, *args: Any) -> None:
        self._drawn_at = -float("inf")
        if not self.counts_steps(trainer):
            super().on_train_epoch_start(trainer, *args)
            return
        bar = self.train_progress_bar
        if bar.total != trainer.max_steps:  # the first epoch of this process: one bar for the whole run
            bar.reset(total=trainer.max_steps)
            bar.initial = trainer.global_step
            bar.n = trainer.global_step
        bar.set_description(f"step (epoch {trainer.current_epoch})")

    def on_inner_step_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Between two optimizer steps of one Lightning step (``inner_steps``): the step count, when it is time to redraw."""
        if self.counts_steps(trainer) and time.monotonic() - self._drawn_at >= self.min_interval:
            self._drawn_at = time.monotonic()
            self.train_progress_bar.n = trainer.global_step
            self.train_progress_bar.refresh()

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        now = time.monotonic()
        if self.counts_steps(trainer):
            step, bar = trainer.global_step, self.train_progress_bar
            if step >= trainer.max_steps or now - self._drawn_at >= self.min_interval:
                self._drawn_at = now
                bar.n = step
                bar.set_postfix(self.get_metrics(trainer, pl_module))
                bar.refresh()
            return
        # the bar's own total (set at the epoch's start), not ``total_train_batches``: when max_steps ends the
        # run, that property is the steps still to run and shrinks every step, which would redraw the second
        # half of the last epoch at every batch
        total = self.train_progress_bar.total
        last = total is not None and batch_idx + 1 >= total
        if last or now - self._drawn_at >= self.min_interval:
            self._drawn_at = now
            super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)
