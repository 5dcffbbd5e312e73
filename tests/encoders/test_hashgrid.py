"""Hash encoding against an independent numpy reference (uint32 hash, explicit multilinear weights)."""

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from inr.encoders import HashGridEncoding
from inr.encoders.hashgrid import growth_factor, level_resolutions, spatial_hash
from inr.errors import InputError
from inr.run.cli import cli_main

PRIMES_U32 = np.array([1, 2654435761, 805459861], dtype=np.uint32)


def small(d, **kw):
    """Levels N = 2, 3, 7, 13, 26 with tables of 2^3, 2^6, 2^8 rows (1D, 2D, 3D): the three (1D) or two
    coarsest levels dense, the finer ones hashed."""
    args = dict(
        in_dim=d,
        n_levels=5,
        n_features_per_level=3,
        log2_hashmap_size={1: 3, 2: 6, 3: 8}[d],
        base_resolution=2,
        per_level_scale=1.9,
    )
    args.update(kw)
    return HashGridEncoding(**args)


def reference_rows(enc, level, corners):
    """Row of each integer vertex (M, d) in ``level``'s table, computed in numpy uint32 arithmetic."""
    n, d, t = int(enc.resolutions[level]), enc.in_dim, enc.hashmap_size
    c = corners.astype(np.uint64)
    if (n + 1) ** d <= t:  # dense: c_0 + c_1 (N+1) + c_2 (N+1)²
        return (c * (n + 1) ** np.arange(d, dtype=np.uint64)).sum(-1).astype(np.int64)
    h = np.zeros(len(c), dtype=np.uint32)
    for k in range(d):  # wrapping uint32 products, as tiny-cuda-nn computes them
        h ^= c[:, k].astype(np.uint32) * PRIMES_U32[k]
    return (h % np.uint32(t)).astype(np.int64)


def reference_encoding(enc, v):
    """y_l = Σ_corners Π_k (1 − |x_k N_l − c_k|) θ_l[row(c)], float64, points (M, d) -> (M, L·F)."""
    table = enc.params.detach().double().numpy()
    v = np.clip(v.astype(np.float64), 0, 1)
    out = []
    for level in range(enc.n_levels):
        n, start = int(enc.resolutions[level]), int(enc.level_offsets[level])
        x = v * n
        lower = np.minimum(np.floor(x), n - 1)
        y = np.zeros((len(v), enc.n_features_per_level))
        for bits in itertools.product((0, 1), repeat=enc.in_dim):
            c = lower + np.array(bits)
            w = np.prod(1 - np.abs(x - c), axis=-1)
            y += w[:, None] * table[start + reference_rows(enc, level, c.astype(np.int64))]
        out.append(y)
    return np.concatenate(out, axis=-1)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_shape_out_dim_and_reference(d):
    torch.manual_seed(0)
    enc = small(d)
    enc.params.data.uniform_(-1, 1)  # large values so that a wrong row or weight shows
    assert 0 < enc.dense_levels < enc.n_levels  # both kinds of level are exercised
    v = torch.rand(200, d)
    out = enc(v)
    assert enc.out_dim == 5 * 3 and out.shape == (200, 15)
    np.testing.assert_allclose(out.detach().double().numpy(), reference_encoding(enc, v.numpy()), atol=1e-5, rtol=0)
    # leading batch dimensions are kept; levels encoded one at a time give the same features
    assert enc(v.reshape(4, 50, d)).shape == (4, 50, 15)
    torch.testing.assert_close(torch.cat([enc.encode(v, range(l, l + 1)) for l in range(5)], 1), out, atol=0, rtol=0)


def test_default_parameters_follow_tiny_cuda_nn():
    enc = HashGridEncoding(in_dim=2)
    assert (enc.n_levels, enc.n_features_per_level, enc.log2_hashmap_size, enc.base_resolution) == (16, 2, 19, 16)
    assert enc.per_level_scale == 2.0 and enc.out_dim == 32
    assert enc.resolutions.tolist() == [16 * 2**l for l in range(16)]
    # (N+1)² ≤ 2^19 up to N = 512, hashed from 1024 on
    assert enc.dense_levels == 6
    assert enc.params.numel() == 2 * (sum((16 * 2**l + 1) ** 2 for l in range(6)) + 10 * 2**19)
    # U(−1e-4, 1e-4): bounded, and std 1e-4/√3 within 1% (11 M draws)
    p = enc.params.detach()
    assert p.abs().max() <= 1e-4 and abs(p.std().item() / (1e-4 / math.sqrt(3)) - 1) < 0.01


def test_finest_resolution_sets_growth_factor():
    enc = HashGridEncoding(in_dim=2, n_levels=16, base_resolution=16, finest_resolution=256)
    b = math.exp((math.log(256) - math.log(16)) / 15)  # Müller et al. 2022, eq. 3
    assert enc.per_level_scale == pytest.approx(b, rel=1e-12)
    assert enc.resolutions[0] == 16 and enc.resolutions[-1] == 256
    assert enc.resolutions.tolist() == [math.floor(16 * b**l * (1 + 1e-9)) for l in range(16)]
    assert growth_factor(16, 16, 1) == 1.0 and level_resolutions(3, 16, 2.0) == [16, 32, 64]
    with pytest.raises(InputError, match="not both"):
        HashGridEncoding(in_dim=2, per_level_scale=1.5, finest_resolution=256)
    with pytest.raises(InputError, match="in_dim"):
        HashGridEncoding(in_dim=4)
    with pytest.raises(InputError, match="finest_resolution"):
        HashGridEncoding(in_dim=2, base_resolution=16, finest_resolution=8)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_exact_at_grid_vertices(d):
    # at x = c / N_l, level l returns its table row for c exactly (the other corners have weight 0)
    enc = small(d).double()
    enc.params.data.normal_()
    for level in range(enc.n_levels):
        n = int(enc.resolutions[level])
        corners = np.stack(np.meshgrid(*[np.arange(n + 1)] * d, indexing="ij"), -1).reshape(-1, d)
        v = torch.from_numpy(corners / n)
        feats = enc(v)[:, level * 3 : (level + 1) * 3]
        rows = torch.from_numpy(reference_rows(enc, level, corners))
        torch.testing.assert_close(feats, enc.level_table(level)[rows], atol=1e-12, rtol=0)


def test_continuous_across_cell_faces():
    # crossing a face x_k = c/N_l changes the cell (and its corners) but not the value: the jump over
    # 2ε is bounded by the Lipschitz constant Σ_l N_l · d · 2 max|θ| times 2ε
    torch.manual_seed(1)
    enc = small(3).double()
    enc.params.data.uniform_(-1, 1)
    eps = 1e-7
    n = int(enc.resolutions[-1])
    v = torch.rand(500, 3, dtype=torch.float64)
    v[:, 1] = torch.randint(1, n, (500,)) / n  # on a face of the finest level (and of coarser ones by chance)
    step = torch.tensor([0.0, eps, 0.0], dtype=torch.float64)
    jump = (enc(v + step) - enc(v - step)).abs().max().item()
    bound = float(enc.resolutions.sum()) * 3 * 2 * 2 * eps
    assert jump < bound


@pytest.mark.parametrize("d", [2, 3])
def test_collisions_only_above_table_size(d):
    log2_t, scale = {2: (10, 2.0), 3: (12, 1.25)}[d]
    t = 2**log2_t
    n_dense = int(round(t ** (1 / d))) - 1  # (N+1)^d == T: exactly fits, still dense
    enc = HashGridEncoding(in_dim=d, n_levels=2, log2_hashmap_size=log2_t, base_resolution=n_dense, per_level_scale=scale)
    assert enc.dense_levels == 1 and (n_dense + 1) ** d == t
    for level, n in enumerate(enc.resolutions.tolist()):
        grid = torch.stack(torch.meshgrid(*[torch.arange(n + 1)] * d, indexing="ij"), -1).reshape(-1, d)  # all vertices
        # each vertex as the lower corner of a one-level block; corner 0 is the vertex itself
        rows = enc.corner_indices(grid[None], range(level, level + 1), hashed=level >= enc.dense_levels)[0, :, 0]
        rows = rows.long() - int(enc.level_offsets[level])
        assert rows.min() >= 0 and rows.max() < int(enc.level_sizes[level])
        occupied = len(torch.unique(rows))
        if level < enc.dense_levels:
            assert occupied == len(grid) == t  # one slot per vertex, no collision
        else:
            m = len(grid)  # 63² = 3969 vertices into 1024 slots (2D), 19³ = 6859 into 4096 (3D)
            expected = t * (1 - math.exp(-m / t))  # uniform hashing: expected occupied slots
            assert occupied < m and abs(occupied - expected) < 0.05 * t


def test_spatial_hash_matches_uint32_arithmetic():
    rng = np.random.default_rng(0)
    pos = rng.integers(0, 2**24, size=(1000, 3))
    expected = np.zeros(1000, dtype=np.uint32)
    for k in range(3):
        expected ^= pos[:, k].astype(np.uint32) * PRIMES_U32[k]
    np.testing.assert_array_equal(spatial_hash(torch.from_numpy(pos)).numpy(), expected.astype(np.int64))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_gradcheck_table_and_coordinates(d):
    # float64 finite differences vs the custom backward, dense and hashed levels, w.r.t. θ and x
    torch.manual_seed(2)
    enc = HashGridEncoding(
        in_dim=d,
        n_levels=3,
        n_features_per_level=2,
        log2_hashmap_size={1: 3, 2: 5, 3: 5}[d],
        base_resolution=2,
        per_level_scale=2.0,
    ).double()
    assert 0 < enc.dense_levels < 3
    table = enc.params.detach().clone().uniform_(-1, 1).requires_grad_(True)
    # away from cell faces (finite differences of ±1e-6 must not cross one)
    v = ((torch.randint(0, 8, (6, d)) + 0.2 + 0.6 * torch.rand(6, d)) / 8).double().requires_grad_(True)

    def g(tab, x):  # the table as an explicit input, so gradcheck differentiates with respect to it
        return torch.func.functional_call(enc, {"params": tab}, (x,))

    assert torch.autograd.gradcheck(g, (table, v), eps=1e-6, atol=1e-8)
    # a backward on the module reaches exactly the rows of the looked-up corners
    enc.params.grad = None
    enc(v.detach()).sum().backward()
    touched = (enc.params.grad != 0).any(-1).sum().item()
    assert 0 < touched <= 6 * 3 * 2**d


def test_cli_runs_hashgrid_config(tmp_path, capsys, tiny_flags):
    configs = ("image.yaml", "methods/hashgrid.yaml")
    encoder = "--model.init_args.encoder.init_args."
    grid = (encoder + "finest_resolution", 16, encoder + "n_levels", 4, encoder + "log2_hashmap_size", 8)
    small = tiny_flags(configs, 16, *grid, steps=3, bar=False, save_dir=tmp_path)
    cli_main([*small, "--trainer.default_root_dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "summary:" in out and "steps 3" in out
    assert list(Path(tmp_path).glob("image_hashgrid/version_0/config.yaml"))
