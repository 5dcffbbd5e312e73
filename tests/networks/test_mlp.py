"""MLP sizes, depth convention, activations and initialisations."""

import math

import pytest
import torch
from torch import nn

from inr.networks import MLP, make_activation
from inr.networks.mlp import TRUNCATED_NORMAL_STD


def test_depth_counts_hidden_layers():
    net = MLP(5, 2, width=7, depth=3)
    linears = [m for m in net if isinstance(m, nn.Linear)]
    assert [(l.in_features, l.out_features) for l in linears] == [(5, 7), (7, 7), (7, 7), (7, 2)]
    assert sum(isinstance(m, nn.ReLU) for m in net) == 3


def test_depth_zero_is_linear():
    net = MLP(3, 2, depth=0)
    x = torch.randn(4, 3)
    torch.testing.assert_close(net(x), x @ net[0].weight.T + net[0].bias)


def test_sigmoid_output_in_unit_interval():
    net = MLP(2, 3, width=16, depth=2, output_activation="sigmoid")
    y = net(torch.randn(100, 2) * 10)
    assert y.shape == (100, 3) and (y > 0).all() and (y < 1).all()


def test_unknown_activation_names_choices():
    with pytest.raises(ValueError, match="relu"):
        make_activation("swishy")


def truncated_normal_std(a: float) -> float:
    """Standard deviation of N(0, 1) truncated to (−a, a), from the closed form (not from the module)."""
    phi = math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    mass = math.erf(a / math.sqrt(2))
    return math.sqrt(1 - 2 * a * phi / mass)


def test_paper_init_constant_is_the_truncated_normal_std():
    assert TRUNCATED_NORMAL_STD == pytest.approx(truncated_normal_std(2.0), rel=1e-12)


def test_paper_init_weight_and_bias_statistics():
    # stax Dense: W ~ Glorot normal truncated at ±2 of the underlying σ, std exactly (2/(fan_in+fan_out))^½;
    # b ~ N(0, 0.01²). Sizes as the paper's 512 → 256 → 256 → 256 → 3 network; 6 = in/out of a small layer.
    torch.manual_seed(0)
    net = MLP(512, 3, width=256, depth=3, init="paper")
    linears = [m for m in net if isinstance(m, nn.Linear)]
    assert [(l.in_features, l.out_features) for l in linears] == [(512, 256), (256, 256), (256, 256), (256, 3)]
    weights = torch.cat([l.weight.flatten() for l in linears[1:3]]).double()  # 131,072 draws at one scale
    v = 2.0 / (256 + 256)
    # standard error of a sample std of n draws ≈ σ·(κ−1)^½/(2√n) with κ ≈ 2.4 for this truncation: 0.2 %
    assert weights.std().item() == pytest.approx(math.sqrt(v), rel=0.01)
    assert abs(weights.mean().item()) < 4 * math.sqrt(v / len(weights))
    bound = 2 * math.sqrt(v) / truncated_normal_std(2.0)
    assert weights.abs().max().item() <= bound * (1 + 1e-6)
    assert weights.abs().max().item() > 0.97 * bound  # truncated at ±2σ, not at ±1σ or clipped elsewhere
    # a truncated normal: the share beyond 1 underlying σ is P(1<|z|<2)/P(|z|<2) = 0.2859 (vs 0.3173 untruncated)
    beyond = (weights.abs() > bound / 2).double().mean().item()
    assert beyond == pytest.approx(
        (math.erf(2 / math.sqrt(2)) - math.erf(1 / math.sqrt(2))) / math.erf(2 / math.sqrt(2)), abs=0.005
    )
    for layer in linears:  # every layer at its own fans, including the first and the output layer
        expected = math.sqrt(2.0 / (layer.in_features + layer.out_features))
        tol = 0.05 if layer.weight.numel() > 1000 else 0.25
        assert layer.weight.std().item() == pytest.approx(expected, rel=tol)
    biases = torch.cat([l.bias for l in linears]).double()  # 771 draws
    assert biases.std().item() == pytest.approx(0.01, rel=0.1) and abs(biases.mean().item()) < 0.002
    assert (biases != 0).all()


def test_torch_init_is_the_default_and_differs():
    torch.manual_seed(0)
    default = MLP(64, 3, width=256, depth=1)
    assert default.init == "torch"
    first = default[0].weight
    bound = 1 / math.sqrt(64)  # nn.Linear: U(−1/√fan_in, 1/√fan_in)
    assert first.abs().max().item() <= bound and first.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    torch.manual_seed(0)
    paper = MLP(64, 3, width=256, depth=1, init="paper")
    assert paper[0].weight.std().item() == pytest.approx(math.sqrt(2 / (64 + 256)), rel=0.02)
    with pytest.raises(ValueError, match="paper"):
        MLP(2, 3, init="glorot")
