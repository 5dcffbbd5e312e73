"""Surface samples: uniform by area, on their triangles, with their triangles' normals."""

import numpy as np

from inr.geometry.sampling import face_normals_and_areas, near_surface, sample_surface


def test_samples_fall_on_triangles_in_proportion_to_area():
    # two triangles in the planes z = 0 (area ½) and z = 1 (area 3/2)
    verts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [3, 0, 1], [0, 1, 1]])
    faces = np.array([[0, 1, 2], [3, 4, 5]])
    n = 100_000
    p, normals = sample_surface(verts, faces, n, np.random.default_rng(0))
    upper = np.isclose(p[:, 2], 1.0, atol=1e-12)
    assert (upper | np.isclose(p[:, 2], 0.0, atol=1e-12)).all()
    assert abs(upper.mean() - 0.75) < 5 * np.sqrt(0.75 * 0.25 / n)  # 5 standard errors of a binomial share
    assert np.allclose(normals, [0, 0, 1])
    # inside their triangles: x/3 + y ≤ 1 on the upper one, x + y ≤ 1 on the lower one
    assert (p[upper, 0] / 3 + p[upper, 1] <= 1 + 1e-12).all() and (p[~upper, :2].sum(1) <= 1 + 1e-12).all()
    # uniform within a triangle: the mean is its centroid (1/3, 1/3) for the lower one
    assert np.allclose(p[~upper, :2].mean(0), [1 / 3, 1 / 3], atol=0.01)


def test_normals_and_areas_and_near_surface_noise():
    verts = np.array([[0.0, 0, 0], [2, 0, 0], [0, 2, 0]])
    normals, areas = face_normals_and_areas(verts, np.array([[0, 1, 2], [0, 2, 1]]))
    assert np.allclose(normals, [[0, 0, 1], [0, 0, -1]]) and np.allclose(areas, 2.0)
    near = near_surface(verts, np.array([[0, 1, 2]]), 50_000, 0.01, np.random.default_rng(1))
    assert abs(near[:, 2].std() - 0.01) < 0.0002 and abs(near[:, 2].mean()) < 0.0002
