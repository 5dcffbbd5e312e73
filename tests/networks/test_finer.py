"""FINER: the variable-periodic activation and its gradient, the released initialisation, and what k tunes."""

import math

import pytest
import torch
from torch import nn

from inr.errors import InputError
from inr.networks import FINER, SIREN, FinerSine
from inr.spectral import grid_dft, radial_frequency


def test_activation_and_both_gradients_against_closed_forms():
    z0 = torch.linspace(-2, 2, 81, dtype=torch.float64)
    w = 3.0
    argument = w * (z0.abs() + 1) * z0
    # released code (scale_req_grad=False): (|z| + 1) held constant -> ω(|z| + 1) cos(·); else the derivative
    for scale_grad, slope in ((False, z0.abs() + 1), (True, 2 * z0.abs() + 1)):
        z = z0.clone().requires_grad_(True)
        y = FinerSine(w, scale_grad=scale_grad)(z)
        torch.testing.assert_close(y.detach(), torch.sin(argument), rtol=0, atol=1e-14)
        (grad,) = torch.autograd.grad(y.sum(), z)
        torch.testing.assert_close(grad, w * slope * torch.cos(argument), rtol=0, atol=1e-12)


def test_weights_follow_siren_and_biases_pytorch_or_k():
    torch.manual_seed(0)
    net = FINER(2, 3, width=1024, depth=3, first_omega_0=30.0, hidden_omega_0=20.0)
    linears = [m for m in net if isinstance(m, nn.Linear)]
    weight_bounds = [1 / 2] + [math.sqrt(6 / 1024) / 20] * 3  # U(−1/n, 1/n), then U(±√(6/n)/ω₀)
    bias_bounds = [1 / math.sqrt(2)] + [1 / math.sqrt(1024)] * 3  # PyTorch's U(±1/√n)
    for lin, wb, bb in zip(linears, weight_bounds, bias_bounds):
        assert 0.99 * wb < lin.weight.abs().max() <= wb
        assert lin.bias.abs().max() <= bb and (lin.out_features < 1024 or lin.bias.abs().max() > 0.99 * bb)
    assert [m.omega_0 for m in net if isinstance(m, FinerSine)] == [30.0, 20.0, 20.0]
    # first_bias_scale = k: the first bias ~ U(−k, k) (1024 draws: max within 1 % of k), later biases unchanged
    tuned = FINER(2, 3, width=1024, depth=3, first_bias_scale=20.0)
    first_bias = tuned[1].bias.detach()
    assert 19.8 < first_bias.abs().max() <= 20.0 and abs(first_bias.mean().item()) < 1.5  # sd of mean: 0.36
    assert tuned[3].bias.abs().max() <= 1 / math.sqrt(1024)


@torch.no_grad()
def spectral_centroid(net: nn.Module, n: int = 1024) -> float:
    """Σ|k||c_k|² / Σ|c_k|² of the network's 1D output on n grid points, mean removed (project's DFT)."""
    y = net.double()(torch.arange(n, dtype=torch.float64)[:, None] / n).T  # (n, 1) -> (1, n)
    power = grid_dft(y - y.mean()).abs().square()[0]
    return float((radial_frequency((n,)) * power).sum() / power.sum())


def test_first_bias_scale_moves_the_spectrum_up():
    # FINER's claim: a wider first bias selects higher-frequency parts of sin(ω₀(|z| + 1)z). Measured at init
    # on 1024 points (Nyquist 512): the centroid grows ≥ 2× per step k = 1 -> 5 -> 20 (seed 0: ≈ 16, 49, 160),
    # and FINER at PyTorch's bias sits above SIREN with the same ω₀ and weights (≈ 17 vs 6.5).
    centroids = []
    for k in (1.0, 5.0, 20.0):
        torch.manual_seed(0)
        centroids.append(spectral_centroid(FINER(1, 1, width=256, depth=3, first_bias_scale=k)))
    assert centroids[1] > 2 * centroids[0] and centroids[2] > 2 * centroids[1]
    torch.manual_seed(0)
    finer = spectral_centroid(FINER(1, 1, width=256, depth=3))
    torch.manual_seed(0)
    siren = spectral_centroid(SIREN(1, 1, width=256, depth=3, bias_init="torch"))
    assert finer > 1.5 * siren


def test_shapes_and_bad_input():
    assert FINER(3, 2, width=8, depth=2)(torch.rand(4, 3)).shape == (4, 2)
    with pytest.raises(InputError, match="first_bias_scale"):
        FINER(2, 3, first_bias_scale=-1.0)
    with pytest.raises(InputError, match="hidden_omega_0"):
        FINER(2, 3, hidden_omega_0=0.0)
