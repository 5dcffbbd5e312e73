"""Stacked networks: the batched layer against per-member products (float64), member k's initialisation against a
single network drawn with its seed, the state-dict slicing, and the networks refused."""

from functools import partial

import numpy as np
import pytest
import torch
from torch import nn

from inr.encoders import IdentityEncoding
from inr.errors import InputError
from inr.networks import BACON, FINER, MFN, MLP, SIREN, GaussMLP, activation_names
from inr.networks.stacked import StackedLinear, member_state, stack_networks, stack_states
from inr.tasks.members import build_members


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_stacked_linear_is_each_members_affine_map(shared, bias):
    """y_k = x_k W_kᵀ + b_k against numpy, member by member, for inputs per member (K, N, in) or shared (N, in)."""
    gen = torch.Generator().manual_seed(0)
    layer = StackedLinear(4, 3, 5, bias=bias).double()
    with torch.no_grad():
        layer.weight.copy_(torch.randn(4, 5, 3, generator=gen, dtype=torch.float64))
        if bias:
            layer.bias.copy_(torch.randn(4, 5, generator=gen, dtype=torch.float64))
    x = (
        torch.randn(7, 3, generator=gen, dtype=torch.float64)
        if shared
        else torch.randn(4, 7, 3, generator=gen, dtype=torch.float64)
    )
    y = layer(x).detach().numpy()
    assert y.shape == (4, 7, 5)
    for k in range(4):
        xk = x.numpy() if shared else x[k].numpy()
        expected = xk @ layer.weight[k].detach().numpy().T + (layer.bias[k].detach().numpy() if bias else 0.0)
        np.testing.assert_allclose(y[k], expected, rtol=0, atol=1e-12)


NETWORKS = {
    **{
        f"mlp-{act}-{out}-{init}": partial(MLP, width=8, depth=2, activation=act, output_activation=out, init=init)
        for act in activation_names()
        for out in ("none", "sigmoid")
        for init in ("torch", "paper")
    },
    "mlp-depth0": partial(MLP, width=8, depth=0),
    "siren": partial(SIREN, width=8, depth=2),
    "siren-torch-bias-no-rescale": partial(SIREN, width=8, depth=3, bias_init="torch", rescale_input=False, first_omega_0=20.0),
    "siren-sigmoid": partial(SIREN, width=8, depth=1, output_activation="sigmoid"),
    "gauss": partial(GaussMLP, width=8, depth=2, scale=3.0),
    "finer": partial(FINER, width=8, depth=2),
}


@pytest.mark.parametrize("name", list(NETWORKS))
def test_member_k_starts_as_a_single_network_drawn_with_its_seed(name):
    factory, seeds = NETWORKS[name], [5, 0, 11]
    encoders = [IdentityEncoding(in_dim=3)] * 3
    _, stacked = build_members(encoders, seeds, factory, 2)
    x = torch.rand(6, 3, dtype=torch.float64)
    y = stacked.double()(x)
    assert y.shape == (3, 6, 2)
    for k, seed in enumerate(seeds):
        torch.manual_seed(seed)
        single = factory(3, 2)
        state = member_state(stacked.state_dict(), k)
        assert list(state) == list(single.state_dict())
        for key, value in single.state_dict().items():
            assert torch.equal(state[key].float(), value), (name, k, key)  # the same draw, bit for bit
        torch.testing.assert_close(y[k], single.double()(x), rtol=0, atol=1e-12)


def test_state_dicts_stack_and_slice_back():
    nets = [MLP(2, 3, width=4, depth=1) for _ in range(3)]
    stacked = stack_networks(nets)
    states = [n.state_dict() for n in nets]
    assert all(torch.equal(a, b) for a, b in zip(stack_states(states).values(), stacked.state_dict().values()))
    for k in range(3):
        assert all(torch.equal(member_state(stacked.state_dict(), k)[key], v) for key, v in states[k].items())


@pytest.mark.parametrize(
    "nets, message",
    [
        ([SIREN(2, 3, width=4, depth=1, trainable_omega=True)] * 2, r"SIREN holds a Sine with its own parameters"),
        ([MFN(2, 3, width=4, depth=1)] * 2, r"MFN is not a sequence of linear layers and activations"),
        ([BACON(2, 3, width=4, depth=1)] * 2, r"BACON is not a sequence"),
        (
            [nn.Sequential(nn.Linear(2, 4), nn.LayerNorm(4))] * 2,
            r"holds a LayerNorm, which is not a linear layer or an entrywise",
        ),
        ([MLP(2, 3, width=4), MLP(2, 3, width=8)], r"member 1's network differs in shape or settings from member 0's"),
        ([SIREN(2, 3, width=4, hidden_omega_0=30.0), SIREN(2, 3, width=4, hidden_omega_0=20.0)], r"member 1's network differs"),
        ([], r"at least one member"),
    ],
)
def test_networks_that_cannot_be_stacked_are_refused_in_one_line(nets, message):
    with pytest.raises(InputError, match=message) as err:
        stack_networks(nets)
    assert "\n" not in str(err.value)
