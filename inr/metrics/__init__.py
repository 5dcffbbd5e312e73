"""Metrics shared by tasks, baselines and tables: one PSNR (functional and metric), IoU."""

from inr.metrics.iou import IoU
from inr.metrics.psnr import PSNR, psnr, psnr_from_mse

__all__ = ["IoU", "PSNR", "psnr", "psnr_from_mse"]
