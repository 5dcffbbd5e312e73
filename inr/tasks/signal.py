"""``SignalFitting``: a 1D signal as a field t -> amplitude, trained with MSE and scored by PSNR."""

from __future__ import annotations

from typing import Any, Optional

from torchmetrics import MetricCollection
from torchmetrics.regression import MeanSquaredError

from inr.encoders import Encoder
from inr.metrics import PSNR
from inr.tasks.base import INRModule, NetworkFactory


class SignalFitting(INRModule):
    """Fits signals with values in [−1, 1] (``SignalDataModule`` normalises to peak 1) with a linear output.

    Metrics: MSE and PSNR = 10 log10(R² / MSE) with the peak-to-peak range R = ``data_range`` (2 for
    [−1, 1]), on the training samples and on the held-out samples (the odd ones for ``every_other``).
    Predictions are not clamped, so a signal of any range can be fitted (set ``data_range`` to match).

    Args:
        data_range: R of the PSNR.
        encoder, network, out_channels, optimizer, scheduler, render_chunk, cache_encoding, compile: as in
            ``INRModule``; the encoder takes 1-D coordinates (``in_dim: 1``).
    """

    default_in_dim = 1
    default_output_activation = "none"

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 1,
        *,
        data_range: float = 2.0,
        **kwargs: Any,
    ) -> None:
        self.data_range = data_range  # read by make_metrics during INRModule.__init__
        super().__init__(encoder, network, out_channels, **kwargs)

    def make_metrics(self) -> MetricCollection:
        return MetricCollection({"mse": MeanSquaredError(), "psnr": PSNR(data_range=self.data_range)})
