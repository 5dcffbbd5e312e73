"""``iou`` and ``IoU`` against the closed form (counts of the two sets), torchmetrics' Jaccard index where the union
is not empty, each other over chunked updates, and their one empty-set rule (both sets empty: 1)."""

import numpy as np
import pytest
import torch
from torchmetrics.functional.classification import binary_jaccard_index

from inr.metrics import IoU, iou


def test_iou_is_the_closed_form_of_the_counts():
    pred = np.array([1, 1, 0, 1, 0, 0, 1], dtype=bool)
    target = np.array([1, 0, 0, 1, 1, 0, 0], dtype=bool)
    assert iou(pred, target) == 2 / 5  # |P ∩ T| = 2 (0, 3), |P ∪ T| = 5 (0, 1, 3, 4, 6)
    assert iou(torch.from_numpy(pred), torch.from_numpy(target).float()) == 2 / 5  # tensors, 0/1 labels
    assert iou(pred, pred) == 1.0 and iou(pred, ~pred) == 0.0


def test_iou_equals_torchmetrics_where_the_union_is_not_empty():
    gen = torch.Generator().manual_seed(0)
    p, t = torch.rand(5000, generator=gen), torch.rand(5000, generator=gen) > 0.7
    expected = float(binary_jaccard_index(p, t.long(), threshold=0.5))
    assert iou(p > 0.5, t) == pytest.approx(expected, abs=1e-7)  # torchmetrics divides in float32


def test_the_metric_over_chunks_is_iou_of_all_points():
    gen = torch.Generator().manual_seed(1)
    p, t = torch.rand(1000, 1, generator=gen), (torch.rand(1000, 1, generator=gen) > 0.6).float()
    metric = IoU(threshold=0.5)
    for chunk in torch.arange(1000).split(300):
        metric.update(p[chunk], t[chunk])
    assert float(metric.compute()) == pytest.approx(iou(p > 0.5, t), abs=1e-7)


def test_both_sets_empty_score_one_in_the_function_and_the_metric():
    empty = torch.zeros(10)
    assert iou(empty, empty) == 1.0
    metric = IoU(threshold=0.5)
    metric.update(empty, empty)
    assert float(metric.compute()) == 1.0
    metric.reset()
    metric.update(empty, torch.ones(10))  # nothing predicted where everything is inside: no overlap
    assert float(metric.compute()) == 0.0
    with pytest.raises(ValueError, match="differ in shape"):
        iou(torch.zeros(3), torch.zeros(4))
