"""Metrics shared by tasks, baselines and tables, each defined once: PSNR (functional and metric), SSIM, IoU
(functional and metric). The modules are named apart from the functions they define, so ``inr.metrics.psnr`` is
always the function (a submodule of the same name, imported afresh, would replace it on the package)."""

from inr.metrics.jaccard import IoU, iou
from inr.metrics.peak_signal import PSNR, psnr, psnr_from_mse
from inr.metrics.structural import SSIM_MIN_SIDE, ssim

__all__ = ["IoU", "PSNR", "SSIM_MIN_SIDE", "iou", "psnr", "psnr_from_mse", "ssim"]
