"""IoU, the one definition every task, table and baseline of the package uses: ``iou`` and ``IoU``.

IoU = |P ∩ T| / |P ∪ T| of the predicted inside set P and the true one T (Jaccard index). One empty-set rule: when
both sets are empty the prediction agrees with the target and scores 1 (torchmetrics' default would give 0).
Inside is a nonzero (True) label; the metric thresholds probabilities strictly, p > threshold (p = threshold is
outside), as torchmetrics does.

``IoU`` accumulates the counts of every update (a set of points seen in chunks) and scores their union; it is
updated without reading values on the host: for floating-point predictions torchmetrics first checks on the host
whether they lie in [0, 1] (to pass logits through a sigmoid), once per update. Probabilities need no such check:
``p > threshold`` gives the labels its own thresholding would. Predictions must be probabilities (the volume
task's ``postprocess``).
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np
import torch
from torch import Tensor
from torchmetrics.classification import BinaryJaccardIndex

EMPTY_IOU = 1.0  # both sets empty: the prediction agrees with the target


def iou(pred: Union[Tensor, np.ndarray], target: Union[Tensor, np.ndarray]) -> float:
    """IoU = |P ∩ T| / |P ∪ T| of two sets given as boolean (or 0/1) arrays or tensors of one shape; 1 when both
    are empty.

    Example:
        >>> iou(np.array([True, True, False, True]), np.array([True, False, False, True]))
        0.6666666666666666
        >>> iou(torch.zeros(3, dtype=torch.bool), torch.zeros(3, dtype=torch.bool))
        1.0
    """
    pred, target = torch.as_tensor(pred).bool(), torch.as_tensor(target).bool()
    if pred.shape != target.shape:
        raise ValueError(f"iou: prediction {tuple(pred.shape)} and target {tuple(target.shape)} differ in shape")
    union = int((pred | target.to(pred.device)).sum())
    return int((pred & target.to(pred.device)).sum()) / union if union else EMPTY_IOU


class IoU(BinaryJaccardIndex):
    """``BinaryJaccardIndex`` of probabilities, thresholded on the device before torchmetrics sees them, with the
    empty-set rule of ``iou`` (``zero_division`` 1); its value is ``iou`` of every update's points together.

    Example:
        >>> metric = IoU(threshold=0.5)
        >>> metric.update(torch.tensor([0.9, 0.8, 0.2, 0.6]), torch.tensor([1.0, 0.0, 0.0, 1.0]))
        >>> round(float(metric.compute()), 4)  # P = {0, 1, 3}, O = {0, 3}: |P ∩ O| / |P ∪ O| = 2/3
        0.6667
    """

    def __init__(self, threshold: float = 0.5, zero_division: float = EMPTY_IOU, **kwargs: Any) -> None:
        super().__init__(threshold=threshold, zero_division=zero_division, **kwargs)

    def update(self, preds: Tensor, target: Tensor) -> None:
        super().update(preds > self.threshold if preds.is_floating_point() else preds, target)
