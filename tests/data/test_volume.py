"""Voxel volumes: exact 3D coordinates (lazy = materialised), readers on files written here, value
mapping, the large-grid guards, and bad input."""

import imageio.v3 as iio
import numpy as np
import pytest
import tifffile
import torch

from inr.data.grid import Grid, grid_coordinates
from inr.data.volume import VolumeDataModule, resample
from inr.errors import InputError

CPU = torch.device("cpu")


def _sphere(n=12):
    return VolumeDataModule(builtin="sphere", resolution=n, split="all")


def test_3d_coordinates_are_exact_and_lazy_equals_materialised(tmp_path):
    shape = (3, 4, 5)
    np.save(tmp_path / "v.npy", np.random.default_rng(0).random(shape).astype(np.float32))
    dm = VolumeDataModule(path=str(tmp_path / "v.npy"), resolution=None, mode="density", split="all")
    assert dm.shape == shape
    index = torch.tensor([0, 1 * 20 + 2 * 5 + 3, 59])  # (0,0,0), (1,2,3), (2,3,4)
    expected = torch.tensor([[0, 0, 0], [1 / 3, 2 / 4, 3 / 5], [2 / 3, 3 / 4, 4 / 5]], dtype=torch.float32)
    assert torch.equal(dm.grid.coords(index), expected)
    full = grid_coordinates(shape).reshape(-1, 3)
    perm = torch.randperm(60, generator=torch.Generator().manual_seed(1))
    batch = dm.gather(perm, CPU)
    assert torch.equal(batch["coords"], full[perm])
    assert torch.equal(batch["values"], dm.values[perm])


def test_random_batches_of_a_large_grid_never_hold_the_grid_coordinates(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the grid's coordinates were materialised")

    monkeypatch.setattr(Grid, "all_coords", refuse)
    monkeypatch.setattr("inr.data.grid.grid_coordinates", refuse)
    dm = VolumeDataModule(builtin="sphere", resolution=96, split="all", batch_size=4096)  # 884,736 voxels
    dm.setup("fit")
    batch = dm.gather(next(iter(dm.train_dataloader()))["index"], CPU)
    assert batch["coords"].shape == (4096, 3)
    cached = [t.numel() for t in dm._device_cache.values()]
    assert max(cached) == dm.grid.numel  # only the (N, 1) values are kept on the device, no (N, 3) coordinates


def test_full_batch_on_a_huge_grid_is_refused_with_the_fix():
    dm = VolumeDataModule(builtin="sphere", resolution=16, batch_size=None, full_batch_limit=100)
    with pytest.raises(InputError, match="data.batch_size"):
        dm.setup("fit")
    VolumeDataModule(builtin="sphere", resolution=16, batch_size=64, full_batch_limit=100).setup("fit")


def test_npy_bool_occupancy_and_uint8_density(tmp_path):
    occ = np.zeros((4, 5, 6), dtype=bool)
    occ[1:3, 2:4, 1:5] = True
    np.save(tmp_path / "o.npy", occ)
    dm = VolumeDataModule(path=str(tmp_path / "o.npy"), resolution=None)
    assert torch.equal(dm.values_grid()[0], torch.from_numpy(occ).float())
    dens = np.arange(4 * 5 * 6, dtype=np.uint8).reshape(4, 5, 6)
    np.save(tmp_path / "d.npy", dens)
    dm = VolumeDataModule(path=str(tmp_path / "d.npy"), resolution=None, mode="density")
    assert torch.equal(dm.values_grid()[0], torch.from_numpy(dens).float() / 255)


def test_float_volumes_min_max_or_value_range_then_threshold(tmp_path):
    x = np.linspace(-2, 6, 4 * 4 * 4).reshape(4, 4, 4)
    np.save(tmp_path / "f.npy", x)
    dm = VolumeDataModule(path=str(tmp_path / "f.npy"), resolution=None, mode="density")
    torch.testing.assert_close(dm.values_grid()[0].double(), torch.from_numpy((x + 2) / 8), atol=1e-7, rtol=0)
    dm = VolumeDataModule(path=str(tmp_path / "f.npy"), resolution=None, value_range=[0, 4], threshold=0.25)
    assert torch.equal(dm.values_grid()[0], torch.from_numpy(x / 4 > 0.25).float())


def test_npz_single_array_or_by_key(tmp_path):
    a, b = np.random.default_rng(0).random((2, 3, 4, 5))
    np.savez(tmp_path / "one.npz", a=a)
    np.savez(tmp_path / "two.npz", a=a, b=b)
    one = VolumeDataModule(path=str(tmp_path / "one.npz"), resolution=None, mode="density", value_range=[0, 1])
    torch.testing.assert_close(one.values_grid()[0].double(), torch.from_numpy(a), atol=1e-7, rtol=0)
    keyed = VolumeDataModule(path=str(tmp_path / "two.npz"), resolution=None, mode="density", value_range=[0, 1], key="b")
    torch.testing.assert_close(keyed.values_grid()[0].double(), torch.from_numpy(b), atol=1e-7, rtol=0)
    with pytest.raises(InputError, match="data.key"):
        VolumeDataModule(path=str(tmp_path / "two.npz"), mode="density").setup("fit")


def test_tiff_stack_is_read_page_by_page(tmp_path):
    stack = np.random.default_rng(0).integers(0, 65535, size=(5, 6, 7), dtype=np.uint16)
    tifffile.imwrite(tmp_path / "s.tif", stack)
    dm = VolumeDataModule(path=str(tmp_path / "s.tif"), resolution=None, mode="density")
    assert dm.shape == (5, 6, 7)
    assert torch.equal(dm.values_grid()[0], torch.from_numpy(stack.astype(np.float32)) / 65535)


def test_resample_shrinks_by_block_means():
    x = torch.rand(8, 8, 8, 1, generator=torch.Generator().manual_seed(0))
    expected = x.reshape(4, 2, 4, 2, 4, 2, 1).mean(dim=(1, 3, 5))
    torch.testing.assert_close(resample(x, (4, 4, 4)), expected)


def test_builtin_density_is_a_ramp_across_the_occupancy_surface():
    from inr.data.sdf import sdf_grid

    occ, n = _sphere(16), 16
    dens = VolumeDataModule(builtin="sphere", resolution=n, split="all", mode="density").values[:, 0]
    d = sdf_grid("sphere", (n, n, n)).reshape(-1)
    inside = occ.values[:, 0] == 1
    assert torch.equal(inside, d < 0)
    assert bool((dens[inside] >= 0.5).all()) and bool((dens[~inside] <= 0.5).all())
    shell = 2.0 / n  # w = 2 voxels
    assert bool((dens[d <= -shell] == 1).all()) and bool((dens[d >= shell] == 0).all())
    torch.testing.assert_close(dens[d.abs() < shell], 0.5 - d[d.abs() < shell] / (2 * shell))


@pytest.mark.parametrize(
    "write, message",
    [
        (lambda p: np.save(p / "v.npy", np.zeros((8, 8))), "2-D array"),
        (lambda p: (p / "v.npy").write_bytes(b""), "file is empty"),
        (lambda p: np.save(p / "v.npy", np.where(np.eye(4)[None].repeat(4, 0) > 0, np.nan, 1.0)), "NaN"),
        (lambda p: (p / "v.npy").write_bytes(b"not numpy"), "not a .npy array"),
        (lambda p: np.save(p / "v.npy", np.full((4, 4, 4), 3.0)), "constant"),
        (lambda p: np.save(p / "v.npy", np.zeros((4, 4, 1))), "at least 2 voxels"),
        (lambda p: np.save(p / "v.npy", np.zeros((4, 4, 4), dtype=complex)), "unsupported voxel type"),
    ],
)
def test_bad_volume_files_are_refused(tmp_path, write, message):
    write(tmp_path)
    with pytest.raises(InputError, match=message):
        VolumeDataModule(path=str(tmp_path / "v.npy"), resolution=None, mode="density").setup("fit")


def test_bad_sources_and_settings_are_refused(tmp_path):
    (tmp_path / "v.vox").write_bytes(b"x")
    with pytest.raises(InputError, match="unsupported extension"):
        VolumeDataModule(path=str(tmp_path / "v.vox")).setup("fit")
    iio.imwrite(tmp_path / "rgb.tif", np.zeros((3, 4, 4, 3), dtype=np.uint8) + np.arange(3, dtype=np.uint8))
    with pytest.raises(InputError, match="single-channel"):
        VolumeDataModule(path=str(tmp_path / "rgb.tif"), resolution=None).setup("fit")
    np.save(tmp_path / "z.npy", np.zeros((4, 4, 4), dtype=bool))
    with pytest.raises(InputError, match="empty"):
        VolumeDataModule(path=str(tmp_path / "z.npy"), resolution=None).setup("fit")
    with pytest.raises(InputError, match="data.mode"):
        VolumeDataModule(mode="sdf")
    with pytest.raises(InputError, match="GiB"):
        VolumeDataModule(builtin="sphere", resolution=100_000).setup("fit")
