"""Activation functions by name, so configs can say ``activation: relu``."""
from __future__ import annotations

from torch import nn

_ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "gelu": nn.GELU,
    "softplus": nn.Softplus,
    "silu": nn.SiLU,
    "leaky_relu": nn.LeakyReLU,
    "none": nn.Identity,
    "identity": nn.Identity,
}


def make_activation(name: str) -> nn.Module:
    """Return a fresh activation module for ``name`` (one of ``activation_names()``)."""
    try:
        return _ACTIVATIONS[name.lower()]()
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; choose one of {', '.join(activation_names())}") from None


def activation_names() -> list[str]:
    return sorted(_ACTIVATIONS)
