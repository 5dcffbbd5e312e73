"""Gaussian-activation MLP: the activation's closed form, PyTorch's initialisation, and E σ(z) at init."""

import math

import pytest
import torch
from torch import nn

from inr.errors import InputError
from inr.networks import MLP, GaussActivation, GaussMLP
from inr.networks.gauss import GaussFunction


def test_activation_is_the_papers_gaussian():
    # exp(−(s z)²) = exp(−z²/(2σ²)) with σ = 1/(√2 s) (Ramasinghe & Lucey's form)
    z = torch.linspace(-1, 1, 101, dtype=torch.float64)
    s = 7.0
    sigma = 1 / (math.sqrt(2) * s)
    # rtol 1e-13: exp of exponents up to 49 in float64 differs by a few ulps between the two forms
    torch.testing.assert_close(GaussActivation(s)(z), torch.exp(-(z**2) / (2 * sigma**2)), rtol=1e-13, atol=0)


def test_layout_matches_mlp_and_input_is_rescaled():
    net, mlp = GaussMLP(3, 2, width=16, depth=4), MLP(3, 2, width=16, depth=4)
    shapes = lambda n: [tuple(m.weight.shape) for m in n if isinstance(m, nn.Linear)]
    assert shapes(net) == shapes(mlp) and sum(isinstance(m, GaussActivation) for m in net) == 4
    v = torch.rand(5, 3)
    assert net(v).shape == (5, 2)
    torch.testing.assert_close(net[2](net[1](v * 2 - 1)), nn.Sequential(*list(net)[:3])(v))


@torch.no_grad()
def test_hidden_activation_mean_matches_the_gaussian_integral():
    # PyTorch's default W, b ~ U(−1/√n, 1/√n) (variance 1/(3n)) makes a hidden pre-activation z_j = W_j h + b_j,
    # over the n_out neurons j and for a fixed input, a sum of n iid terms: ≈ N(0, v) with
    # v = (‖h‖² + 1)/(3n). For z ~ N(0, v), E exp(−s²z²) = 1/√(1 + 2 s² v). Width 4096: the mean over
    # neurons has a standard error ≤ 0.5/√4096 ≈ 0.008 (the activation lies in [0, 1]); we allow 0.03.
    torch.manual_seed(0)
    n, s = 4096, 10.0
    net = GaussMLP(2, 1, width=n, depth=2, scale=s)
    x = torch.rand(16, 2)
    h = net[2](net[1](net[0](x)))  # first Gauss layer's output, (16, n)
    z = net[3](h)  # second layer's pre-activations
    v = (h.square().sum(1) + 1) / (3 * n)
    predicted = 1 / torch.sqrt(1 + 2 * s**2 * v)
    measured = torch.exp(-((s * z) ** 2)).mean(1)
    assert (measured - predicted).abs().max() < 0.03
    assert predicted.min() < 0.9  # the test is not trivially at 1 (tiny v)
    # PyTorch's default bounds, the initialisation of both reference implementations
    for lin in (net[1], net[3]):
        bound = 1 / math.sqrt(lin.in_features)
        assert 0.99 * bound < lin.weight.abs().max() <= bound


def test_bad_scale_is_refused():
    with pytest.raises(InputError, match="scale"):
        GaussMLP(2, 3, scale=-1.0)


def test_fused_activation_derivatives_and_transforms():
    # backward, second derivatives and forward mode against central differences (gradcheck: eps 1e-6,
    # atol 1e-5, rtol 1e-3, float64), and vmap(jacrev) against the closed form σ'(z) = −2s² z exp(−s² z²)
    torch.manual_seed(0)
    z = (0.3 * torch.randn(7, 4, dtype=torch.float64)).requires_grad_()
    fn = lambda z: GaussFunction.apply(z, 2.5)
    assert torch.autograd.gradcheck(fn, (z,), check_forward_ad=True)
    assert torch.autograd.gradgradcheck(fn, (z,))
    from torch.func import jacrev, vmap

    rows = z.detach()
    jac = vmap(jacrev(lambda row: GaussActivation(2.5)(row)))(rows)  # (7, 4, 4), diagonal
    closed = -2 * 2.5**2 * rows * torch.exp(-((2.5 * rows) ** 2))
    torch.testing.assert_close(jac, torch.diag_embed(closed), rtol=1e-12, atol=1e-12)
