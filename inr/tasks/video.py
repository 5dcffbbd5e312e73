"""``VideoFitting``: a clip as a field (t, y, x) -> colour, scored by PSNR and per-frame SSIM."""

from __future__ import annotations

from torch import Tensor

from inr.metrics import psnr, ssim
from inr.modes import eval_mode
from inr.tasks.base import INRModule
from inr.tasks.image import ImageFitting


class VideoFitting(ImageFitting):
    """An ``ImageFitting`` over 3-D coordinates (``in_dim: 3``): MSE loss, colours clamped to [0, 1], PSNR
    on the training and held-out points, and SSIM per frame (``inr.metrics.ssim`` of the frames, their mean):
    ``val/ssim`` on the held-out frames, ``full/ssim`` (with ``full/psnr``) on the whole clip in the closing summary."""

    default_in_dim = 3
    stackable = True  # evaluate hands a stacked task to its members

    def on_heldout_grid(self, pred: Tensor, target: Tensor) -> dict[str, float]:
        value = ssim(pred.transpose(0, 1), target.transpose(0, 1), name="val/ssim")  # (C, T, H, W) -> (T, C, H, W)
        return {} if value is None else {"ssim": value}

    def evaluate(self) -> dict[str, float]:
        """Train/held-out PSNR, plus PSNR and per-frame SSIM of the whole clip rendered at its resolution."""
        if self.stack is not None:
            return self.stack.evaluate()
        results = INRModule.evaluate(self)
        with eval_mode(self):
            pred, target = self.render(), self.target_grid()  # (C, T, H, W)
        results["full/psnr"] = psnr(pred, target)
        value = ssim(pred.transpose(0, 1), target.transpose(0, 1), name="full/ssim")  # the frames' mean
        if value is not None:
            results["full/ssim"] = value
        return results
