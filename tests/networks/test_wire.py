"""WIRE: the real-arithmetic network against a complex128 reference, the released code's initialisation and sizes."""

import math

import pytest
import torch
from torch import nn

from inr.errors import InputError
from inr.networks import WIRE, ComplexGabor, ComplexLinear
from inr.networks.wire import GaborFunction


def complex_reference(net: WIRE, x: torch.Tensor) -> torch.Tensor:
    """The released code's forward pass in complex128 arithmetic, from the network's own parameters."""
    h = 2 * x.double() - 1
    gabor = lambda z, m: torch.exp(1j * m.omega_0 * z - (m.scale * z).abs().square())
    modules = [m for m in net if not isinstance(m, nn.Identity)][1:]  # drop the input map
    first, act = modules[0], modules[1]
    h = gabor(h @ first.weight.double().T + first.bias.double(), act)
    for lin, act in zip(modules[2:-1:2], modules[3:-1:2]):
        w = torch.complex(lin.weight[0].double(), lin.weight[1].double())
        b = torch.complex(lin.bias[0].double(), lin.bias[1].double())
        h = gabor(h @ w.T + b, act)
    head = modules[-1]
    w = torch.complex(head.weight[0].double(), head.weight[1].double())
    return (h @ w.T).real + head.bias[0].double()


def test_matches_complex_reference_in_float64():
    torch.manual_seed(0)
    net = WIRE(2, 3, width=32, depth=3, first_omega_0=20.0, hidden_omega_0=15.0, scale=3.0)
    x = torch.rand(200, 2, dtype=torch.float64)
    out = net.double()(x)
    ref = complex_reference(net, x)
    assert out.shape == (200, 3) and out.abs().max() > 1e-3  # a non-trivial output
    # float64 rounding through exp/cos of three layers stays below 1e-11 here; 1e-10 leaves a margin
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("in_dim", [1, 2, 3])
def test_sizes_follow_the_released_code(in_dim):
    # hidden width int(width/√2) complex units; parameters: real first layer, complex hidden layers (2 reals
    # per weight and bias), complex head whose imaginary bias is dropped (it never gets a gradient)
    net = WIRE(in_dim, 4, width=64, depth=3)
    h = int(64 / math.sqrt(2))
    assert net.hidden_width == h == 45
    assert net(torch.rand(7, in_dim)).shape == (7, 4)
    expected = (in_dim * h + h) + 2 * 2 * (h * h + h) + (2 * h * 4 + 4)
    assert sum(p.numel() for p in net.parameters()) == expected


def test_init_is_pytorchs_complex_default():
    # vishwa91/wire leaves nn.Linear(dtype=cfloat) at PyTorch's init: Re and Im each U(−1/√n, 1/√n), n the
    # fan-in. On a 1448 × 1448 layer (2.1M draws per part): max within [0.999, 1] × bound, std within 1 % of
    # bound/√3 (its standard error is 0.05 %), |corr(Re, Im)| < 0.01 (independent parts).
    torch.manual_seed(0)
    net = WIRE(2, 3, width=2048, depth=2)
    first, hidden = net[1], net[3]
    assert isinstance(first, nn.Linear) and isinstance(hidden, ComplexLinear)
    b1 = 1 / math.sqrt(2)
    assert b1 * 0.99 < first.weight.abs().max() <= b1
    n = hidden.in_features
    bound = 1 / math.sqrt(n)
    for part in hidden.weight.detach():
        assert 0.999 * bound < part.abs().max() <= bound
        assert abs(part.std().item() / (bound / math.sqrt(3)) - 1) < 0.01
    re, im = hidden.weight.detach().reshape(2, -1)
    assert abs(torch.corrcoef(torch.stack([re, im]))[0, 1].item()) < 0.01
    assert hidden.bias.abs().max() <= bound


def test_gabor_modulus_is_bounded_and_the_window_localises():
    # |ψ(z)| = e^{−ω₀ y − s₀²|z|²} ≤ e^{ω₀²/(4 s₀²)}, the maximum at y = −ω₀/(2 s₀²), x = 0
    act = ComplexGabor(omega_0=20.0, scale=10.0)
    axis = torch.linspace(-1, 1, 401, dtype=torch.float64)
    re, im = torch.meshgrid(axis, axis, indexing="ij")
    out = act(torch.cat([re.reshape(-1, 1), im.reshape(-1, 1)], dim=1))
    modulus = out.square().sum(1).sqrt()
    assert modulus.max() <= math.exp(20.0**2 / (4 * 10.0**2)) * (1 + 1e-12)
    assert abs(modulus.max().item() - math.e) < 0.01  # the grid passes within 0.005 of the maximiser
    # on the real axis the window e^{−s₀²z²} falls below 1e-3 for |z| > √(ln 1000)/s₀ = 0.263
    real = ComplexGabor(omega_0=20.0, scale=10.0, real_input=True)(torch.tensor([[0.27]]))
    assert real.square().sum().sqrt() < 1e-3


def test_trainable_omega_and_scale_get_gradients():
    torch.manual_seed(0)
    fixed = WIRE(2, 1, width=16, depth=2)
    assert not any(p.ndim == 0 for p in fixed.parameters())
    net = WIRE(2, 1, width=16, depth=2, scale=2.0, trainable=True)
    scalars = [p for p in net.parameters() if p.ndim == 0]
    assert len(scalars) == 4  # ω₀ and s₀ of both Gabor layers
    net(torch.rand(64, 2)).square().mean().backward()
    assert all(p.grad is not None and p.grad.abs() > 0 for p in scalars)


def test_bad_hyper_parameters_are_refused():
    with pytest.raises(InputError, match="scale"):
        WIRE(2, 3, scale=0.0)
    with pytest.raises(InputError, match="depth"):
        WIRE(2, 3, depth=0)


def test_fused_gabor_derivatives_match_finite_differences_in_float64():
    # backward, second derivatives and forward mode of the fused activation against central differences
    # (torch.autograd.gradcheck: eps 1e-6, atol 1e-5, rtol 1e-3 on float64 inputs near the window's centre)
    torch.manual_seed(0)
    x = (0.2 * torch.randn(6, 5, dtype=torch.float64)).requires_grad_()
    y = (0.2 * torch.randn(6, 5, dtype=torch.float64)).requires_grad_()
    fn = lambda x, y: GaborFunction.apply(x, y, 7.0, 3.0)
    assert torch.autograd.gradcheck(fn, (x, y), check_forward_ad=True)
    assert torch.autograd.gradgradcheck(fn, (x, y))


def test_fused_gabor_equals_the_plain_activation_and_the_ntk_transforms_apply():
    torch.manual_seed(0)
    fused = ComplexGabor(omega_0=20.0, scale=10.0)
    plain = ComplexGabor(omega_0=20.0, scale=10.0, trainable=True)  # 0-d parameters: the unfused path
    z = 0.1 * torch.randn(50, 8, dtype=torch.float64)
    torch.testing.assert_close(fused(z), plain.double()(z), rtol=1e-12, atol=1e-12)
    # per-sample Jacobians through vmap(jacrev) and forward mode (jvp), as the empirical NTK computes them
    from torch.func import jacrev, jvp, vmap

    jac = vmap(jacrev(lambda row: fused(row[None])[0]))(z)  # (50, 8, 8)
    ref = vmap(jacrev(lambda row: plain(row[None])[0]))(z)
    torch.testing.assert_close(jac, ref, rtol=1e-10, atol=1e-10)
    tangent = torch.randn_like(z)
    torch.testing.assert_close(jvp(fused, (z,), (tangent,))[1], jvp(plain, (z,), (tangent,))[1], rtol=1e-10, atol=1e-10)


def test_karatsuba_layer_equals_the_block_matrix():
    torch.manual_seed(0)
    for real_output in (False, True):
        lin = ComplexLinear(6, 4, real_output=real_output).double()
        h = torch.randn(9, 12, dtype=torch.float64)
        torch.testing.assert_close(lin(h), h @ lin.block_weight().T + lin.bias.reshape(-1), rtol=1e-12, atol=1e-12)
