"""Training metrics whose per-step update never waits for the device: ``PSNR`` and ``IoU``.

A training step that reads a value on the host makes the host wait for the device, and on a GPU the host can
then never run ahead to hide its own per-step work behind the device's (tests/tasks/test_no_host_reads.py).

``PSNR``: torchmetrics' update counts the observations as ``tensor(target.numel(), device=target.device)``: on a GPU
that is a host-to-device copy from pageable memory, which blocks the host until the device has finished
everything queued before it, once per training step. Here the count is added to the state as a Python
number (a kernel argument). The states, ``compute`` and the value are torchmetrics' own:
PSNR = 10 log₁₀(R² / (Σ(p − t)² / n)), R the data range.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torchmetrics.classification import BinaryJaccardIndex
from torchmetrics.image import PeakSignalNoiseRatio


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


class IoU(BinaryJaccardIndex):
    """``BinaryJaccardIndex`` of probabilities, thresholded on the device before torchmetrics sees them.

    For floating-point predictions torchmetrics first checks on the host whether they lie in [0, 1] (to pass
    logits through a sigmoid), once per update. Probabilities need no such check: ``p > threshold`` gives the
    labels its own thresholding would. Predictions must be probabilities (the volume task's ``postprocess``).

    Example:
        >>> metric = IoU(threshold=0.5)
        >>> metric.update(torch.tensor([0.9, 0.8, 0.2, 0.6]), torch.tensor([1.0, 0.0, 0.0, 1.0]))
        >>> round(float(metric.compute()), 4)  # P = {0, 1, 3}, O = {0, 3}: |P ∩ O| / |P ∪ O| = 2/3
        0.6667
    """

    def update(self, preds: Tensor, target: Tensor) -> None:
        super().update(preds > self.threshold if preds.is_floating_point() else preds, target)
