"""``VolumeFitting``: a voxel volume as a field (z, y, x) -> occupancy logit or density.

``occupancy``: the network outputs a logit ℓ; loss = BCE-with-logits(ℓ, o) = −[o log σ(ℓ) + (1 − o) log(1 − σ(ℓ))];
``postprocess`` = σ(ℓ), the occupancy probability; metric IoU = |P ∩ O| / |P ∪ O| with P = {σ(ℓ) > 0.5}
(``inr.metrics.IoU``; 1 when both sets are empty: the prediction agrees), the measure of the 3D shape
experiment of Tancik et al. 2020. ``density``: loss MSE on values in [0, 1], metrics MSE and PSNR.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torchmetrics import MetricCollection
from torchmetrics.regression import MeanSquaredError

from inr.encoders import Encoder
from inr.errors import InputError
from inr.metrics import PSNR, IoU
from inr.networks import MLP
from inr.tasks.base import INRModule, NetworkFactory

VOLUME_MODES = ("occupancy", "density")


class VolumeFitting(INRModule):
    """Fits occupancy (logits, BCE) or density (MSE) on a 3D grid; see the module docstring.

    Args:
        mode: ``occupancy`` or ``density``. The CLI takes it from ``data.mode`` (so a config says it once);
            in Python, give the DataModule's mode (default ``occupancy``).
        encoder, network, out_channels, optimizer, scheduler, render_chunk, cache_encoding, compile: as in
            ``INRModule``; the encoder takes 3-D coordinates (``in_dim: 3``). The default network is a
            3×256 ReLU MLP with a linear output for occupancy (logits) and a sigmoid for density. An
            occupancy network must not end in a sigmoid (the loss applies it).
    """

    default_in_dim = 3

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 1,
        *,
        mode: Optional[Literal["occupancy", "density"]] = None,
        **kwargs: Any,
    ) -> None:
        mode = mode or "occupancy"
        if mode not in VOLUME_MODES:
            raise InputError(f"model.mode: unknown mode {mode!r}; choose {' or '.join(VOLUME_MODES)}")
        self.mode = mode  # read by make_metrics during INRModule.__init__
        if network is None:
            network = partial(MLP, width=256, depth=3, output_activation="none" if mode == "occupancy" else "sigmoid")
        super().__init__(encoder, network, out_channels, **kwargs)
        if mode == "occupancy" and any(isinstance(m, nn.Sigmoid) for m in list(self.network.modules())[-1:]):
            raise InputError("model.network: occupancy mode trains logits; use output_activation: none")

    def loss(self, raw: Tensor, target: Tensor) -> Tensor:
        if self.mode == "occupancy":
            return F.binary_cross_entropy_with_logits(raw, target)
        return F.mse_loss(raw, target)

    def postprocess(self, raw: Tensor) -> Tensor:
        return torch.sigmoid(raw) if self.mode == "occupancy" else raw.clamp(0.0, 1.0)

    def make_metrics(self) -> MetricCollection:
        if self.mode == "occupancy":
            return MetricCollection({"iou": IoU(threshold=0.5)})
        return MetricCollection({"mse": MeanSquaredError(), "psnr": PSNR(data_range=1.0)})

    def make_train_metrics(self) -> MetricCollection:
        """The held-out metrics, but for occupancy without torchmetrics' per-update checks: that the targets are
        0 or 1 (a ``unique`` over the batch every step; the held-out metric keeps the check and meets the same
        volume at the sanity check before training) and whether the predictions are probabilities (``IoU``)."""
        if self.mode == "occupancy":
            return MetricCollection({"iou": IoU(threshold=0.5, validate_args=False)})
        return self.make_metrics()

    def setup(self, stage: str) -> None:
        super().setup(stage)
        data_mode = getattr(getattr(self.trainer, "datamodule", None), "mode", self.mode)
        if data_mode != self.mode:
            raise InputError(f"model.mode is {self.mode!r} but data.mode is {data_mode!r}; set both to the same")
