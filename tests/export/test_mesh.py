"""Mesh export: a sphere's radius within one voxel (from a grid and from a model), PLY/OBJ round trips, STL and
GLB read back by trimesh with the same axes and orientation,
the command on a checkpoint of a tiny run, and bad input."""

from functools import partial

import numpy as np
import pytest
import torch
from torch import nn

from inr.data.sdf import SPHERE_CENTER, SPHERE_RADIUS
from inr.data.volume import VolumeDataModule
from inr.encoders import IdentityEncoding
from inr.errors import InputError
from inr.export.mesh import extract_mesh, marching_cubes_mesh, mesh_report, read_mesh, write_mesh
from inr.run.cli import cli_main
from inr.run.mesh import main
from inr.tasks.volume import VolumeFitting


def radii(verts):
    return np.linalg.norm(verts - np.asarray(SPHERE_CENTER), axis=1)


def test_mesh_of_a_sphere_occupancy_grid_has_its_radius_within_one_voxel():
    n = 32
    occ = VolumeDataModule(builtin="sphere", resolution=n, split="all").values_grid()[0]  # (n, n, n) of 0/1
    verts, faces = marching_cubes_mesh(occ, 0.5)
    r = radii(verts)
    assert len(faces) > 1000 and faces.max() < len(verts)
    assert np.abs(r - SPHERE_RADIUS).max() < 1 / n
    assert abs(r.mean() - SPHERE_RADIUS) < 0.5 / n


class SphereLogit(nn.Module):
    """An analytic occupancy field: logit ℓ(v) = 100 (R − |v − c|), so σ(ℓ) = 0.5 exactly on the sphere."""

    def __init__(self, in_dim, out_dim):
        super().__init__()

    def forward(self, v):
        return 100 * (SPHERE_RADIUS - (v - v.new_tensor(SPHERE_CENTER)).norm(dim=-1, keepdim=True))


def test_extract_mesh_renders_a_model_in_chunks_and_keeps_the_radius():
    model = VolumeFitting(encoder=IdentityEncoding(3), network=SphereLogit, mode="occupancy")
    n = 24
    verts, faces = extract_mesh(model, resolution=n, chunk=1000)  # 13,824 points in 14 chunks
    assert np.abs(radii(verts) - SPHERE_RADIUS).max() < 1 / n
    # the render is the field: at a finer grid the surface is closer still
    fine, _ = extract_mesh(model, resolution=48)
    assert np.abs(radii(fine) - SPHERE_RADIUS).max() < 1 / 48


def test_ply_and_obj_round_trip(tmp_path):
    occ = VolumeDataModule(builtin="sphere", resolution=12, split="all").values_grid()[0]
    verts, faces = marching_cubes_mesh(occ, 0.5)
    v, f = read_mesh(write_mesh(tmp_path / "m.ply", verts, faces))
    assert np.array_equal(v, verts) and np.array_equal(f, faces)
    header = (tmp_path / "m.ply").read_bytes()[:200].decode("ascii", "replace")
    assert header.startswith("ply\nformat binary_little_endian 1.0") and f"element vertex {len(verts)}" in header
    v, f = read_mesh(write_mesh(tmp_path / "m.obj", verts, faces))
    np.testing.assert_allclose(v, verts, atol=5e-7)
    assert np.array_equal(f, faces)


def test_bad_mesh_requests_are_refused(tmp_path):
    with pytest.raises(InputError, match="unsupported mesh extension"):
        write_mesh(tmp_path / "m.3mf", np.zeros((3, 3)), np.zeros((1, 3), dtype=int))
    with pytest.raises(InputError, match="never crosses level"):
        marching_cubes_mesh(torch.zeros(4, 4, 4), 0.5)
    with pytest.raises(InputError, match="3-D coordinates"):
        extract_mesh(VolumeFitting(encoder=IdentityEncoding(2), network=partial(nn.Linear)))


@pytest.mark.slow
def test_command_meshes_a_checkpoint_of_a_tiny_run(tmp_path, capsys, monkeypatch, tiny_sphere_args):
    cli_main(tiny_sphere_args(tmp_path, "--trainer.callbacks", "null"))
    ckpt = tmp_path / "volume/version_0/checkpoints/last.ckpt"
    from inr.io import progress

    ticks = iter(range(0, 10**6, 3))  # a clock that moves 3 s per look: every render chunk is reported
    monkeypatch.setattr(progress.time, "monotonic", lambda: float(next(ticks)))
    out = main(["--ckpt", str(ckpt), "--out", str(tmp_path / "sphere.ply"), "--resolution", "32", "--chunk", "8192"])
    captured = capsys.readouterr()
    assert "vertices" in captured.out
    assert "mesh: sampling the field at 32³: 75% (24.6k of 32.8k)" in captured.err  # four chunks of the 32³ render
    monkeypatch.undo()
    verts, faces = read_mesh(out)
    # learned from 8³ training voxels in 60 steps (measured: mean error 0.011, max 0.047 here)
    err = np.abs(radii(verts) - SPHERE_RADIUS)
    assert len(faces) > 100 and err.mean() < 0.5 / 16 and err.max() < 1.5 / 16
    main(
        [
            "--ckpt",
            str(ckpt),
            "--out",
            str(tmp_path / "s.ply"),
            "--resolution",
            "16",
            "--turntable",
            str(tmp_path / "s.gif"),
            "--frames",
            "3",
        ]
    )
    import imageio.v3 as iio

    assert iio.imread(tmp_path / "s.gif", index=None).shape[:2] == (3, 256)
    with pytest.raises(SystemExit) as exc:
        main(["--ckpt", str(ckpt), "--out", str(tmp_path / "m.xyz")])
    assert exc.value.code == 2 and "use .ply, .obj, .stl, .glb" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # a point cloud is a radiance field's
        main(["--ckpt", str(ckpt), "--points", str(tmp_path / "p.ply")])
    assert exc.value.code == 2 and "needs a radiance field; this checkpoint holds a VolumeFitting" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # refused before meshing: no mesh written
        main(["--ckpt", str(ckpt), "--out", str(tmp_path / "t.ply"), "--turntable", str(tmp_path / "t.avi")])
    assert exc.value.code == 2 and not (tmp_path / "t.ply").exists()
    with pytest.raises(SystemExit) as exc:
        main(["--ckpt", str(tmp_path / "missing.ckpt"), "--out", str(tmp_path / "m.ply")])
    assert exc.value.code == 2 and "checkpoint not found" in capsys.readouterr().err


class EllipsoidLogit(nn.Module):
    """An ellipsoid on (z, y, x) grid coordinates with semi-axes 0.1 (z), 0.2 (y), 0.4 (x) around the centre."""

    def __init__(self, in_dim, out_dim):
        super().__init__()

    def forward(self, v):
        radii = v.new_tensor([0.1, 0.2, 0.4])  # the coordinates' order: (z, y, x)
        return 100 * (1 - ((v - 0.5) / radii).norm(dim=-1, keepdim=True))


@pytest.mark.parametrize("suffix", [".ply", ".obj", ".stl", ".glb"])
def test_files_hold_vertices_in_x_y_z_with_outward_triangles(tmp_path, suffix):
    """A grid task's (z, y, x) coordinates are written as x, y, z: trimesh reads the long axis as x, and a positive
    volume (triangles counter-clockwise seen from outside)."""
    import trimesh

    model = VolumeFitting(encoder=IdentityEncoding(3), network=EllipsoidLogit, mode="occupancy")
    verts, faces = extract_mesh(model, resolution=40)
    mesh = trimesh.load(write_mesh(tmp_path / f"e{suffix}", verts, faces), force="mesh", process=False)
    extent = mesh.vertices.max(0) - mesh.vertices.min(0)
    assert np.allclose(extent, [0.8, 0.4, 0.2], atol=2 / 40)  # x, y, z semi-axes 0.4, 0.2, 0.1
    merged = trimesh.Trimesh(mesh.vertices, mesh.faces)
    assert merged.is_watertight and merged.volume == pytest.approx(4 / 3 * np.pi * 0.4 * 0.2 * 0.1, rel=0.05)
    assert mesh_report(verts, faces).endswith("watertight, 1 connected component")
