"""The trainer helpers every command that trains shares: a quiet Trainer (``quiet_trainer``), one fit of a row
with a progress line (``fit_row``), the count of trained numbers, Lightning's notices kept out of a command's
output, and the seconds of a training step measured through the real Trainer (``step_seconds``: a few steps timed
after a warm-up step, scaled by the callers to the full run: an estimate printed before a long run starts)."""

from __future__ import annotations

import logging
import statistics
import time
import warnings
from collections.abc import Sequence
from typing import Any, Optional

import lightning as L
import torch

from inr.io.progress import advance, reporting


# --- training a row -------------------------------------------------------------------------------------
def quiet_trainer(steps: int, logger: Any = False, callbacks: Sequence[L.Callback] = (), **kwargs: Any) -> L.Trainer:
    """A Trainer for ``steps`` optimiser steps that writes nothing of its own: no checkpoints, validation,
    progress bar or model summary (``logger`` False unless given), on one device."""
    settings = dict(
        max_steps=steps,
        logger=logger,
        callbacks=list(callbacks),
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        devices=1,
    )
    settings.update(kwargs)
    return L.Trainer(**settings)


class StepProgress(L.Callback):
    """Tells the open progress report (``inr.io.progress``) how many of the run's steps are done."""

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        advance(trainer.global_step, trainer.max_steps)


def fit_row(
    model: L.LightningModule,
    datamodule: L.LightningDataModule,
    steps: int,
    callbacks: Sequence[L.Callback] = (),
    logger: Any = False,
    label: Optional[str] = None,
    **trainer_kwargs: Any,
) -> float:
    """Train one row through ``quiet_trainer``; returns the fit's wall seconds and leaves the model in eval mode.
    ``label``: the row's name in a progress line on stderr every few seconds while it trains (steps, ETA)."""
    trainer = quiet_trainer(steps, logger=logger, callbacks=[*callbacks, StepProgress()], **trainer_kwargs)
    start = time.perf_counter()
    with reporting(f"{label}: training" if label else "training"):
        trainer.fit(model, datamodule=datamodule)
    seconds = time.perf_counter() - start
    model.eval()
    return seconds


def trained_numbers(module: torch.nn.Module) -> int:
    """How many real numbers training adjusts: a complex parameter counts two (Re, Im), a frozen one none —
    so a network written with complex tensors (WIRE's released code) and one written with (Re, Im) pairs count
    alike.

    Example:
        >>> trained_numbers(torch.nn.Linear(2, 3, dtype=torch.cfloat)), trained_numbers(torch.nn.Linear(2, 3))
        (18, 9)
    """
    return sum(p.numel() * (2 if p.is_complex() else 1) for p in module.parameters() if p.requires_grad)


def silence_lightning() -> None:
    """Rows train many Trainers: keep Lightning's per-fit notices and warnings out of the comparison's output."""
    for name in ("lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="lightning")
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")


# --- timing a step ---------------------------------------------------------------------------------------
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
