"""``FieldWriter``: the prediction writer of ``inr-train predict``; each rendered grid becomes files.

The predict loop runs on Lightning's ``predict_dataloader`` of the DataModule, one render request
``{"shape": [...]}`` per batch (``GridDataModule.predict_shape``); the task's ``predict_step`` renders the
field on that grid, chunked (``INRModule.render``); this writer turns it into the files of
``inr.export.render`` in its output folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import lightning as L
from lightning.pytorch.callbacks import BasePredictionWriter

from inr.export.render import write_field


def field_kind(pl_module: L.LightningModule, ndim: int) -> str:
    """``signal`` / ``image`` for 1-D / 2-D grids; a 3-D grid is a ``video`` for ``VideoFitting`` (frames), the
    ``views`` of a ``RadianceFieldFitting`` (colour, depth, accumulation), else a ``volume``."""
    from inr.tasks.radiance import RadianceFieldFitting
    from inr.tasks.video import VideoFitting

    if isinstance(pl_module, RadianceFieldFitting):
        return "views"
    if ndim == 3:
        return "video" if isinstance(pl_module, VideoFitting) else "volume"
    return {1: "signal", 2: "image"}.get(ndim, "volume")


class FieldWriter(BasePredictionWriter):
    """Writes each predicted grid (C, *shape) into ``output_dir`` (``inr.export.render.write_field``).

    Args:
        output_dir: the folder of the files; None: ``<run dir>/predictions``, read when prediction starts.
        video: ``mp4`` | ``webm`` | ``gif`` | None, the video of a 3-D grid.
        fps: frames per second of that video.
    """

    supports_members = True  # a stacked model's predict_step renders the one member chosen (--member k)
    run_dir_exempt = True  # writes where predict --out says (inr.run.preflight.check_paths_inside_run)

    def __init__(self, output_dir: Optional[str] = None, video: Optional[str] = None, fps: float = 8.0) -> None:
        super().__init__(write_interval="batch")
        self.output_dir, self.video, self.fps = output_dir, video, fps
        self.written: list[Path] = []
        self.shapes: list[tuple[int, ...]] = []

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if self.output_dir is None:
            from inr.io.run_dir import run_dir

            self.output_dir = str(run_dir(trainer) / "predictions")

    def write_on_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        prediction: Any,
        batch_indices: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int,
    ) -> None:
        if not trainer.is_global_zero:
            return
        shape = tuple(prediction.shape[1:])
        self.shapes.append(shape)
        kind = field_kind(pl_module, len(shape))
        self.written += write_field(prediction, Path(self.output_dir), kind, video=self.video, fps=self.fps)
