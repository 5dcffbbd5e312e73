"""Multiplicative filter networks: the recursion, the released initialisation of both filters, sizes."""

import math

import pytest
import torch

from inr.errors import InputError
from inr.networks import MFN, FourierFilter, GaborFilter


@pytest.mark.parametrize("filter", ["fourier", "gabor"])
@pytest.mark.parametrize("in_dim", [1, 2, 3])
def test_shapes(filter, in_dim):
    net = MFN(in_dim, 4, width=16, depth=3, filter=filter)
    assert net(torch.rand(9, in_dim)).shape == (9, 4) and len(net.filters) == 4 and len(net.linears) == 3


@torch.no_grad()
def test_forward_is_the_product_recursion():
    # z_0 = g_0(x), z_i = g_i(x) ⊙ (W_i z_{i−1} + b_i), f = W_out z_D + b_out, written out for D = 2
    torch.manual_seed(0)
    net = MFN(2, 3, width=8, depth=2, filter="gabor").double()
    x = torch.rand(20, 2, dtype=torch.float64)
    u = 2 * x - 1
    g = [f(u) for f in net.filters]
    z = g[2] * net.linears[1](g[1] * net.linears[0](g[0]))
    torch.testing.assert_close(net(x), net.head(z), rtol=1e-14, atol=1e-14)
    # the Gabor window: exp(−γ/2 ‖u − μ‖²) sin(Wu + b), against the direct difference
    f = net.filters[0]
    direct = torch.exp(-0.5 * f.gamma * (u[:, None, :] - f.mu[None]).square().sum(-1)) * torch.sin(f.linear(u))
    torch.testing.assert_close(g[0], direct, rtol=1e-12, atol=1e-14)


def test_fourier_initialisation():
    # mfn/mfn.py: W = PyTorch's U(±1/√d) × input_scale/√(D + 1), b ~ U(−π, π); hidden linears U(±√(ws/width))
    torch.manual_seed(0)
    net = MFN(2, 3, width=1024, depth=3, filter="fourier", input_scale=256.0, weight_scale=2.0)
    bound = 256.0 / math.sqrt(4) / math.sqrt(2)
    for f in net.filters:
        assert isinstance(f, FourierFilter)
        assert 0.99 * bound < f.linear.weight.abs().max() <= bound
        assert 0.99 * math.pi < f.linear.bias.abs().max() <= math.pi
    for lin in net.linears:
        assert 0.99 * math.sqrt(2.0 / 1024) < lin.weight.abs().max() <= math.sqrt(2.0 / 1024)


def test_gabor_initialisation_statistics():
    # mfn/mfn.py GaborNet: each filter gets input_scale/√(D + 1) and Gamma(α/(D + 1), β)
    net = MFN(2, 3, width=8, depth=3, filter="gabor", input_scale=64.0, alpha=6.0, beta=2.0)
    assert all(isinstance(f, GaborFilter) and (f.input_scale, f.alpha, f.beta) == (32.0, 1.5, 2.0) for f in net.filters)
    # γ ~ Gamma(1.5, rate 2): mean 0.75, variance 0.375. Over 32768 draws the mean's sd is 0.0034 and the
    # sample variance's ≈ 0.005 (excess kurtosis 6/1.5 = 4): we allow 0.015 and 0.025.
    # μ ~ U(−1, 1); W/√γ = PyTorch's U(±1/√d) × input_scale.
    torch.manual_seed(0)
    f = GaborFilter(2, 32768, input_scale=32.0, alpha=1.5, beta=2.0)
    gamma = f.gamma.detach()
    assert abs(gamma.mean().item() - 0.75) < 0.015 and abs(gamma.var().item() - 0.375) < 0.025
    assert 0.999 < f.mu.abs().max() <= 1.0
    unscaled = f.linear.weight.detach() / gamma.sqrt()[:, None]
    bound = 32.0 / math.sqrt(2)
    assert 0.99 * bound < unscaled.abs().max() <= bound * (1 + 1e-6)


def test_bad_filter_is_refused():
    with pytest.raises(InputError, match="filter"):
        MFN(2, 3, filter="wavelet")
    with pytest.raises(InputError, match="input_scale"):
        MFN(2, 3, input_scale=0.0)
