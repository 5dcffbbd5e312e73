"""``ImageFitting``: an image as a field (y, x) -> colour, trained with MSE and scored by PSNR and SSIM."""

from __future__ import annotations

from typing import Any, Optional

from torch import Tensor
from torchmetrics import MetricCollection

from inr.encoders import Encoder
from inr.metrics import PSNR, psnr, ssim
from inr.modes import eval_mode
from inr.tasks.base import INRModule, NetworkFactory
from inr.tasks.output_bias import apply_output_bias, check_output_bias


class ImageFitting(INRModule):
    """Fits colours in [0, 1]; the default network ends in a sigmoid (Tancik et al. 2020, 2D regression).

    Metrics: PSNR = 10 log10(1 / MSE) on the train and held-out pixels, and SSIM of the held-out pixels
    as an image (for ``every_other`` the [1::2, 1::2] sub-image), logged as ``val/ssim``.
    Predictions are clamped to [0, 1] before scoring, so a network without a sigmoid is scored fairly.

    Args: as ``INRModule``; ``output_bias``: ``init`` keeps the initialisation's output bias (the paper's),
    ``data`` starts the network at the mean colour of the training pixels (``inr.tasks.output_bias``).
    """

    default_in_dim = 2
    default_output_activation = "sigmoid"
    stackable = True  # evaluate hands a stacked task to its members

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 3,
        output_bias: str = "init",
        **kwargs: Any,
    ) -> None:
        super().__init__(encoder, network, out_channels, **kwargs)
        self.output_bias = check_output_bias(output_bias, self.stack is not None, self.init_from)

    def setup(self, stage: str) -> None:
        super().setup(stage)
        if getattr(self.trainer, "datamodule", None) is not None:
            apply_output_bias(self, stage, lambda: self.data.values[self.data.train_index].mean(0))

    def postprocess(self, raw: Tensor) -> Tensor:
        return raw.clamp(0.0, 1.0)

    def make_metrics(self) -> MetricCollection:
        return MetricCollection({"psnr": PSNR(data_range=1.0)})

    def evaluate(self) -> dict[str, float]:
        """Train/held-out PSNR, plus PSNR and SSIM of the whole image rendered at the data's resolution."""
        if self.stack is not None:
            return self.stack.evaluate()
        results = super().evaluate()
        with eval_mode(self):
            pred, target = self.render()[None], self.target_grid()[None]  # (1, C, H, W)
        results["full/psnr"] = psnr(pred, target)
        value = ssim(pred, target, name="full/ssim")
        if value is not None:
            results["full/ssim"] = value
        return results

    def on_heldout_grid(self, pred: Tensor, target: Tensor) -> dict[str, float]:
        value = ssim(pred, target, name="val/ssim")  # (C, H, W)
        return {} if value is None else {"ssim": value}
