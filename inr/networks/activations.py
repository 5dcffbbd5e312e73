"""Activation functions: the one list of those known to act elementwise, and names for configs
(``activation: relu``)."""

from __future__ import annotations

from torch import nn

# Parameter-free activations that act on each entry alone (each output depends only on the matching
# input): the structured NTK relies on this; a custom activation joins by setting ``elementwise = True``.
ELEMENTWISE_ACTIVATIONS: tuple[type[nn.Module], ...] = (
    nn.ReLU,
    nn.LeakyReLU,
    nn.Tanh,
    nn.Sigmoid,
    nn.GELU,
    nn.Softplus,
    nn.SiLU,
    nn.ELU,
    nn.CELU,
    nn.SELU,
    nn.Mish,
    nn.Hardtanh,
    nn.Softsign,
    nn.Tanhshrink,
    nn.Identity,
)

# names a config may use, each one of the elementwise activations above
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
