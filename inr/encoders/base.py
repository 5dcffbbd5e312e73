"""The encoder interface: a module mapping coordinates (N, in_dim) to features (N, out_dim)."""

from __future__ import annotations

from torch import Tensor, nn


class Encoder(nn.Module):
    """Base class of every coordinate encoding.

    Subclasses set ``in_dim`` (coordinate dimensions d) and ``out_dim`` (feature width) in ``__init__``
    and implement ``forward(v: (N, d)) -> (N, out_dim)``. Coordinates arrive in [0, 1)^d; an encoder that
    wants another domain maps it itself.
    """

    in_dim: int
    out_dim: int

    def forward(self, v: Tensor) -> Tensor:  # pragma: no cover - interface
        raise NotImplementedError(f"{type(self).__name__} must implement forward")

    def extra_repr(self) -> str:
        return f"in_dim={self.in_dim}, out_dim={self.out_dim}"
