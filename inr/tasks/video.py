"""``VideoFitting``: a clip as a field (t, y, x) -> colour, scored by PSNR and per-frame SSIM."""

from __future__ import annotations

from typing import Optional

from torch import Tensor
from torchmetrics.image import StructuralSimilarityIndexMeasure

from inr.metrics import psnr
from inr.modes import eval_mode
from inr.tasks.base import INRModule
from inr.tasks.image import ImageFitting

# torchmetrics' SSIM pads by half its 11-tap window, which needs frames larger than 5 pixels.
SSIM_MIN_SIDE = 6


def frame_ssim(pred: Tensor, target: Tensor) -> Optional[Tensor]:
    """Mean SSIM of the frames of two clips (C, T, H, W), each frame scored as an image; ``None`` when
    frames are under ``SSIM_MIN_SIDE`` pixels on a side."""
    if min(pred.shape[2:]) < SSIM_MIN_SIDE:
        return None
    ssim = StructuralSimilarityIndexMeasure(data_range=1.0, sync_on_compute=False).to(pred.device)
    return ssim(pred.transpose(0, 1), target.transpose(0, 1))  # (C, T, H, W) -> (T, C, H, W)


class VideoFitting(ImageFitting):
    """An ``ImageFitting`` over 3-D coordinates (``in_dim: 3``): MSE loss, colours clamped to [0, 1], PSNR
    on the training and held-out points, and SSIM per frame (``frame_ssim``): ``val/ssim`` on the held-out
    frames, ``full/ssim`` (with ``full/psnr``) on the whole clip in the closing summary."""

    default_in_dim = 3
    stackable = True  # evaluate hands a stacked task to its members

    def on_heldout_grid(self, pred: Tensor, target: Tensor) -> dict[str, Tensor]:
        ssim = frame_ssim(pred, target)
        return {} if ssim is None else {"ssim": ssim}

    def evaluate(self) -> dict[str, float]:
        """Train/held-out PSNR, plus PSNR and per-frame SSIM of the whole clip rendered at its resolution."""
        if self.stack is not None:
            return self.stack.evaluate()
        results = INRModule.evaluate(self)
        with eval_mode(self):
            pred, target = self.render(), self.target_grid()  # (C, T, H, W)
        results["full/psnr"] = psnr(pred, target)
        ssim = frame_ssim(pred, target)
        if ssim is not None:
            results["full/ssim"] = float(ssim)
        return results
