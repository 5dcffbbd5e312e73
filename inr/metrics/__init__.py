"""Metrics shared by tasks, baselines and tables, each defined once: PSNR (functional and metric), SSIM, IoU
(functional and metric)."""

from inr.metrics.iou import IoU, iou
from inr.metrics.psnr import PSNR, psnr, psnr_from_mse
from inr.metrics.ssim import SSIM_MIN_SIDE, ssim

__all__ = ["IoU", "PSNR", "SSIM_MIN_SIDE", "iou", "psnr", "psnr_from_mse", "ssim"]
