"""Chamfer distances, normal consistency and F-score (IoU: tests/metrics/test_iou.py): a perfect prediction, closed forms, and a brute-force
reference for the nearest neighbours; the torchmetrics module agrees with the function."""

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist

from inr.geometry.procedural import torus_mesh
from inr.geometry.sampling import sample_surface
from inr.geometry.surface_metrics import surface_distances
from inr.metrics.geometry import SurfaceDistances


def torus_samples(n, seed):
    verts, faces = torus_mesh(0.35, 0.12, segments=64, sides=32)
    return sample_surface(verts, faces, n, np.random.default_rng(seed))


def test_a_perfect_prediction_scores_chamfer_0_normals_1_fscore_1():
    p, n = torus_samples(5000, 0)
    scores = surface_distances(p, n, p, -n, tau=1e-6)  # flipped normals: orientation does not count
    assert scores == {"chamfer_l1": 0.0, "chamfer_l2": 0.0, "normal_consistency": 1.0, "fscore": 1.0}


def test_the_measures_equal_a_brute_force_computation():
    p, n = torus_samples(1500, 1)
    g, m = torus_samples(2000, 2)
    p = p + np.random.default_rng(3).normal(0, 0.01, p.shape)
    d = cdist(p, g)  # (1500, 2000), float64
    to_g, to_p = d.min(1), d.min(0)
    nc = 0.5 * (np.abs((n * m[d.argmin(1)]).sum(1)).mean() + np.abs((m * n[d.argmin(0)]).sum(1)).mean())
    prec, rec = (to_g < 0.02).mean(), (to_p < 0.02).mean()
    expected = {
        "chamfer_l1": 0.5 * (to_g.mean() + to_p.mean()),
        "chamfer_l2": 0.5 * ((to_g**2).mean() + (to_p**2).mean()),
        "normal_consistency": nc,
        "fscore": 2 * prec * rec / (prec + rec),
    }
    got = surface_distances(p, n, g, m, tau=0.02)
    for k in expected:
        assert got[k] == pytest.approx(expected[k], rel=1e-12), k


def test_a_sphere_against_a_larger_one_is_their_radius_difference_away():
    """Both surfaces densely sampled: every nearest distance is close to |r₁ − r₂| = 0.05."""
    rng = np.random.default_rng(4)
    u = rng.normal(size=(20000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    scores = surface_distances(0.30 * u, u, 0.35 * u[::-1], u[::-1], tau=0.06)
    assert scores["chamfer_l1"] == pytest.approx(0.05, abs=0.002)
    assert scores["chamfer_l2"] == pytest.approx(0.0025, abs=0.0002)
    assert scores["fscore"] == 1.0 and scores["normal_consistency"] > 0.99


def test_the_metric_module_is_the_mean_of_the_function_over_updates():
    pairs = [(torus_samples(800, s), torus_samples(900, s + 10)) for s in range(2)]
    metric = SurfaceDistances(tau=0.01)
    for (p, n), (g, m) in pairs:
        metric.update(torch.from_numpy(p + 0.003), torch.from_numpy(n), torch.from_numpy(g), torch.from_numpy(m))
    computed = metric.compute()
    for k in computed:
        mean = np.mean([surface_distances(p + 0.003, n, g, m, 0.01)[k] for (p, n), (g, m) in pairs])
        assert float(computed[k]) == pytest.approx(mean, rel=1e-6), k
