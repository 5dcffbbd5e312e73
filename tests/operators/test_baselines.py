"""The classical reconstructions: each recovers what its measurement allows."""

import torch

from inr.data import shepp_logan_phantom
from inr.metrics import psnr
from inr.operators import Downsample, KSpaceSampling, ParallelBeamProjection, PixelMask, baselines, gaussian_kspace_mask


def test_filtered_back_projection_of_many_angles_recovers_the_phantom():
    """180 angles over [0, π): FBP (skimage's iradon on this operator's sinograms) is within 25 dB; 20 angles
    are markedly worse — the geometry of operator and back-projection agree."""
    phantom = shepp_logan_phantom((64, 64), seed=0)[None]
    many = ParallelBeamProjection(180, (64, 64))
    few = ParallelBeamProjection(20, (64, 64))
    psnr_many = psnr(baselines.filtered_back_projection(many, many(phantom)), phantom)
    psnr_few = psnr(baselines.filtered_back_projection(few, few(phantom)), phantom)
    assert psnr_many > 22.0 and psnr_few < psnr_many - 3.0


def test_zero_filled_ifft_is_exact_for_a_full_mask_and_lossy_for_a_sparse_one():
    phantom = shepp_logan_phantom((16, 16, 16), seed=1)[None]
    full = KSpaceSampling(torch.ones(16, 16, 16, dtype=torch.bool))
    torch.testing.assert_close(baselines.zero_filled_ifft(full, full(phantom)), phantom, atol=1e-5, rtol=0)
    sparse = KSpaceSampling(gaussian_kspace_mask((16, 16, 16), seed=0))
    assert psnr(baselines.zero_filled_ifft(sparse, sparse(phantom)), phantom) < 30.0


def test_cubic_baselines_reproduce_smooth_fields():
    rows, cols = torch.meshgrid(torch.arange(32) / 32, torch.arange(32) / 32, indexing="ij")
    smooth = (0.5 + 0.3 * torch.sin(2 * torch.pi * rows) * torch.cos(2 * torch.pi * cols))[None]
    down = Downsample((32, 32), factor=2)
    assert psnr(baselines.cubic_upsample(down, down(smooth)), smooth) > 35.0
    gen = torch.Generator().manual_seed(0)
    mask = PixelMask(torch.rand(32, 32, generator=gen) < 0.3)
    assert psnr(baselines.cubic_inpaint(mask, mask(smooth)), smooth) > 35.0


def test_grid_optimisation_fits_the_measurements():
    phantom = shepp_logan_phantom((32, 32), seed=0)[None]
    op = ParallelBeamProjection(20, (32, 32))
    y = op(phantom)
    recon = baselines.grid_optimisation(op, y, channels=1, steps=60, lr=0.1)
    start = baselines.grid_optimisation(op, y, channels=1, steps=0)
    assert float((op(recon) - y).norm()) < 0.3 * float((op(start) - y).norm())
