"""Inside/outside and signed distance of tessellated spheres and tori against their closed forms.

A tessellation lies within ``gap`` of the true surface (the chords' sagitta for the torus; r minus the
smallest distance from the centre to a face plane for the inscribed sphere). Tolerances: every point farther
than ``gap`` from the true surface has the true inside/outside label (no exceptions), and every signed distance
is within ``gap`` (+10⁻⁹ of rounding) of the closed form.
"""

import math

import numpy as np
import pytest
import trimesh

from inr.geometry.containment import fast_winding_number, solid_angles, winding_number
from inr.geometry.distance import MeshQueries
from inr.geometry.procedural import torus_mesh

R, A = 0.35, 0.12  # the torus's radii
SEGMENTS, SIDES = 64, 24


def torus():
    verts, faces = torus_mesh(R, A, segments=SEGMENTS, sides=SIDES)
    gap = (R + A) * (1 - math.cos(math.pi / SEGMENTS)) + A * (1 - math.cos(math.pi / SIDES))
    return verts, faces, gap, lambda p: np.hypot(np.hypot(p[:, 0], p[:, 1]) - R, p[:, 2]) - A


def sphere():
    mesh = trimesh.creation.icosphere(subdivisions=2, radius=0.4)
    verts, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    normals = np.cross(verts[faces[:, 1]] - verts[faces[:, 0]], verts[faces[:, 2]] - verts[faces[:, 0]])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    inradius = np.abs((normals * verts[faces[:, 0]]).sum(1)).min()  # closest face plane to the centre
    return verts, faces, 0.4 - inradius, lambda p: np.linalg.norm(p, axis=1) - 0.4


def points(n, seed, half=0.55):
    """Uniform in a cube plus a band close to the surfaces (where labels are hardest)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-half, half, (n, 3))


@pytest.mark.parametrize("shape", [torus, sphere])
def test_fast_and_exact_winding_numbers_give_the_closed_form_inside(shape):
    verts, faces, gap, sdf = shape()
    p = points(1500, 0)
    true = sdf(p)
    clear = np.abs(true) > gap
    exact, fast = winding_number(p, verts, faces), fast_winding_number(p, verts, faces)
    assert clear.sum() > 1400
    assert ((exact > 0.5) == (true < 0))[clear].all()
    assert ((fast > 0.5) == (true < 0))[clear].all()
    # a closed mesh: w is 1 or 0 up to rounding wherever the point is clear of the surface
    assert np.abs(exact[clear] - (true[clear] < 0)).max() < 1e-9


@pytest.mark.parametrize("shape", [torus, sphere])
def test_signed_distance_matches_the_closed_form_within_the_tessellation_gap(shape):
    verts, faces, gap, sdf = shape()
    p = points(20000, 1)
    d = MeshQueries(verts, faces).signed_distance(p)
    assert np.abs(d - sdf(p)).max() <= gap + 1e-9
    assert np.array_equal(MeshQueries(verts, faces).contains(p), d < 0)


def test_near_the_surface_too_the_labels_follow_the_closed_form():
    """Points at 2–20 × the gap from the torus: the band where a careless sign flips."""
    verts, faces, gap, sdf = torus()
    rng = np.random.default_rng(2)
    angle, around = rng.uniform(0, 2 * math.pi, (2, 4000))
    offset = rng.choice([-1, 1], 4000) * rng.uniform(2 * gap, 20 * gap, 4000)
    rho = R + (A + offset) * np.cos(around)
    p = np.stack([rho * np.cos(angle), rho * np.sin(angle), (A + offset) * np.sin(around)], 1)
    assert np.allclose(sdf(p), offset)
    assert np.array_equal(MeshQueries(verts, faces).contains(p), offset < 0)


def test_solid_angles_of_a_closed_tetrahedron_sum_to_one_turn_inside_and_none_outside():
    verts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])  # outward
    tri = verts[faces]
    inside, outside = np.array([[0.1, 0.1, 0.1]]), np.array([[1.0, 1.0, 1.0]])
    assert solid_angles(inside, tri).sum() / (4 * math.pi) == pytest.approx(1.0, abs=1e-12)
    assert solid_angles(outside, tri).sum() == pytest.approx(0.0, abs=1e-12)


def test_an_open_mesh_has_a_fractional_winding_number_and_a_sensible_inside():
    """A sphere with a cap cut off: w is no longer 0/1 but still > ½ deep inside and < ½ far outside."""
    verts, faces, _, _ = sphere()
    keep = verts[faces].mean(axis=1)[:, 2] < 0.3  # drop the triangles above z = 0.3
    w = winding_number(np.array([[0.0, 0, 0], [0, 0, -0.2], [0.0, 0, 0.9], [0.9, 0, 0]]), verts, faces[keep])
    assert 0.5 < w[0] < 0.99 and 0.5 < w[1] and w[2] < 0.5 and abs(w[3]) < 0.1
