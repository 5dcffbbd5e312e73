"""``IoU``: intersection over union of a thresholded occupancy, updated without reading values on the host."""

from __future__ import annotations

from torch import Tensor
from torchmetrics.classification import BinaryJaccardIndex


class IoU(BinaryJaccardIndex):
    """``BinaryJaccardIndex`` of probabilities, thresholded on the device before torchmetrics sees them.

    For floating-point predictions torchmetrics first checks on the host whether they lie in [0, 1] (to pass
    logits through a sigmoid), once per update. Probabilities need no such check: ``p > threshold`` gives the
    labels its own thresholding would. Predictions must be probabilities (the volume task's ``postprocess``).

    Example:
        >>> import torch
        >>> metric = IoU(threshold=0.5)
        >>> metric.update(torch.tensor([0.9, 0.8, 0.2, 0.6]), torch.tensor([1.0, 0.0, 0.0, 1.0]))
        >>> round(float(metric.compute()), 4)  # P = {0, 1, 3}, O = {0, 3}: |P ∩ O| / |P ∪ O| = 2/3
        0.6667
    """

    def update(self, preds: Tensor, target: Tensor) -> None:
        super().update(preds > self.threshold if preds.is_floating_point() else preds, target)
