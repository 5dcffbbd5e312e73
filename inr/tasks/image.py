"""``ImageFitting``: an image as a field (y, x) -> colour, trained with MSE and scored by PSNR and SSIM."""

from __future__ import annotations

import warnings

from torch import Tensor
from torchmetrics import MetricCollection
from torchmetrics.image import StructuralSimilarityIndexMeasure

from inr.metrics import PSNR, psnr
from inr.modes import eval_mode
from inr.tasks.base import INRModule

# torchmetrics' SSIM: an 11×11 Gaussian window with reflect padding of 5, which needs 6 pixels per side
SSIM_MIN_SIDE = 6


def ssim_fits(image, name: str) -> bool:
    """Whether SSIM is defined on ``image`` (..., H, W); warns once per name when it is not (too few pixels)."""
    height, width = image.shape[-2:]
    if min(height, width) >= SSIM_MIN_SIDE:
        return True
    warnings.warn(
        f"{name}: SSIM needs at least {SSIM_MIN_SIDE}×{SSIM_MIN_SIDE} pixels and this grid is {height}×{width}; it is not "
        "reported (choose a larger data.resolution)",
        stacklevel=2,
    )
    return False


class ImageFitting(INRModule):
    """Fits colours in [0, 1]; the default network ends in a sigmoid (Tancik et al. 2020, 2D regression).

    Metrics: PSNR = 10 log10(1 / MSE) on the train and held-out pixels, and SSIM of the held-out pixels
    as an image (for ``every_other`` the [1::2, 1::2] sub-image), logged as ``val/ssim``.
    Predictions are clamped to [0, 1] before scoring, so a network without a sigmoid is scored fairly.
    """

    default_in_dim = 2
    default_output_activation = "sigmoid"
    stackable = True  # evaluate hands a stacked task to its members

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
        if ssim_fits(pred, "full/ssim"):
            results["full/ssim"] = float(
                StructuralSimilarityIndexMeasure(data_range=1.0, sync_on_compute=False).to(self.device)(pred, target)
            )
        return results

    def on_heldout_grid(self, pred: Tensor, target: Tensor) -> dict[str, Tensor]:
        if not ssim_fits(pred, "val/ssim"):
            return {}
        ssim = StructuralSimilarityIndexMeasure(data_range=1.0).to(pred.device)
        return {"ssim": ssim(pred[None], target[None])}  # (C, H, W) -> (1, C, H, W)
