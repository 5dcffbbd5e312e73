"""PSNR, the one definition every metric, table and baseline of the package uses: ``psnr`` and ``PSNR``.

PSNR = 10 log₁₀(R² / MSE) dB, MSE = mean((p − t)²) over every value, R the data range (1 for images in
[0, 1], 2 for signals in [−1, 1]). Predictions are scored as they are, **not clipped**: a method that bounds
its output (a sigmoid, or a baseline that clips to [0, 1] as part of its reconstruction) does so itself, and
the score is of what it returns. An exact prediction scores +∞. ``psnr`` computes in float64 (torchmetrics
converts to dB in float32: a relative error near 5e-8, 3e-6 dB at 60 dB); ``PSNR`` accumulates the squared
error like torchmetrics and converts with the same float64 formula (``psnr_from_mse``).

The metric's per-step update never waits for the device:

A training step that reads a value on the host makes the host wait for the device, and on a GPU the host can
then never run ahead to hide its own per-step work behind the device's (tests/tasks/test_no_host_reads.py).

``PSNR``: torchmetrics' update counts the observations as ``tensor(target.numel(), device=target.device)``: on a GPU
that is a host-to-device copy from pageable memory, which blocks the host until the device has finished
everything queued before it, once per training step. Here the count is added to the state as a Python
number (a kernel argument). The states, ``compute`` and the value are torchmetrics' own:
the value is ``psnr_from_mse(Σ(p − t)² / n, R)``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torchmetrics.image import PeakSignalNoiseRatio


def psnr_from_mse(mse: Tensor | float, data_range: float = 1.0) -> float:
    """10 log₁₀(R² / mse) in dB, in float64; +∞ for mse = 0.

    Example:
        >>> psnr_from_mse(0.01), psnr_from_mse(0.0)
        (20.0, inf)
    """
    mse = float(mse)
    return math.inf if mse == 0.0 else 10.0 * math.log10(data_range**2 / mse)


def psnr(pred: Tensor, target: Tensor, data_range: float = 1.0) -> float:
    """PSNR = 10 log₁₀(R² / mean((p − t)²)) dB of ``pred`` against ``target`` (any equal shapes), in float64, unclipped.

    Example:
        >>> zero, tenth = torch.zeros(4, dtype=torch.float64), torch.full((4,), 0.1, dtype=torch.float64)
        >>> psnr(zero, tenth), psnr(zero, tenth, data_range=2.0)
        (20.0, 26.020599913279625)
    """
    if pred.shape != target.shape:
        raise ValueError(f"psnr: prediction {tuple(pred.shape)} and target {tuple(target.shape)} differ in shape")
    diff = pred.detach().double() - target.detach().double().to(pred.device)
    return psnr_from_mse(torch.mean(diff * diff), data_range)


class PSNR(PeakSignalNoiseRatio):
    """``PeakSignalNoiseRatio`` with the same arguments and results; see the module docstring for the change.

    Example:
        >>> metric = PSNR(data_range=1.0)
        >>> metric.update(torch.zeros(4), torch.full((4,), 0.1))
        >>> round(float(metric.compute()), 4)
        20.0
    """

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.dim is not None or self.clamping_fn is not None:  # the per-dimension and clamped forms as they are
            super().update(preds, target)
            return
        preds = preds if preds.is_floating_point() else preds.to(torch.float32)
        target = target if target.is_floating_point() else target.to(torch.float32)
        self.sum_squared_error += torch.sum(torch.pow(preds - target, 2))
        self.total += target.numel()

    def compute(self) -> Tensor:
        if self.dim is not None or self.clamping_fn is not None:
            return super().compute()
        value = psnr_from_mse(self.sum_squared_error.double() / self.total, self.data_range.item())
        return torch.tensor(value, dtype=torch.float32, device=self.sum_squared_error.device)
