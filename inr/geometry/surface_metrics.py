"""How close one surface is to another, from points sampled on both: Chamfer distances, normal consistency, F-score.

With P the points on the predicted surface, G those on the ground truth, and NN_X(p) the nearest point of X:
- Chamfer-L1 = ½ (mean_{p∈P} |p − NN_G(p)| + mean_{g∈G} |g − NN_P(g)|), Euclidean distances (the "Chamfer-L1" of
  Mescheder et al. 2019, Occupancy Networks, supplement: the L1 is the mean of unsquared distances);
- Chamfer-L2 = ½ (mean |p − NN_G(p)|² + mean |g − NN_P(g)|²), squared distances;
- normal consistency = ½ (mean |n_p · n_NN_G(p)| + mean |n_g · n_NN_P(g)|), unit normals, absolute value so the
  orientation of either surface does not matter (Mescheder et al. 2019);
- F-score@τ = 2·prec·rec / (prec + rec), prec = fraction of P within τ of G, rec = fraction of G within τ of P
  (Tatarchenko et al. 2019, "What do single-view 3D reconstruction networks learn?"); 0 when both are 0.
Distances are in the units of the points (here the paper's normalised frame, where the shape spans at most 1).
Nearest neighbours by scipy's k-d tree, exact.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

METRICS = ("chamfer_l1", "chamfer_l2", "normal_consistency", "fscore")


def nearest(queries: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distances (N,) and indices (N,) of each query's nearest point (exact k-d tree search)."""
    distance, index = cKDTree(points).query(queries, k=1, workers=-1)
    return distance, index


def surface_distances(
    pred_points: np.ndarray,
    pred_normals: np.ndarray,
    gt_points: np.ndarray,
    gt_normals: np.ndarray,
    tau: float = 0.01,
) -> dict[str, float]:
    """The four measures of the module docstring between point sets (N, 3) and (M, 3) with unit normals.

    Example:
        >>> g = np.array([[0.0, 0, 0], [1, 0, 0]])
        >>> n = np.array([[0.0, 0, 1], [0, 0, 1]])
        >>> p = g + [0, 0, 0.1]  # the same points lifted by 0.1
        >>> {k: round(v, 6) for k, v in surface_distances(p, n, g, n, tau=0.05).items()}
        {'chamfer_l1': 0.1, 'chamfer_l2': 0.01, 'normal_consistency': 1.0, 'fscore': 0.0}
    """
    if len(pred_points) == 0 or len(gt_points) == 0:
        raise ValueError("surface distances need points on both surfaces")
    to_gt, nn_gt = nearest(pred_points, gt_points)  # precision side: P -> G
    to_pred, nn_pred = nearest(gt_points, pred_points)  # completeness side: G -> P
    consistency_p = np.abs((pred_normals * gt_normals[nn_gt]).sum(axis=1))
    consistency_g = np.abs((gt_normals * pred_normals[nn_pred]).sum(axis=1))
    precision, recall = float((to_gt < tau).mean()), float((to_pred < tau).mean())
    fscore = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "chamfer_l1": float(0.5 * (to_gt.mean() + to_pred.mean())),
        "chamfer_l2": float(0.5 * (np.square(to_gt).mean() + np.square(to_pred).mean())),
        "normal_consistency": float(0.5 * (consistency_p.mean() + consistency_g.mean())),
        "fscore": fscore,
    }
