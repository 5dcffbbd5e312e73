"""Torchmetrics over ``inr.geometry``: the surface measures of a predicted mesh against the ground truth.

``SurfaceDistances`` holds, per update (one predicted surface against its reference), the four measures of
``inr.geometry.surface_metrics.surface_distances``; ``compute`` returns their means over the updates, so a
set of shapes is scored as the mean over shapes. The distances themselves are numpy (k-d trees), the states
tensors, so the metric resets, syncs and logs like any other.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor
from torchmetrics import Metric

from inr.geometry.surface_metrics import METRICS, surface_distances


def _numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, Tensor) else np.asarray(x)


class SurfaceDistances(Metric):
    """Chamfer-L1, Chamfer-L2, normal consistency and F-score@τ, each the mean over updates.

    Example:
        >>> g = torch.tensor([[0.0, 0, 0], [1, 0, 0]])
        >>> n = torch.tensor([[0.0, 0, 1], [0, 0, 1]])
        >>> metric = SurfaceDistances(tau=0.05)
        >>> metric.update(g + torch.tensor([0, 0, 0.1]), n, g, n)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items()}
        {'chamfer_l1': 0.1, 'chamfer_l2': 0.01, 'normal_consistency': 1.0, 'fscore': 0.0}
    """

    full_state_update = False
    higher_is_better = None

    def __init__(self, tau: float = 0.01, **kwargs) -> None:
        super().__init__(**kwargs)
        self.tau = tau
        self.add_state("sums", default=torch.zeros(len(METRICS), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, pred_points, pred_normals, gt_points, gt_normals) -> None:
        scores = surface_distances(_numpy(pred_points), _numpy(pred_normals), _numpy(gt_points), _numpy(gt_normals), self.tau)
        self.sums += torch.tensor([scores[k] for k in METRICS], dtype=torch.float64, device=self.sums.device)
        self.count += 1

    def compute(self) -> dict[str, Tensor]:
        return {k: (self.sums[i] / self.count).float() for i, k in enumerate(METRICS)}
