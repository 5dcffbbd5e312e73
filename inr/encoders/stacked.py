"""K encoders of one width as one module: coordinates (N, d) shared by every member -> features (K, N, out_dim).

Each member keeps its own mapping: a Gaussian B drawn from its own σ and seed, a positional encoding of its own
scale. The state dict has the keys of a single member's encoder, each tensor with a leading axis of K (B as
(K, m, d)), so member k's encoder is the k-th slice, as for stacked networks (``inr.networks.stacked``).

Stackable: ``IdentityEncoding`` and every ``FourierEncoding`` (basic, positional, Gaussian) with one width.
Refused with one line: encoders with trainable parameters or their own layout (hash grid, NeRF, composite).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from inr.encoders.base import Encoder
from inr.encoders.fourier import FourierEncoding
from inr.encoders.identity import IdentityEncoding
from inr.errors import InputError


class StackedFourierEncoding(Encoder):
    """γ_k(v) = [cos 2πB_k v, sin 2πB_k v] for k = 1..K, B (K, m, d) a buffer; (N, d) -> (K, N, 2m).

    Example:
        >>> from inr.encoders import GaussianEncoding
        >>> encs = [GaussianEncoding(in_dim=2, num_features=4, sigma=s, seed=k) for k, s in enumerate((1.0, 5.0, 9.0))]
        >>> stacked = StackedFourierEncoding(encs)
        >>> v = torch.rand(6, 2)
        >>> torch.allclose(stacked(v)[1], encs[1](v), atol=1e-5), tuple(stacked(v).shape)
        (True, (3, 6, 8))
    """

    def __init__(self, encoders: Sequence[FourierEncoding]) -> None:
        super().__init__()
        self.register_buffer("b", torch.stack([enc.b for enc in encoders]))  # (K, m, d)
        self.members, self.in_dim, self.out_dim = len(encoders), self.b.shape[2], 2 * self.b.shape[1]

    def forward(self, v: Tensor) -> Tensor:
        # the products in the order of fourier_features, (2π v) B_kᵀ, so member k's features round as a single model's
        proj = torch.matmul(2 * math.pi * v, self.b.transpose(1, 2))  # (N, d) @ (K, d, m) -> (K, N, m)
        return torch.cat([torch.cos(proj), torch.sin(proj)], dim=-1)  # (K, N, 2m)


class StackedIdentity(Encoder):
    """γ_k(v) = v for every member: (N, d) -> (K, N, d), a view (no copy)."""

    def __init__(self, members: int, in_dim: int) -> None:
        super().__init__()
        self.members, self.in_dim, self.out_dim = members, in_dim, in_dim

    def forward(self, v: Tensor) -> Tensor:
        return v.expand(self.members, *v.shape)


def stack_encoders(encoders: Sequence[Encoder]) -> Encoder:
    """One module evaluating the K encoders on shared coordinates; ``InputError`` names what cannot be stacked.

    Example:
        >>> from inr.encoders import PositionalEncoding
        >>> stack_encoders([PositionalEncoding(num_frequencies=8, sigma=s) for s in (8.0, 64.0)]).b.shape
        torch.Size([2, 16, 2])
    """
    if not encoders:
        raise InputError("model.members: at least one member is needed")
    first = encoders[0]
    identity = [type(e) is IdentityEncoding for e in encoders]
    if all(identity):
        if len({e.in_dim for e in encoders}) > 1:
            raise InputError("model.member_encoders: the members' identity encodings differ in in_dim")
        return StackedIdentity(len(encoders), first.in_dim)
    if any(identity):
        raise InputError("model.member_encoders: members mix the identity encoding with another; they share one kind")
    for k, enc in enumerate(encoders):
        if not isinstance(enc, FourierEncoding) or type(enc).forward is not FourierEncoding.forward:
            raise InputError(
                f"model.member_encoders: member {k}'s {type(enc).__name__} cannot be stacked; members take the identity, "
                "basic, positional or Gaussian encoding"
            )
        if enc.b.shape != first.b.shape:
            raise InputError(
                f"model.member_encoders: member {k}'s encoding has B of shape {tuple(enc.b.shape)}, member 0's "
                f"{tuple(first.b.shape)}; members share one width"
            )
    return StackedFourierEncoding(encoders)
