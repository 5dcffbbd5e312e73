"""How long a comparison will take: a few training steps of each row through the real Trainer, timed after
a warm-up step (``step_seconds``), scaled to the full number of steps by ``comparison.estimate``. An estimate,
printed before a long (GPU) run starts."""

from __future__ import annotations

import statistics
import time
from typing import Any

import lightning as L
import torch

from inr.experiments.runner import quiet_trainer

# Steps timed per row after the warm-up step (which holds one-off costs: allocations, kernel selection).
PROBE_STEPS = 5


class StepTimer(L.Callback):
    """Wall-clock time at the end of every training batch (device work finished first)."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        if pl_module.device.type == "cuda":
            torch.cuda.synchronize(pl_module.device)
        self.times.append(time.perf_counter())


def step_seconds(model: L.LightningModule, datamodule: L.LightningDataModule, probe_steps: int = PROBE_STEPS) -> float:
    """Median seconds per training step of ``model`` on ``datamodule``, over ``probe_steps`` steps after one."""
    timer = StepTimer()
    quiet_trainer(probe_steps + 1, callbacks=[timer]).fit(model, datamodule=datamodule)
    gaps = [b - a for a, b in zip(timer.times, timer.times[1:])]
    return statistics.median(gaps)
