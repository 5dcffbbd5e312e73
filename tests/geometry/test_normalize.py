"""The paper's normalisation and box: a known mesh lands where the closed form says."""

import numpy as np
import pytest
import trimesh

from inr.geometry.normalize import BOX_MARGIN, bounding_box, normalize_vertices, uniform_in_box


def test_a_box_mesh_is_recentred_into_the_unit_cube_as_the_notebook_does():
    # an axis-aligned box 4 × 2 × 1 centred at (10, -5, 3): mean vertex = centre, max |v − c| = 2
    mesh = trimesh.creation.box(extents=(4.0, 2.0, 1.0))
    verts = np.asarray(mesh.vertices) + [10.0, -5.0, 3.0]
    v, scale, centre = normalize_vertices(verts)
    assert scale == 2.0 and np.allclose(centre, [10.0, -5.0, 3.0])
    # v' = ½((v − c)/s + 1): x ∈ ½(±1 + 1) = [0, 1], y ∈ ½(±½ + 1) = [¼, ¾], z ∈ [3/8, 5/8]
    assert np.allclose(v.min(0), [0.0, 0.25, 0.375]) and np.allclose(v.max(0), [1.0, 0.75, 0.625])
    box = bounding_box(v)
    assert np.allclose(
        box, [[-BOX_MARGIN, 0.25 - BOX_MARGIN, 0.375 - BOX_MARGIN], [1 + BOX_MARGIN, 0.75 + BOX_MARGIN, 0.625 + BOX_MARGIN]]
    )
    # the formula, checked on an asymmetric set in float64 by hand
    tet = np.array([[0.0, 0, 0], [3, 0, 0], [0, 1, 0], [1, 1, 4]])  # mean (1, 0.5, 1), max |v − c| = 3 (z of the last)
    v, scale, centre = normalize_vertices(tet)
    assert scale == 3.0 and np.allclose(v, 0.5 * ((tet - [1, 0.5, 1]) / 3 + 1))


def test_points_are_uniform_in_the_box():
    box = np.array([[0.1, 0.2, 0.3], [0.5, 0.4, 1.3]])
    p = uniform_in_box(box, 200_000, np.random.default_rng(0))
    assert (p >= box[0]).all() and (p < box[1]).all()
    # mean and variance of U[a, b]: (a + b)/2 and (b − a)²/12; 5 standard errors
    n = len(p)
    assert np.all(np.abs(p.mean(0) - box.mean(0)) < 5 * (box[1] - box[0]) / np.sqrt(12 * n))
    assert np.allclose(p.var(0), (box[1] - box[0]) ** 2 / 12, rtol=0.02)


def test_a_single_point_cannot_be_normalised():
    with pytest.raises(ValueError, match="same point"):
        normalize_vertices(np.ones((3, 3)))
