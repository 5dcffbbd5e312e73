"""``ImageLogger``: renders the field and logs reconstruction and absolute error (any logger, and PNG files)."""

from __future__ import annotations

import math
from typing import Literal, Optional

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import Tensor

from inr.callbacks.budget import budget_of
from inr.callbacks.media import MEDIA_DIR, log_image
from inr.callbacks.spectral import target_is_field
from inr.data.grid import Grid
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


def central_slices(shape: tuple[int, ...], device: torch.device) -> dict[str, tuple[Tensor, tuple[int, int]]]:
    """The three central slices of a 3-D grid: {``slice_a``: (linear indices of its points (P,), its 2-D shape)},
    ``slice_a`` cutting axis a at its middle, as ``grid_views`` names them.

    Example:
        >>> index, plane = central_slices((2, 3, 4), torch.device("cpu"))["slice_0"]
        >>> plane, index.tolist()[:5]
        ((3, 4), [12, 13, 14, 15, 16])
    """
    strides = torch.tensor([shape[1] * shape[2], shape[2], 1], device=device)
    out = {}
    for axis in range(3):
        plane = tuple(s for a, s in enumerate(shape) if a != axis)
        pos = Grid(plane).unravel(torch.arange(math.prod(plane), device=device))  # (P, 2)
        middle = torch.full_like(pos[:, :1], shape[axis] // 2)
        pos = torch.cat([pos[:, :axis], middle, pos[:, axis:]], dim=1)  # (P, 2) -> (P, 3)
        out[f"slice_{axis}"] = ((pos * strides).sum(dim=1), plane)
    return out


def slice_predictions(pl_module: L.LightningModule, shape: tuple[int, ...]) -> dict[str, Tensor]:
    """The field on the central slices of a 3-D grid of ``shape`` and nothing else: {``slice_a``: (C, *plane)}, for
    members (K, C, *plane); a volume's three slices are a small part of it (3·64² of 64³ points)."""
    grid, out = Grid(shape), {}
    for name, (index, plane) in central_slices(shape, pl_module.device).items():
        values = pl_module.predict(grid.coords(index))  # (P, C) or (K, P, C)
        out[name] = values.transpose(-1, -2).reshape(*values.shape[:-2], values.shape[-1], *plane)
    return out


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

    A 3-D grid's images are its three central slices, and only their points are rendered (the whole grid only
    for the closing video). With a ``MonitoringBudget`` among the callbacks (``inr.callbacks.budget``) an epoch's
    images that would take the run's observation beyond its share of the wall time are skipped (the closing ones
    never are).
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
            budget = budget_of(trainer)
            if budget is None or last:
                self.log_images(trainer, pl_module)
            elif budget.allows("images"):
                with budget.timed("images"):
                    self.log_images(trainer, pl_module)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        pred = self.log_images(trainer, pl_module, whole=self.video is not None)
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
    def log_images(self, trainer: L.Trainer, pl_module: L.LightningModule, whole: bool = False) -> Optional[Tensor]:
        """Render, log the views; returns the whole render (C, *shape) on the CPU ((K, C, *shape) for members) when
        it was made (``whole``, or a grid that is not 3-D), else None."""
        shape = tuple(self.resolution) if self.resolution is not None else tuple(pl_module.grid_shape)
        slices = len(shape) == 3 and not whole
        with eval_mode(pl_module):
            pred = slice_predictions(pl_module, shape) if slices else pl_module.render(self.resolution)
        step = trainer.global_step
        with_target = self.resolution is None and getattr(pl_module.data, "has_ground_truth", True) and target_is_field(pl_module)
        target = pl_module.target_grid() if with_target else None
        members = getattr(pl_module, "members", None)
        pred_views = pred if slices else spatial_views(pred, len(shape))
        true_views = None if target is None else spatial_views(target, len(shape))
        fields = (
            [("", pred_views, true_views)]
            if members is None
            else [(f"/m{k}", select(pred_views, k), select(true_views, k)) for k in range(members)]
        )
        log_target = not self._target_logged
        for member, field, truth in fields:
            views = {"reconstruction": {n: display(v.clamp(0, 1)) for n, v in field.items()}}
            if truth is not None:
                views["abs_error"] = {n: display(((v - truth[n]).abs() * self.error_gain).clamp(0, 1)) for n, v in field.items()}
                if log_target:
                    views["target"] = {n: display(t.clamp(0, 1)) for n, t in truth.items()}
                    self._target_logged = True
            for name, images in views.items():
                for suffix, image in images.items():
                    log_image(trainer, f"images/{name}" + (f"/{suffix}" if suffix else "") + member, image, step)
        return None if slices else pred.cpu()

    @rank_zero_only
    def write_video(self, trainer: L.Trainer, pred: Tensor, suffix: str = "") -> None:
        channels = pred if pred.shape[0] in (1, 3) else pred[:1]
        frames = channels.clamp(0, 1).permute(1, 2, 3, 0)  # (C, T, H, W) -> (T, H, W, C)
        write_video(run_dir(trainer) / MEDIA_DIR / f"reconstruction{suffix}.{self.video}", frames, fps=self.fps)


def spatial_views(grid: Tensor, ndim: int) -> dict[str, Tensor]:
    """The views of a (..., C, *shape) grid of ``ndim`` axes, all channels kept: the image itself for 2-D, the
    three central slices for 3-D (``slice_a`` cuts axis a at its middle), none for 1-D."""
    if ndim == 2:
        return {"": grid}
    if ndim != 3:
        return {}
    d, h, w = (s // 2 for s in grid.shape[-3:])
    return {"slice_0": grid[..., d, :, :], "slice_1": grid[..., :, h, :], "slice_2": grid[..., :, :, w]}


def display(image: Tensor) -> Tensor:
    """A (C, H, W) view as shown: its first channel unless it has 1 or 3 (as ``grid_views``)."""
    return image if image.shape[0] in (1, 3) else image[:1]


def select(views: Optional[dict[str, Tensor]], k: int) -> Optional[dict[str, Tensor]]:
    """Member k's views of the members' {name: (K, C, h, w)}; None stays None."""
    return None if views is None else {name: image[k] for name, image in views.items()}
