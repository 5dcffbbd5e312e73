"""MLP sizes, depth convention and activations."""
import pytest
import torch
from torch import nn

from inr.networks import MLP, make_activation


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
