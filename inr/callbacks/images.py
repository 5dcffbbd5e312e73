"""``ImageLogger``: renders the field and logs reconstruction and absolute error (any logger, and PNG files)."""

from __future__ import annotations

from typing import Literal, Optional

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import Tensor

from inr.callbacks.media import MEDIA_DIR, log_image
from inr.callbacks.spectral import target_is_field
from inr.errors import InputError
from inr.io.run_dir import run_dir
from inr.io.video import require_pyav, write_video
from inr.modes import eval_mode


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
    ``error_gain`` and clipped to [0, 1]) and, once, ``images/target`` — the last two only where the data
    knows its target (not for measured data without ground truth, ``has_ground_truth = False``) —, to every
    logger that shows images and as PNG files under ``<run>/media/`` (``inr.callbacks.media``). Rank 0 only,
    no grad, eval mode.

    Args:
        every_n_epochs: log every this many training epochs (and when training ends).
        error_gain: factor on |f − y| in the error image.
        resolution: render at this grid shape instead of the data's (the error and target are then not logged).
        video: ``mp4`` | ``webm`` | ``gif``: when training ends, also write the reconstruction of a 3-D grid as
            a video along its first axis (the frames of a video run, a sweep through the slices of a volume
            run) to ``<run>/media/reconstruction.<video>``; MP4 and WebM need the ``video`` extra.
        fps: frames per second of that video.

    A model with members (``model.members``) logs every member's images under ``.../m{k}`` (its reconstruction,
    error and target) and writes ``reconstruction_m{k}.<video>``.
    """

    supports_members = True

    def __init__(
        self,
        every_n_epochs: int = 10,
        error_gain: float = 4.0,
        resolution: Optional[list[int]] = None,
        video: Optional[Literal["mp4", "webm", "gif"]] = None,
        fps: float = 8.0,
    ) -> None:
        if every_n_epochs < 1:  # 0 would divide by zero at the first epoch's end
            raise InputError(f"ImageLogger.every_n_epochs must be ≥ 1, got {every_n_epochs}")
        if video in ("mp4", "webm"):
            require_pyav(f"ImageLogger.video {video}")  # refused with the config, before training
        self.every_n_epochs, self.error_gain, self.resolution = every_n_epochs, error_gain, resolution
        self.video, self.fps = video, fps
        self._target_logged = False

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        last = trainer.current_epoch + 1 >= (trainer.max_epochs or 0) > 0
        if (trainer.current_epoch + 1) % self.every_n_epochs == 0 or last:
            self.log_images(trainer, pl_module)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        pred = self.log_images(trainer, pl_module)
        if self.video is None or pred is None:
            return
        if getattr(pl_module, "members", None) is None:
            if pred.ndim == 4:
                self.write_video(trainer, pred)
        elif pred.ndim == 5:  # (K, C, T, H, W)
            for k, member in enumerate(pred):
                self.write_video(trainer, member, f"_m{k}")

    @rank_zero_only
    @torch.no_grad()
    def log_images(self, trainer: L.Trainer, pl_module: L.LightningModule) -> Optional[Tensor]:
        """Render, log the views; returns the render (C, *shape) on the CPU ((K, C, *shape) for members)."""
        with eval_mode(pl_module):
            pred = pl_module.render(self.resolution)
        step = trainer.global_step
        with_target = self.resolution is None and getattr(pl_module.data, "has_ground_truth", True) and target_is_field(pl_module)
        target = pl_module.target_grid() if with_target else None
        members = getattr(pl_module, "members", None)
        fields = (
            [("", pred, target)]
            if members is None
            else [(f"/m{k}", pred[k], target[k] if with_target else None) for k in range(members)]
        )
        log_target = not self._target_logged
        for member, field, truth in fields:
            views = {"reconstruction": grid_views(field.clamp(0, 1))}
            if truth is not None:
                views["abs_error"] = grid_views(((field - truth).abs() * self.error_gain).clamp(0, 1))
                if log_target:
                    views["target"] = grid_views(truth.clamp(0, 1))
                    self._target_logged = True
            for name, images in views.items():
                for suffix, image in images.items():
                    log_image(trainer, f"images/{name}" + (f"/{suffix}" if suffix else "") + member, image, step)
        return pred.cpu()

    @rank_zero_only
    def write_video(self, trainer: L.Trainer, pred: Tensor, suffix: str = "") -> None:
        channels = pred if pred.shape[0] in (1, 3) else pred[:1]
        frames = channels.clamp(0, 1).permute(1, 2, 3, 0)  # (C, T, H, W) -> (T, H, W, C)
        write_video(run_dir(trainer) / MEDIA_DIR / f"reconstruction{suffix}.{self.video}", frames, fps=self.fps)
