"""The identity encoding: the raw coordinates ("no mapping" in Tancik et al. 2020)."""

from __future__ import annotations

from torch import Tensor

from inr.encoders.base import Encoder


class IdentityEncoding(Encoder):
    """γ(v) = v, out_dim = d.

    Example:
        >>> import torch
        >>> IdentityEncoding(in_dim=2)(torch.tensor([[0.25, 0.5]]))
        tensor([[0.2500, 0.5000]])
    """

    def __init__(self, in_dim: int = 2) -> None:
        super().__init__()
        self.in_dim = in_dim
        self.out_dim = in_dim

    def forward(self, v: Tensor) -> Tensor:
        return v
