"""Kernel spectra: circulant eigenvalues vs a dense eigensolver, mode decay vs the closed form."""

import torch

from inr.encoders import GaussianEncoding
from inr.ntk import analytic_ntk, circulant_spectrum, kernel_eigh, mode_decay, predict_gd_mse, residual_modes, top_eigenvalues


def test_stationary_kernel_spectrum_is_the_dft_of_its_profile():
    enc = GaussianEncoding(1, 32, sigma=4.0, seed=0).double()
    v = torch.arange(64, dtype=torch.float64)[:, None] / 64
    # integer frequencies make the features exactly 1-periodic, so the kernel matrix is circulant
    enc.b = enc.b.round()
    k = analytic_ntk(enc(v), enc(v), depth=2)
    spectrum = circulant_spectrum(k[0])
    dense = torch.linalg.eigvalsh(k)
    torch.testing.assert_close(spectrum.sort().values, dense, rtol=1e-9, atol=1e-9 * dense.max().item())
    torch.testing.assert_close(top_eigenvalues(k, 3), dense.flip(0)[:3])


def test_mode_decay_reproduces_the_training_residual():
    a = torch.randn(6, 6, dtype=torch.float64)
    k = a @ a.T
    y = torch.randn(6, dtype=torch.float64)
    lam, v = kernel_eigh(k)
    t = torch.tensor([1.0, 3.0], dtype=torch.float64)  # whole steps, as the discrete form needs
    for discrete in (False, True):
        decay = mode_decay(lam, lr=0.3, t=t, n=6, discrete=discrete)  # (2, 6)
        residual = v @ (decay[..., None] * residual_modes(v, -y)[None, :, None])[..., 0].T  # f₀ = 0: r₀ = −y
        pred = predict_gd_mse(k, y, 0.3, t, discrete=discrete).train
        torch.testing.assert_close(residual.T, pred - y)
