"""How fast a run reaches a held-out PSNR: ``HeldOutPSNRHistory`` records the held-out PSNR and the time spent
in training steps every few steps, ``first_reach`` reads off when a target was first met."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Optional

import lightning as L
import torch

from inr.metrics import psnr
from inr.modes import eval_mode


def first_reach(steps: Sequence[int], values: Sequence[float], target: float) -> Optional[int]:
    """The index of the first value ≥ ``target`` (``steps`` only checks the lengths agree), or None if never.

    Example:
        >>> first_reach([0, 10, 20, 30], [8.0, 24.9, 25.1, 24.0], 25.0), first_reach([0, 10], [8.0, 9.0], 25.0)
        (2, None)
    """
    if len(steps) != len(values):
        raise ValueError(f"{len(steps)} steps but {len(values)} values")
    return next((i for i, v in enumerate(values) if v >= target), None)


class HeldOutPSNRHistory(L.Callback):
    """PSNR = 10 log10(R² / MSE) of the held-out pixels at step 0 and every ``every_n_steps`` steps, with the
    seconds spent in training steps so far; R = ``data_range`` (1 for images and densities, 2 for signals
    in [−1, 1]).

    Training time is the sum of the spans from ``on_train_batch_start`` to ``on_train_batch_end``: forward,
    loss, backward and the optimiser's update, but neither this measurement nor other callbacks' (the
    spectral callback's runs at epoch ends, outside those spans). A measurement predicts the held-out
    pixels once (no gradient), so its cost is a forward pass over them. The history is ``steps``,
    ``test_psnr`` (dB) and ``train_seconds``, one entry per measurement, the last at the final step.
    """

    def __init__(self, every_n_steps: int = 10, data_range: float = 1.0) -> None:
        if every_n_steps < 1:
            raise ValueError(f"HeldOutPSNRHistory needs every_n_steps ≥ 1, got {every_n_steps}")
        if not data_range > 0:
            raise ValueError(f"HeldOutPSNRHistory needs data_range > 0, got {data_range}")
        self.every_n_steps, self.data_range = every_n_steps, float(data_range)
        self.history: dict[str, list] = {"steps": [], "test_psnr": [], "train_seconds": []}
        self._seconds, self._start = 0.0, 0.0

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._measure(trainer, pl_module)

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int) -> None:
        _synchronize(pl_module.device)
        self._start = time.perf_counter()

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        _synchronize(pl_module.device)  # a GPU step is finished only when its kernels are
        self._seconds += time.perf_counter() - self._start
        if trainer.global_step % self.every_n_steps == 0:
            self._measure(trainer, pl_module)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not self.history["steps"] or self.history["steps"][-1] != trainer.global_step:
            self._measure(trainer, pl_module)

    @torch.no_grad()
    def _measure(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        dm = pl_module.data
        index = dm.test_index.to(pl_module.device)
        with eval_mode(pl_module):
            pred = pl_module.predict(dm.grid.coords(index))  # (N_test, C)
        target = dm.values[dm.test_index].to(pred.device)  # (N_test, C)
        self.history["steps"].append(int(trainer.global_step))
        self.history["test_psnr"].append(psnr(pred, target, self.data_range))
        self.history["train_seconds"].append(self._seconds)

    def reached(self, target: float) -> dict[str, Optional[float]]:
        """``target_step`` and ``target_seconds``: the first measured step (and training seconds) at which the
        held-out PSNR was ≥ ``target`` dB; None for both if it never was."""
        i = first_reach(self.history["steps"], self.history["test_psnr"], target)
        if i is None:
            return {"target_step": None, "target_seconds": None}
        return {"target_step": self.history["steps"][i], "target_seconds": self.history["train_seconds"][i]}


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
