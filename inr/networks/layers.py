"""Pieces the coordinate networks share: input rescaling, uniform initialisation, size checks, output heads."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.activations import make_activation


class UnitToSymmetric(nn.Module):
    """x ↦ 2x − 1: coordinates in [0, 1) to [−1, 1), the domain the sine/Gabor/Gauss papers tune ω₀ and σ for."""

    def forward(self, x: Tensor) -> Tensor:
        return 2 * x - 1


@torch.no_grad()
def init_uniform_(linear: nn.Linear, weight_bound: float, bias_bound: Optional[float] = None) -> nn.Linear:
    """W ~ U(−weight_bound, weight_bound); b ~ U(−bias_bound, bias_bound), or PyTorch's default when None.

    Example:
        >>> lin = init_uniform_(nn.Linear(4, 8), 0.5, 0.0)
        >>> bool(lin.weight.abs().max() <= 0.5), lin.bias.abs().max().item()
        (True, 0.0)
    """
    linear.weight.uniform_(-weight_bound, weight_bound)
    if bias_bound is not None and linear.bias is not None:
        linear.bias.uniform_(-bias_bound, bias_bound)
    return linear


def check_sizes(name: str, in_dim: int, out_dim: int, width: int, depth: int, min_depth: int = 1) -> None:
    """Refuse non-positive sizes with one line naming the network and every size."""
    if in_dim < 1 or out_dim < 1 or width < 1 or depth < min_depth:
        raise InputError(
            f"{name} sizes must be positive (depth ≥ {min_depth}): in={in_dim} out={out_dim} width={width} depth={depth}"
        )


def check_positive(name: str, **values: float) -> None:
    """Refuse a non-positive (or non-finite) hyper-parameter, naming it."""
    for key, value in values.items():
        if not float(value) > 0 or value == float("inf"):
            raise InputError(f"{name} needs {key} > 0 and finite, got {value}")


def output_layers(output_activation: str) -> list[nn.Module]:
    """[] for a linear output ('none'/'identity'), else [the named activation]."""
    return [] if output_activation.lower() in ("none", "identity") else [make_activation(output_activation)]


def scalar(value: float, trainable: bool) -> float | nn.Parameter:
    """A hyper-parameter as a plain float, or as a trainable 0-d parameter initialised at ``value``."""
    return nn.Parameter(torch.tensor(float(value))) if trainable else float(value)
