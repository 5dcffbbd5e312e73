"""Stacked encoders: member k's features are its own encoder's (per-member σ, seed and positional scale), and the
encoders that cannot be stacked are refused."""

import pytest
import torch

from inr.encoders import (
    BasicEncoding,
    CompositeEncoding,
    EncoderPart,
    GaussianEncoding,
    HashGridEncoding,
    IdentityEncoding,
    NeRFEncoding,
    PositionalEncoding,
)
from inr.encoders.stacked import StackedFourierEncoding, StackedIdentity, stack_encoders
from inr.errors import InputError

MEMBERS = {
    "gaussian": [GaussianEncoding(in_dim=2, num_features=16, sigma=s, seed=k) for k, s in enumerate((1.0, 10.0, 10.0, 25.0))],
    "positional": [
        PositionalEncoding(in_dim=2, num_frequencies=6, sigma=s, endpoint=True, minus_one=True) for s in (8.0, 64.0, 128.0)
    ],
    "basic": [BasicEncoding(in_dim=3)] * 2,
    "identity": [IdentityEncoding(in_dim=2)] * 3,
}


@pytest.mark.parametrize("name", list(MEMBERS))
def test_member_k_features_are_its_encoders(name):
    encoders = MEMBERS[name]
    stacked = stack_encoders(encoders)
    v = torch.rand(50, encoders[0].in_dim)
    features = stacked(v)
    assert features.shape == (len(encoders), 50, encoders[0].out_dim)
    assert (stacked.in_dim, stacked.out_dim) == (encoders[0].in_dim, encoders[0].out_dim)
    for k, enc in enumerate(encoders):
        assert torch.equal(features[k], enc(v)), (name, k)  # the same products in the same order
    if isinstance(stacked, StackedFourierEncoding):  # the state of member k is its B
        assert all(torch.equal(stacked.state_dict()["b"][k], enc.b) for k, enc in enumerate(encoders))


def test_identity_members_share_the_coordinates_without_a_copy():
    v = torch.rand(5, 2)
    stacked = stack_encoders([IdentityEncoding(in_dim=2)] * 4)
    assert isinstance(stacked, StackedIdentity) and stacked(v).data_ptr() == v.data_ptr() and stacked(v).shape == (4, 5, 2)


@pytest.mark.parametrize(
    "encoders, message",
    [
        ([HashGridEncoding(in_dim=2, n_levels=2, log2_hashmap_size=6)] * 2, r"member 0's HashGridEncoding cannot be stacked"),
        ([NeRFEncoding(in_dim=2, num_frequencies=2)] * 2, r"NeRFEncoding cannot be stacked"),
        (
            [CompositeEncoding([EncoderPart(IdentityEncoding(in_dim=1), [0]), EncoderPart(BasicEncoding(in_dim=1), [1])])] * 2,
            r"CompositeEncoding cannot be stacked",
        ),
        ([IdentityEncoding(in_dim=2), BasicEncoding(in_dim=2)], r"members mix the identity encoding with another"),
        (
            [GaussianEncoding(num_features=4), PositionalEncoding(num_frequencies=3)],
            r"member 1's encoding has B of shape \(6, 2\)",
        ),
        ([], r"at least one member"),
    ],
)
def test_encoders_that_cannot_be_stacked_are_refused_in_one_line(encoders, message):
    with pytest.raises(InputError, match=message) as err:
        stack_encoders(encoders)
    assert "\n" not in str(err.value)
