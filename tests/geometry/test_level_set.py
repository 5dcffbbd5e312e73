"""Level sets of fields over a box: on the surface within a sample spacing, closed where the shape meets the box,
triangles facing out."""

import numpy as np
import pytest
import torch
import trimesh

from inr.geometry.level_set import box_axes, level_set_mesh, marching_cubes, sample_box
from inr.geometry.sampling import face_normals_and_areas

BOX = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])


@pytest.mark.parametrize("inside", ["above", "below"])
def test_a_sphere_is_found_on_its_radius_and_faces_out(inside):
    sign = 1 if inside == "above" else -1
    verts, faces = level_set_mesh(lambda p: sign * (0.31 - (p - 0.5).norm(dim=-1)), BOX, 41, 0.0, inside)
    r = np.linalg.norm(verts - 0.5, axis=1)
    assert np.abs(r - 0.31).max() < 0.025 / 2  # within half a sample spacing (1/40)
    normals, _ = face_normals_and_areas(verts, faces)
    assert ((normals * (verts[faces].mean(1) - 0.5)).sum(1) > 0).all()  # every triangle faces away from the centre
    mesh = trimesh.Trimesh(verts, faces)
    assert mesh.is_watertight and mesh.volume == pytest.approx(4 / 3 * np.pi * 0.31**3, rel=0.02)


def test_a_shape_cut_by_the_box_is_closed_and_its_axes_keep_their_order():
    # a ball of radius 0.7 around the box's centre reaches past every face; samples include both faces of the box
    box = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, 0.25]])
    verts, faces = level_set_mesh(lambda p: 0.7 - (p - 0.5).norm(dim=-1), box, 21, 0.0)
    mesh = trimesh.Trimesh(verts, faces)
    assert mesh.is_watertight and mesh.volume > 0
    spacing = (box[1] - box[0]) / 20
    # the caps lie between the box's faces and the outside padding, within one spacing
    assert (verts.min(0) <= box[0]).all() and (verts.min(0) > box[0] - spacing).all()
    assert (verts.max(0) >= box[1]).all() and (verts.max(0) < box[1] + spacing).all()
    assert [len(a) for a in box_axes(box, 21)] == [21] * 3 and box_axes(box, 21)[1][-1] == 0.5


def test_sampling_the_box_slab_by_slab_equals_one_evaluation():
    calls = []

    def field(p: torch.Tensor) -> torch.Tensor:
        calls.append(len(p))
        return p[:, 0] + 10 * p[:, 1] + 100 * p[:, 2]

    grid = sample_box(field, BOX, 5)
    x, y, z = np.meshgrid(*box_axes(BOX, 5), indexing="ij")
    assert np.allclose(grid, x + 10 * y + 100 * z) and calls == [25] * 5


def test_no_crossing_means_no_surface():
    with pytest.raises(ValueError, match="never crosses"):
        marching_cubes(np.zeros((4, 4, 4)), 0.5, np.zeros(3), np.ones(3))
