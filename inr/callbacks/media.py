"""One path for every image and figure a run logs: each logger that can show images, and PNG files.

``log_image(trainer, tag, image, step)`` sends a (C, H, W) image with values in [0, 1] (C ∈ {1, 3, 4}) to
- each TensorBoard logger (any logger whose ``experiment`` has ``add_image``);
- each logger with ``log_image(key, images, step)``, the interface of Lightning's ``WandbLogger``;
- MLflow (``MLFlowLogger``: its client's ``log_image(run_id, image, artifact_file)``; where the run directory is
  the MLflow run's artifact directory, the PNG file below is that artifact) and Comet (its experiment's
  ``log_image(image, name, step)``), recognised by those methods, no import needed;
- and always a PNG file, ``<run dir>/media/<tag>/step_<step>.png``, written atomically, so images are kept
  whatever the logger (CSVLogger, none: the run directory is then the Trainer's ``default_root_dir``).
``log_figure`` rasterises a matplotlib figure once and logs the pixels the same way. Rank 0 only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Optional, Union

import imageio.v3 as iio
import lightning as L
import numpy as np
from lightning.pytorch.utilities import rank_zero_only
from torch import Tensor

from inr.io.files import atomic_write
from inr.io.run_dir import run_dir, tracker_artifact_dir
from inr.io.video import to_uint8

MEDIA_DIR = "media"


def image_file(root: Union[str, Path], tag: str, step: int) -> Path:
    """Where ``tag`` at ``step`` is kept: one folder per tag component, every character outside
    ``[A-Za-z0-9_.-]`` replaced, so that no tag leaves ``root/media``.

    Example:
        >>> image_file("run", "images/reconstruction/slice_0", 300).as_posix()
        'run/media/images/reconstruction/slice_0/step_000300.png'
        >>> image_file("run", "../x y", 3).as_posix()
        'run/media/_/x_y/step_000003.png'
    """
    parts = [re.sub(r"[^\w.-]", "_", p) for p in tag.split("/") if p]
    parts = ["_" if p in (".", "..") else p for p in parts] or ["_"]
    return Path(root, MEDIA_DIR, *parts, f"step_{step:06d}.png")


def latest_reconstruction(root: Union[str, Path]) -> Optional[Path]:
    """The run's newest picture of its reconstruction: the video of a 3-D grid written at the end of training
    (``media/reconstruction.<ext>``), else the PNG of the latest logged step (``media/images/reconstruction/…``,
    the first slice of a volume); ``None`` when the run logged no image.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> for step in (10, 200):
        ...     _ = write_png(image_file(root, "images/reconstruction", step), np.zeros((2, 2, 1), np.uint8))
        >>> latest_reconstruction(root).relative_to(root).as_posix()
        'media/images/reconstruction/step_000200.png'
    """
    media = Path(root, MEDIA_DIR)
    videos = sorted(media.glob("reconstruction.*"))
    if videos:
        return videos[0]
    frames = list((media / "images" / "reconstruction").rglob("step_*.png"))
    if not frames:
        return None
    latest = max(p.name for p in frames)
    return min(p for p in frames if p.name == latest)  # the first slice of that step


def _hwc(image: Union[Tensor, np.ndarray]) -> np.ndarray:
    """(C, H, W) floats in [0, 1] -> (H, W, C) uint8."""
    array = to_uint8(image)
    return np.ascontiguousarray(np.moveaxis(array, 0, -1))


def write_png(path: Union[str, Path], pixels: np.ndarray) -> Path:
    """(H, W, C) uint8 -> a PNG at ``path`` (gray for C = 1), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as f:
        iio.imwrite(f, pixels[..., 0] if pixels.shape[-1] == 1 else pixels, extension=".png")
    return path


def _send(trainer: L.Trainer, tag: str, pixels: np.ndarray, step: int) -> None:
    """(H, W, C) uint8 to every logger that shows images."""
    for logger in trainer.loggers:
        experiment = getattr(logger, "experiment", None)
        if hasattr(experiment, "add_image"):  # TensorBoard's SummaryWriter
            experiment.add_image(tag, pixels, step, dataformats="HWC")
        elif callable(getattr(logger, "log_image", None)):  # WandbLogger and loggers that follow it
            logger.log_image(key=tag, images=[pixels], step=step)
        elif hasattr(experiment, "log_image") and getattr(logger, "run_id", None):  # MLflow's client
            if tracker_artifact_dir(logger) is None:  # else the PNG file below is already the run's artifact
                experiment.log_image(logger.run_id, pixels, artifact_file=image_file("", tag, step).as_posix())
        elif hasattr(experiment, "log_image"):  # Comet's experiment
            experiment.log_image(pixels, name=tag, step=step)


@rank_zero_only
def log_image(trainer: L.Trainer, tag: str, image: Union[Tensor, np.ndarray], step: int) -> Path:
    """Log a (C, H, W) image in [0, 1] under ``tag`` to every image-capable logger and as a PNG file; returns the file."""
    if isinstance(image, Tensor):
        image = image.detach().float().cpu()
    pixels = _hwc(image)
    _send(trainer, tag, pixels, step)
    return write_png(image_file(run_dir(trainer), tag, step), pixels)


def figure_pixels(figure: Any) -> np.ndarray:
    """A matplotlib figure drawn by the Agg renderer -> (H, W, 3) uint8 (as TensorBoard's ``add_figure``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()  # (H, W, 4) -> (H, W, 3)


@rank_zero_only
def log_figure(trainer: L.Trainer, tag: str, figure: Any, step: int, close: bool = True) -> Path:
    """Log a matplotlib figure like an image (rasterised once); ``close`` releases a pyplot figure afterwards."""
    pixels = figure_pixels(figure)
    _send(trainer, tag, pixels, step)
    path = write_png(image_file(run_dir(trainer), tag, step), pixels)
    if close and "matplotlib.pyplot" in sys.modules:  # figures built on Figure() directly need no closing
        sys.modules["matplotlib.pyplot"].close(figure)
    return path
