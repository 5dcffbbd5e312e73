"""``CompositeEncoding``: different encoders on different input dimensions (time vs space), concatenated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor, nn

from inr.encoders.base import Encoder
from inr.errors import InputError


@dataclass
class EncoderPart:
    """One sub-encoder and the input dimensions it reads, in order (``encoder.in_dim == len(dims)``)."""

    encoder: Encoder
    dims: list[int]


class CompositeEncoding(Encoder):
    """γ(v) = [γ_1(v[D_1]), …, γ_P(v[D_P])], out_dim = Σ_p γ_p.out_dim.

    Part p sees exactly the columns D_p of the coordinates, in the order listed; a dimension may feed
    several parts (a hash grid over (t, x, y) next to a Fourier encoding of t alone), but every input
    dimension must feed at least one. ``in_dim`` defaults to max over D_p + 1. In YAML::

        encoder:
          class_path: inr.encoders.CompositeEncoding
          init_args:
            parts:
              - encoder: {class_path: inr.encoders.NeRFEncoding, init_args: {in_dim: 1, num_frequencies: 4}}
                dims: [0]
              - encoder: {class_path: inr.encoders.HashGridEncoding, init_args: {in_dim: 2}}
                dims: [1, 2]

    Example:
        >>> from inr.encoders import IdentityEncoding, BasicEncoding
        >>> enc = CompositeEncoding([EncoderPart(BasicEncoding(in_dim=1), [0]), EncoderPart(IdentityEncoding(in_dim=2), [1, 2])])
        >>> enc.in_dim, enc.out_dim, enc(torch.tensor([[0.0, 0.25, 0.5]]))
        (3, 4, tensor([[1.0000, 0.0000, 0.2500, 0.5000]]))
    """

    def __init__(self, parts: Sequence[EncoderPart], in_dim: Optional[int] = None) -> None:
        super().__init__()
        parts = [p if isinstance(p, EncoderPart) else EncoderPart(**p) for p in parts]
        if not parts:
            raise InputError("CompositeEncoding: parts is empty; give at least one {encoder, dims}")
        for i, part in enumerate(parts):
            dims = list(part.dims)
            if not dims or len(set(dims)) != len(dims) or min(dims) < 0:
                raise InputError(f"CompositeEncoding: parts[{i}].dims must be distinct non-negative indices, got {dims}")
            if part.encoder.in_dim != len(dims):
                raise InputError(
                    f"CompositeEncoding: parts[{i}].encoder ({type(part.encoder).__name__}) has in_dim "
                    f"{part.encoder.in_dim} but parts[{i}].dims lists {len(dims)} dimensions {dims}"
                )
        used = sorted({d for part in parts for d in part.dims})
        self.in_dim = in_dim if in_dim is not None else used[-1] + 1
        unused = sorted(set(range(self.in_dim)) - set(used))
        if used[-1] >= self.in_dim or unused:
            raise InputError(
                f"CompositeEncoding: with in_dim {self.in_dim} every dimension 0..{self.in_dim - 1} must feed a part "
                f"and none beyond; used {used}"
            )
        self.encoders = nn.ModuleList(part.encoder for part in parts)
        self.dims = [list(part.dims) for part in parts]
        for i, dims in enumerate(self.dims):
            self.register_buffer(f"dims_{i}", torch.tensor(dims, dtype=torch.long), persistent=False)
        self.out_dim = sum(e.out_dim for e in self.encoders)

    def forward(self, v: Tensor) -> Tensor:
        if v.shape[-1] != self.in_dim:
            raise ValueError(f"CompositeEncoding expects coordinates (..., {self.in_dim}), got {tuple(v.shape)}")
        # the loop is over the few parts, each a whole-batch tensor operation
        feats = [
            enc(v.index_select(-1, getattr(self, f"dims_{i}"))) for i, enc in enumerate(self.encoders)
        ]  # (..., |D_p|) -> (..., out_p)
        return torch.cat(feats, dim=-1)  # (..., Σ out_p)

    def extra_repr(self) -> str:
        return f"in_dim={self.in_dim}, out_dim={self.out_dim}, dims={self.dims}"
