"""``MeasurementLogger``: what an inverse problem's field looks like through its operator — the measurements,
their prediction A(f) and the residual (sinogram, k-space, observed pixels) — logged to the run's loggers and
as PNG files (``inr.callbacks.media``)."""

from __future__ import annotations

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only

from inr.callbacks.media import log_image
from inr.errors import InputError
from inr.modes import eval_mode


class MeasurementLogger(L.Callback):
    """Every ``every_n_epochs`` epochs (and when training ends): ``measurements/predicted`` (A f),
    ``measurements/residual`` (A f − y, drawn like the measurements, scaled by its own maximum) and, once,
    ``measurements/observed`` (y), each drawn by the operator's ``display`` (a sinogram as angles × bins,
    k-space as log-magnitude on its centred grid, observed pixels on the image grid). Also the scalar
    ``measurements/relative_residual`` = ‖A f − y‖/‖y‖ over all measurements. Rank 0, no grad, eval mode."""

    def __init__(self, every_n_epochs: int = 10) -> None:
        if every_n_epochs < 1:  # 0 would divide by zero at the first epoch's end
            raise InputError(f"MeasurementLogger.every_n_epochs must be ≥ 1, got {every_n_epochs}")
        self.every_n_epochs = every_n_epochs
        self._observed_logged = False
        self._last_step = -1

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if (trainer.current_epoch + 1) % self.every_n_epochs == 0:
            self.log_measurements(trainer, pl_module)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.log_measurements(trainer, pl_module)

    @rank_zero_only
    @torch.no_grad()
    def log_measurements(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.global_step == self._last_step:
            return
        self._last_step = step = trainer.global_step
        with eval_mode(pl_module):
            operator = pl_module.operator
            predicted = operator(pl_module.render())
        observed = pl_module.data.measurements.to(predicted.device)
        residual = predicted - observed
        images = {"predicted": operator.display(predicted), "residual": operator.display(residual.abs())}
        if not self._observed_logged:
            images["observed"] = operator.display(observed)
            self._observed_logged = True
        for name, image in images.items():
            log_image(trainer, f"measurements/{name}", image.float().cpu(), step)
        relative = float(residual.abs().square().sum().sqrt() / observed.abs().square().sum().sqrt())
        for logger in trainer.loggers:
            logger.log_metrics({"measurements/relative_residual": relative}, step=step)
