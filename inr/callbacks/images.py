"""``ImageLogger``: renders the field and logs reconstruction and absolute error to TensorBoard."""
from __future__ import annotations

from typing import Optional

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import Tensor


def grid_views(grid: Tensor) -> dict[str, Tensor]:
    """Displayable (C∈{1,3}, H, W) views of a (C, *shape) grid: the image itself for 2D, the three central
    slices for 3D (``slice_0`` cuts the first axis at its middle); 1D grids have none."""
    if grid.shape[0] not in (1, 3):
        grid = grid[:1]
    if grid.ndim == 3:
        return {"": grid}
    if grid.ndim == 4:
        c = [s // 2 for s in grid.shape[1:]]
        return {"slice_0": grid[:, c[0]], "slice_1": grid[:, :, c[1]], "slice_2": grid[:, :, :, c[2]]}
    return {}


class ImageLogger(L.Callback):
    """Every ``every_n_epochs`` epochs: ``images/reconstruction``, ``images/abs_error`` (error scaled by
    ``error_gain`` and clipped to [0, 1]) and, once, ``images/target``. Rank 0 only, no grad, eval mode."""

    def __init__(self, every_n_epochs: int = 10, error_gain: float = 4.0, resolution: Optional[list[int]] = None) -> None:
        self.every_n_epochs, self.error_gain, self.resolution = every_n_epochs, error_gain, resolution
        self._target_logged = False

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        last = trainer.current_epoch + 1 >= (trainer.max_epochs or 0) > 0
        if (trainer.current_epoch + 1) % self.every_n_epochs == 0 or last:
            self.log_images(trainer, pl_module)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.log_images(trainer, pl_module)

    @rank_zero_only
    @torch.no_grad()
    def log_images(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        writer = getattr(trainer.logger, "experiment", None)
        if writer is None or not hasattr(writer, "add_image"):
            return
        was_training = pl_module.training
        pl_module.eval()
        try:
            pred = pl_module.render(self.resolution)
        finally:
            pl_module.train(was_training)
        step = trainer.global_step
        views = {"reconstruction": grid_views(pred.clamp(0, 1))}
        if self.resolution is None:
            target = pl_module.target_grid()
            views["abs_error"] = grid_views(((pred - target).abs() * self.error_gain).clamp(0, 1))
            if not self._target_logged:
                views["target"] = grid_views(target.clamp(0, 1))
                self._target_logged = True
        for name, images in views.items():
            for suffix, image in images.items():
                tag = f"images/{name}" + (f"/{suffix}" if suffix else "")
                writer.add_image(tag, image.float().cpu(), step)
