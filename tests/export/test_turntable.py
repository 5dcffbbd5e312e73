"""Turntable videos of meshes: the shape is drawn, turns between frames, and comes full circle."""

import numpy as np
import pytest

from inr.data.volume import VolumeDataModule
from inr.errors import InputError
from inr.export.mesh import marching_cubes_mesh
from inr.export.turntable import turntable_frames


def test_an_asymmetric_shape_is_drawn_and_turns():
    occ = VolumeDataModule(builtin="bumpy", resolution=20, split="all").values_grid()[0]
    verts, faces = marching_cubes_mesh(occ, 0.5)
    frames = turntable_frames(verts, faces, frames=4, size=64)
    assert frames.shape == (4, 64, 64, 3) and frames.dtype == np.uint8
    covered = (frames.min(axis=-1) < 250).mean(axis=(1, 2))  # pixels darker than the white background
    assert (covered > 0.05).all()
    turned = np.abs(frames[0].astype(int) - frames[1]).mean()
    assert turned > 1.0  # a quarter turn changes the picture
    # the view at 360° is the view at 0°, drawn again
    again = turntable_frames(verts, faces, frames=1, size=64)[0]
    assert np.array_equal(again, frames[0])


def test_bad_turntable_requests_are_refused():
    with pytest.raises(InputError, match="frames ≥ 1"):
        turntable_frames(np.zeros((3, 3)), np.zeros((1, 3), dtype=int), frames=0)
    with pytest.raises(InputError, match="no triangles"):
        turntable_frames(np.zeros((3, 3)), np.zeros((0, 3), dtype=int))
