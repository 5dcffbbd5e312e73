"""The classical reconstructions: each recovers what its measurement allows."""

import numpy as np
import pytest
import torch
from scipy.optimize import lsq_linear
from skimage.restoration import denoise_tv_chambolle

from inr.data import shepp_logan_phantom
from inr.metrics import psnr
from inr.operators import Downsample, KSpaceSampling, Operator, ParallelBeamProjection, PixelMask, baselines, gaussian_kspace_mask


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


# --- solvers through any operator ---------------------------------------------------------------------------
class Identity(Operator):
    def forward(self, x):
        return x

    def adjoint(self, y):
        return y


@pytest.mark.parametrize("shape", [(2, 7), (2, 5, 6), (1, 4, 5, 3)])
def test_finite_gradient_adjoint_is_its_exact_transpose(shape):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, generator=gen, dtype=torch.float64)
    g = torch.randn(len(shape) - 1, *shape, generator=gen, dtype=torch.float64)
    lhs = (baselines.finite_gradient(x) * g).sum()
    rhs = (x * baselines.finite_gradient_adjoint(g)).sum()
    assert abs(float(lhs - rhs)) < 1e-12 * float(lhs.abs() + 1)
    # forward differences along each axis, the last one zero (numpy.diff padded with a zero)
    for axis in range(1, len(shape)):
        expected = np.diff(x.numpy(), axis=axis, append=x.numpy().take([-1], axis=axis))
        np.testing.assert_allclose(baselines.finite_gradient(x)[axis - 1].numpy(), expected, rtol=0, atol=1e-15)


def noisy_phantom(size=32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    clean = 0.2 + 0.6 * shepp_logan_phantom((size, size), seed=0).double()
    return clean, clean + 0.05 * torch.randn(size, size, generator=gen, dtype=torch.float64)


def test_tv_through_the_identity_is_skimages_tv_denoising():
    """A = I, no box: ½‖x − y‖² + λ TV(x) is the ROF problem denoise_tv_chambolle solves with weight = λ (same
    isotropic forward-difference TV); both run to convergence and agree within 1e-4 (values in [0.2, 0.8]; the
    two solvers' answers differ by 2e-5 at convergence)."""
    _, noisy = noisy_phantom(24)
    reference = denoise_tv_chambolle(noisy.numpy(), weight=0.1, eps=1e-12, max_num_iter=20000)
    ours = baselines.tv_least_squares(Identity((24, 24)), noisy[None], 1, 0.1, iterations=100, bounds=None, inner=30)[0]
    assert np.abs(ours.numpy() - reference).max() < 1e-4
    objective = lambda u: 0.5 * float(((u - noisy) ** 2).sum()) + 0.1 * float(baselines.total_variation(u[None]))
    assert objective(ours) <= objective(torch.from_numpy(reference)) * (1 + 1e-5)


def test_tv_through_a_unitary_complex_operator_is_the_same_denoising():
    """k-space with every frequency measured is unitary (‖F x − F y‖ = ‖x − y‖): TV least squares through it, with
    complex measurements and the real inner product, solves the same ROF problem as skimage on y."""
    _, noisy = noisy_phantom(16)
    full = KSpaceSampling(torch.ones(16, 16, dtype=torch.bool)).double()
    reference = denoise_tv_chambolle(noisy.numpy(), weight=0.05, eps=1e-12, max_num_iter=20000)
    ours = baselines.tv_least_squares(full, full(noisy[None]), 1, 0.05, iterations=100, bounds=None, inner=30)[0]
    assert np.abs(ours.numpy() - reference).max() < 1e-4


def dense_matrix(operator, shape):
    """The operator as a dense (M, N) float64 matrix, column j = A e_j."""
    eye = torch.eye(int(np.prod(shape)), dtype=torch.float64).reshape(-1, 1, *shape)
    return torch.stack([operator(e).flatten() for e in eye], dim=1).numpy()


def test_box_least_squares_matches_scipys_bounded_solver():
    """Overdetermined CT (24 angles of an 8² grid, 288 rays for 64 unknowns) of a field partly outside [0, 1], so
    the bounds are active: FISTA's box-constrained least squares equals scipy.optimize.lsq_linear's."""
    op = ParallelBeamProjection(24, (8, 8)).double()
    gen = torch.Generator().manual_seed(3)
    field = torch.rand(1, 8, 8, generator=gen, dtype=torch.float64) * 2.0 - 0.5  # in [−0.5, 1.5]
    y = op(field)
    reference = lsq_linear(dense_matrix(op, (8, 8)), y.flatten().numpy(), bounds=(0.0, 1.0), tol=1e-14, max_iter=10000).x
    ours = baselines.box_least_squares(op, y, 1, iterations=1000)
    assert ((reference > 1e-6) & (reference < 1 - 1e-6)).sum() < 64  # some bounds are active
    assert np.abs(ours.flatten().numpy() - reference).max() < 1e-4


def test_operator_norm_is_the_largest_singular_value():
    op = ParallelBeamProjection(6, (8, 8)).double()
    largest = np.linalg.svd(dense_matrix(op, (8, 8)), compute_uv=False)[0]
    assert baselines.operator_norm(op, iterations=200) == pytest.approx(largest, rel=1e-4)


def test_sparse_view_tv_beats_filtered_back_projection_and_the_weight_is_chosen_on_the_grid():
    """20 angles of a 24² phantom: the TV reconstruction with the weight chosen on another phantom beats FBP on
    this one; the choice is the argmax of the PSNRs it reports."""
    op = ParallelBeamProjection(20, (24, 24))
    test, heldout = shepp_logan_phantom((24, 24), seed=0)[None], shepp_logan_phantom((24, 24), seed=1000)[None]
    weights = [1e-4, 1e-2]
    weight, scores = baselines.choose_tv_weight(op, op(heldout), heldout, weights, iterations=60)
    assert weight == weights[int(np.argmax(scores))]
    tv = baselines.tv_least_squares(op, op(test), 1, weight, iterations=60)
    fbp = baselines.filtered_back_projection(op, op(test)).clamp(0, 1)
    assert psnr(tv, test) > psnr(fbp, test) + 3.0
    assert float(tv.min()) >= 0.0 and float(tv.max()) <= 1.0


def test_zero_filled_reconstruction_is_the_real_part():
    """For a real object, Re F⁻¹y₀ is Aᴴy (the least-squares estimate from the samples); |F⁻¹y₀| is biased up."""
    phantom = shepp_logan_phantom((16, 16, 16), seed=1)[None]
    sparse = KSpaceSampling(gaussian_kspace_mask((16, 16, 16), seed=0))
    y = sparse(phantom)
    torch.testing.assert_close(baselines.zero_filled_ifft(sparse, y), sparse.adjoint(y))
    assert bool((sparse.zero_filled(y).abs() >= baselines.zero_filled_ifft(sparse, y)).all())
