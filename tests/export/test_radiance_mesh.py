"""A radiance field's density surface and point cloud: an analytic field whose density falls linearly with the
distance from the scene's centre puts the surface σ = τ on the sphere |x| = R − τ/a (within a voxel), the cloud
holds exactly the voxel centres inside it, the colours are the field's, the threshold is stated (default: one voxel
half opaque), and the command writes GLB/PLY meshes and point clouds from a checkpoint of a tiny run; a field
loaded without its data renders an orbit."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from inr.encoders import IdentityEncoding
from inr.errors import InputError
from inr.export.mesh import read_mesh, write_mesh, write_points
from inr.export.radiance_mesh import default_threshold, radiance_mesh, radiance_points
from inr.run.cli import cli_main
from inr.run.mesh import main
from inr.tasks import RadianceFieldFitting, VolumeFitting

R, A = 1.0, 40.0  # σ(x) = relu(A (R − |x|)) in world units; the scene box is [−1.5, 1.5]³
LOGITS = (2.0, -2.0, 0.0)  # colour = sigmoid(logits) everywhere
COLOUR = tuple(round(255 / (1 + math.exp(-z))) for z in LOGITS)  # (225, 30, 128)


class Ball(nn.Module):
    """Raw outputs [σ, colour logits] of the points v ∈ [0, 1]³ the field's encoder sees (world x = 3v − 1.5)."""

    def __init__(self, in_dim, out_dim):
        super().__init__()

    def forward(self, v):
        distance = (3.0 * v - 1.5).norm(dim=-1, keepdim=True)
        return torch.cat([A * (R - distance), v.new_tensor(LOGITS).expand(len(v), 3)], dim=-1)


def ball() -> RadianceFieldFitting:
    return RadianceFieldFitting(encoder=IdentityEncoding(3), network=Ball, density_activation="relu")


@pytest.mark.parametrize("threshold", [None, 20.0])
def test_the_surface_lies_where_the_density_crosses_the_threshold(threshold):
    n = 40
    mesh = radiance_mesh(ball(), resolution=n, threshold=threshold, chunk=5000)
    tau = math.log(2) / (3.0 / n) if threshold is None else threshold
    assert mesh.threshold == pytest.approx(tau) and mesh.default == (threshold is None)
    radius = np.linalg.norm(mesh.verts, axis=1)
    assert np.abs(radius - (R - tau / A)).max() < 3.0 / n  # within a voxel of the exact sphere
    assert (mesh.colors == np.array([*COLOUR, 255], np.uint8)).all()
    # outward triangles: the signed volume of the closed surface is the ball's, positive
    corners = mesh.verts[mesh.faces].astype(np.float64)
    volume = np.einsum("ij,ij->i", corners[:, 0], np.cross(corners[:, 1], corners[:, 2])).sum() / 6
    assert volume == pytest.approx(4 / 3 * math.pi * (R - tau / A) ** 3, rel=0.05)
    opacity = 1 - math.exp(-tau * 3.0 / n)
    assert mesh.describe().startswith(f"density σ ≥ {tau:.4g} (one voxel of {3.0 / n:.4g}, {opacity:.0%} opaque at σ")


def test_the_point_cloud_holds_the_voxel_centres_at_or_above_the_threshold():
    n = 20
    cloud = radiance_points(ball(), resolution=n, threshold=10.0)
    centres = -1.5 + (np.arange(n) + 0.5) * 3.0 / n
    x, y, z = np.meshgrid(centres, centres, centres, indexing="ij")
    inside = A * (R - np.sqrt(x**2 + y**2 + z**2)) >= 10.0  # numpy, float64: the same voxels
    assert len(cloud.points) == int(inside.sum()) and cloud.faces is None
    expected = np.stack([x[inside], y[inside], z[inside]], 1)
    np.testing.assert_allclose(np.sort(cloud.points, axis=0), np.sort(expected, axis=0), atol=1e-6)
    assert (cloud.colors[:, :3] == COLOUR).all()
    with pytest.raises(InputError, match=r"no sample has density ≥ 100 \(the largest is 3\d\.\d+\); choose a lower --level"):
        radiance_points(ball(), resolution=n, threshold=100.0)
    with pytest.raises(InputError, match="over 10; choose a higher --level"):
        radiance_points(ball(), resolution=n, threshold=10.0, limit=10)


def test_files_keep_the_geometry_and_colours(tmp_path):
    import trimesh

    mesh = radiance_mesh(ball(), resolution=16)
    for suffix in (".glb", ".ply", ".obj"):
        path = write_mesh(tmp_path / f"m{suffix}", mesh.verts, mesh.faces, mesh.colors)
        back = trimesh.load(path, force="mesh", process=False)
        np.testing.assert_allclose(back.vertices, mesh.verts, atol=1e-6)
        assert np.array_equal(back.faces, mesh.faces), suffix
        assert (np.asarray(back.visual.vertex_colors)[:, :3] == COLOUR).all(), suffix
    verts, faces = read_mesh(write_mesh(tmp_path / "m.stl", mesh.verts, mesh.faces))  # STL: a corner list, no colour
    np.testing.assert_allclose(verts[faces], mesh.verts[mesh.faces], atol=1e-6)
    cloud = radiance_points(ball(), resolution=12, threshold=5.0)
    for suffix in (".ply", ".glb"):
        back = trimesh.load(write_points(tmp_path / f"p{suffix}", cloud.points, cloud.colors), force=None)
        if isinstance(back, trimesh.Scene):
            (back,) = back.geometry.values()
        np.testing.assert_allclose(np.asarray(back.vertices), cloud.points, atol=1e-6)
        assert (np.asarray(back.colors)[:, :3] == COLOUR).all(), suffix


def test_bad_requests_are_one_line():
    with pytest.raises(InputError, match="needs a radiance field"):
        radiance_mesh(VolumeFitting(encoder=IdentityEncoding(3), network=Ball), resolution=8)
    with pytest.raises(InputError, match="threshold must be a positive number"):
        radiance_mesh(ball(), resolution=8, threshold=-1.0)
    with pytest.raises(InputError, match="never crosses level 1000"):
        radiance_mesh(ball(), resolution=8, threshold=1000.0)
    assert default_threshold(ball(), 64) == pytest.approx(math.log(2) * 64 / 3.0)


@pytest.fixture(scope="module")
def nerf_checkpoint(tmp_path_factory, tiny_nerf_args):
    """The last checkpoint of a two-step run of nerf.yaml at toy size."""
    root = tmp_path_factory.mktemp("nerf")
    cli_main(tiny_nerf_args(root))
    return root / "nerf" / "version_0" / "checkpoints" / "last.ckpt"


@pytest.mark.slow
def test_the_command_meshes_and_samples_a_radiance_checkpoint(tmp_path, capsys, nerf_checkpoint):
    import trimesh

    ckpt = nerf_checkpoint
    model = RadianceFieldFitting.load_from_checkpoint(ckpt)
    with torch.no_grad():  # a level inside the density's range
        sigma = float(np.median(model.query(torch.rand(512, 3) * 3 - 1.5)[0].numpy()))
    capsys.readouterr()
    main(["--ckpt", str(ckpt), "--out", str(tmp_path / "scene.glb"), "--points", str(tmp_path / "scene.ply"),
          "--resolution", "12", "--level", f"{sigma:.6g}"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    stated = f"density σ ≥ {float(f'{sigma:.6g}'):.4g}"
    assert out[0].startswith("mesh: ") and out[0].endswith("scene.glb")
    assert out[1].startswith(f"mesh: {stated} (one voxel of 0.25,")
    assert out[2].startswith("points: ") and stated in out[2] and out[2].endswith("scene.ply")
    mesh = trimesh.load(tmp_path / "scene.glb", force="mesh", process=False)
    assert len(mesh.faces) > 0 and np.abs(mesh.vertices).max() <= 1.5 + 1e-5  # inside the scene box
    assert len(trimesh.load(tmp_path / "scene.ply").vertices) > 0
    with pytest.raises(SystemExit) as exc:
        main(["--ckpt", str(ckpt), "--points", str(tmp_path / "p.obj")])
    assert exc.value.code == 2 and "use .ply or .glb" in capsys.readouterr().err


@pytest.mark.slow
def test_a_loaded_field_renders_an_orbit_without_its_data(nerf_checkpoint):
    """render() of a radiance field loaded from its checkpoint (no posed images attached): the views of an orbit
    around its scene with its training camera, in render()'s (C·V, H, W) layout, at any image size."""
    from inr.data.cameras import turntable_poses
    from inr.tasks.radiance import ORBIT_ELEVATION, ORBIT_VIEWS

    model = RadianceFieldFitting.load_from_checkpoint(nerf_checkpoint)
    assert not model.has_data() and model.grid_shape == (8, 8)
    frames = model.render()
    assert tuple(frames.shape) == (3 * ORBIT_VIEWS, 8, 8)
    poses = turntable_poses(ORBIT_VIEWS, ORBIT_ELEVATION, float(model.orbit_radius))
    expected = model.render_views(poses)["rgb"]  # (V, 3, 8, 8)
    torch.testing.assert_close(frames, expected.reshape(-1, 8, 8))
    assert tuple(model.render((16, 12)).shape) == (3 * ORBIT_VIEWS, 16, 12)
