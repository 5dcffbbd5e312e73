"""Meshes as targets: labels against closed forms in the normalised frame, the paper's box, held-out sets that
do not depend on the training seed, the two ways of drawing training points, and refusals before allocating."""

import numpy as np
import pytest
import torch
import trimesh

import inr.errors
from inr.data.mesh import MeshDataModule, read_mesh_file
from inr.errors import InputError
from inr.geometry.procedural import torus_mesh

R, A = 0.35, 0.12
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def torus_file(tmp_path_factory):
    """A finely tessellated torus (gap 2.5·10⁻⁴ from the true one) centred at (2, −1, 3), written as PLY."""
    verts, faces = torus_mesh(R, A, segments=256, sides=64)
    path = tmp_path_factory.mktemp("mesh") / "torus.ply"
    trimesh.Trimesh(verts + [2.0, -1.0, 3.0], faces, process=False).export(path)
    return path


def small(path, **kwargs):
    args = {"batch_size": 256, "steps_per_epoch": 4, "test_points": 4096, "resolution": 8, "surface_samples": 2000}
    return MeshDataModule(path=str(path), **{**args, **kwargs})


def original(dm, v):
    """Normalised coordinates -> the file's frame: p = c + s·(2v − 1)."""
    return dm.centre + dm.scale * (2 * np.asarray(v, dtype=np.float64) - 1)


def torus_sdf(p):
    q = p - [2.0, -1.0, 3.0]
    return np.hypot(np.hypot(q[:, 0], q[:, 1]) - R, q[:, 2]) - A


def test_the_mesh_is_normalised_into_the_papers_box(torus_file):
    dm = small(torus_file)
    dm.setup("fit")
    # the torus's vertex mean is its centre and its largest coordinate magnitude R + A (x or y)
    # (the PLY file holds float32 vertices: 10⁻⁶ relative)
    assert np.allclose(dm.centre, [2.0, -1.0, 3.0], atol=1e-6) and dm.scale == pytest.approx(R + A, rel=1e-6)
    z_half = 0.5 * A / (R + A)
    assert np.allclose(dm.box, [[-1e-3, -1e-3, 0.5 - z_half - 1e-3], [1 + 1e-3, 1 + 1e-3, 0.5 + z_half + 1e-3]], atol=1e-6)
    assert dm.watertight and dm.components == 1


@pytest.mark.parametrize("mode", ["occupancy", "sdf"])
def test_held_out_labels_follow_the_closed_form(torus_file, mode):
    dm = small(torus_file, mode=mode)
    dm.setup("fit")
    gap = 2.5e-4  # the tessellation's distance from the true torus (see the fixture)
    for name in ("easy", "hard"):
        points, labels = dm.heldout(name)
        true = torus_sdf(original(dm, points.double()))
        if mode == "occupancy":
            clear = np.abs(true) > gap
            assert np.array_equal(labels[clear, 0].numpy() == 1, true[clear] < 0)
        else:  # distances shrink by 1/(2s) into the normalised frame
            assert np.abs(labels[:, 0].numpy() * 2 * dm.scale - true).max() < gap + 1e-5
    easy, hard = dm.heldout("easy")[0], dm.heldout("hard")[0]
    assert ((easy >= torch.tensor(dm.box[0]).float()) & (easy <= torch.tensor(dm.box[1]).float())).all()
    # the hard set lies at N(0, 0.01²) per axis from the surface: its distances have an RMS near 0.01
    hard_distance = np.abs(torus_sdf(original(dm, hard.double()))) / (2 * dm.scale)
    assert 0.004 < np.sqrt((hard_distance**2).mean()) < 0.0101


def test_held_out_sets_do_not_change_with_the_training_seed(torus_file):
    a, b = small(torus_file, seed=0), small(torus_file, seed=5)
    a.setup("fit"), b.setup("fit")
    for name in ("easy", "hard"):
        assert torch.equal(a.heldout(name)[0], b.heldout(name)[0]) and torch.equal(a.heldout(name)[1], b.heldout(name)[1])
    assert torch.equal(a.surface()[0], b.surface()[0])
    a.prepare_training_points(0, 0), b.prepare_training_points(0, 0)
    assert not torch.equal(a._train[1], b._train[1])  # the training draws do change
    # and no training point is a held-out point (seed and test seed 0 alike)
    for train in (a._train[1], b._train[1]):
        for name in ("easy", "hard"):
            held = a.heldout(name)[0]
            assert not (train[:, None, :] == held[None, :512, :]).all(-1).any()
    c = small(torus_file, test_seed=1)
    c.setup("fit")
    assert not torch.equal(a.heldout("easy")[0], c.heldout("easy")[0])


def test_fresh_points_are_new_blocks_every_step_and_every_epoch(torus_file):
    dm = small(torus_file)
    dm.setup("fit")
    loader = dm.train_dataloader()
    batches = [dm.gather_training(b, CPU) for b in loader]
    assert len(batches) == 4 and all(b["coords"].shape == (256, 3) and b["values"].shape == (256, 1) for b in batches)
    coords = torch.cat([b["coords"] for b in batches])
    assert len(torch.unique(coords, dim=0)) == 4 * 256  # no point twice in an epoch
    first = coords.clone()
    loader.dataset.epoch_fn = lambda: 1
    again = torch.cat([dm.gather_training(b, CPU)["coords"] for b in loader])
    assert not torch.equal(first, again)
    # the labels are the mesh's: inside exactly where the closed form says (clear of the surface)
    values = torch.cat([b["values"] for b in batches])[:, 0].numpy()
    true = torus_sdf(original(dm, first.double()))
    clear = np.abs(true) > 2.5e-4
    assert np.array_equal(values[clear] == 1, true[clear] < 0)
    # the same epoch drawn again (a resumed run) is the same points
    loader.dataset.epoch_fn = lambda: 0
    assert torch.equal(torch.cat([dm.gather_training(b, CPU)["coords"] for b in loader]), first)


def test_pool_sampling_near_surface_share_and_surface_points(torus_file):
    dm = small(torus_file, mode="sdf", sampling="pool", pool_size=1000, near_surface_fraction=0.5, surface_batch=32)
    dm.setup("fit")
    (batch,) = [dm.gather_training(b, CPU) for b in dm.train_dataloader()][:1]
    pool = dm._train[1]
    assert len(pool) == 1000
    assert (batch["coords"][:, None, :] == pool[None]).all(-1).any(-1).all()  # every point is a pool point
    near = np.abs(torus_sdf(original(dm, pool.double()))) / (2 * dm.scale) < 0.04
    assert near[500:].mean() > 0.99 and near[:500].mean() < 0.5  # the second half was drawn near the surface
    s, n = batch["surface_coords"], batch["surface_normals"]
    assert s.shape == n.shape == (32, 3) and torch.allclose(n.norm(dim=1), torch.ones(32), atol=1e-5)
    assert np.abs(torus_sdf(original(dm, s.double()))).max() < 1e-3


def test_the_callbacks_grid_is_the_label_field_in_x_y_z(torus_file):
    dm = small(torus_file, resolution=[8, 6, 4])
    assert dm.shape == (8, 6, 4) and dm.out_channels == 1
    grid = dm.values_grid()[0]  # (x, y, z)
    v = torch.stack(torch.meshgrid(torch.arange(8) / 8, torch.arange(6) / 6, torch.arange(4) / 4, indexing="ij"), -1)
    true = torus_sdf(original(dm, v.reshape(-1, 3).double())).reshape(8, 6, 4)
    clear = np.abs(true) > 2.5e-4
    assert np.array_equal((grid.numpy() == 1)[clear], (true < 0)[clear])


def test_a_mesh_or_buffers_beyond_memory_are_refused_before_reading(torus_file, monkeypatch):
    monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: 2**20)  # 1 MiB free

    def refuse(*args, **kwargs):
        raise AssertionError("the mesh was read")

    monkeypatch.setattr(trimesh, "load", refuse)
    with pytest.raises(
        InputError,
        match=r"torus.ply \(about [\d,]+ triangles in [\d.]+ MiB\) needs an estimated [\d.]+ MiB, more than 50% of the 1.0 MiB available",
    ):
        read_mesh_file(torus_file)
    monkeypatch.undo()
    monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: 2**33)  # 8 GiB: the mesh fits, 2^31 points do not
    with pytest.raises(InputError, match="training points .* choose a smaller data.batch_size"):
        small(torus_file, batch_size=2**21, steps_per_epoch=2**10).setup("fit")


def test_settings_are_checked(torus_file):
    for kwargs, message in [
        ({"mode": "density"}, "data.mode"),
        ({"near_surface_fraction": 1.5}, "near_surface_fraction"),
        ({"sign": "unsigned"}, "unsigned needs mode sdf"),
        ({"surface_batch": 8}, "surface points need mode sdf"),
        ({"batch_size": 0}, "data.batch_size"),
    ]:
        with pytest.raises(InputError, match=message):
            small(torus_file, **kwargs)


@pytest.mark.parametrize("suffix", [".obj", ".ply", ".stl", ".off", ".glb"])
def test_every_format_reads_to_the_same_closed_mesh(tmp_path, suffix):
    verts, faces = torus_mesh(R, A, segments=32, sides=12)
    path = tmp_path / f"torus{suffix}"
    trimesh.Trimesh(verts, faces, process=False).export(path)
    dm = small(path)
    _ = dm.queries  # read, merged (an STL stores three corners per triangle), checked, normalised
    assert dm.watertight and dm.components == 1 and len(dm.faces) == len(faces)
    assert len(dm.normalised) == len(verts)
