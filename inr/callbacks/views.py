"""``ViewLogger``: held-out views of a radiance field rendered side by side with their depth and opacity maps."""

from __future__ import annotations

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import Tensor

from inr.errors import InputError
from inr.modes import eval_mode


def depth_image(depth: Tensor, opacity: Tensor, near: float, far: float) -> Tensor:
    """Expected depth (V, H, W) as gray images (V, 1, H, W): (d − near)/(far − near), near dark, blended to white
    where the rays see through the field (weight 1 − opacity), as the background would be."""
    scaled = ((depth - near) / (far - near)).clamp(0, 1)
    return (scaled * opacity + (1 - opacity))[:, None]


class ViewLogger(L.Callback):
    """Every ``every_n_epochs`` epochs (and when training ends) renders the first ``max_views`` held-out views of
    a ``RadianceFieldFitting`` and logs, each a row of the views side by side: ``views/render``,
    ``views/abs_error`` (|error| × ``error_gain``, clipped), ``views/depth`` (``depth_image``),
    ``views/opacity`` and, once, ``views/target``. Rank 0 only, no grad, eval mode."""

    def __init__(self, every_n_epochs: int = 10, max_views: int = 4, error_gain: float = 4.0) -> None:
        if every_n_epochs < 1 or max_views < 1:
            raise InputError(f"ViewLogger needs every_n_epochs ≥ 1 and max_views ≥ 1, got {every_n_epochs}, {max_views}")
        self.every_n_epochs, self.max_views, self.error_gain = every_n_epochs, max_views, error_gain
        self._target_logged = False
        self._last_step = -1

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if (trainer.current_epoch + 1) % self.every_n_epochs == 0:
            self.log_views(trainer, pl_module)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.log_views(trainer, pl_module)

    @rank_zero_only
    @torch.no_grad()
    def log_views(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        from torchvision.utils import make_grid

        writer = getattr(trainer.logger, "experiment", None)
        if writer is None or not hasattr(writer, "add_image") or trainer.global_step == self._last_step:
            return
        self._last_step = step = trainer.global_step
        with eval_mode(pl_module):
            out = pl_module.render_views(pl_module.heldout_poses()[: self.max_views])
        target = pl_module.data.heldout_images()[: self.max_views].to(out["rgb"].device)
        near, far = pl_module.depth_range.tolist()
        images = {
            "render": out["rgb"],
            "abs_error": ((out["rgb"] - target).abs() * self.error_gain).clamp(0, 1),
            "depth": depth_image(out["depth"], out["opacity"], near, far),
            "opacity": out["opacity"][:, None],
        }
        if not self._target_logged:
            images["target"], self._target_logged = target, True
        for name, views in images.items():
            row = make_grid(views.float().cpu(), nrow=len(views), padding=1, pad_value=1.0)  # (V, C, H, W) -> (3, H+2, V·(W+1)+1)
            writer.add_image(f"views/{name}", row, step)
