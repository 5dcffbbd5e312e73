"""Pieces the coordinate networks share: input rescaling, uniform initialisation, size checks, output heads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.activations import make_activation


def flush_negligible(window: Tensor, inplace: bool = False) -> Tensor:
    """w where w > τ, else 0, for a non-negative Gaussian window w = e^{−q}; τ = tiny/ε of the dtype (the
    smallest normal number over the machine epsilon: 9.9e-32 in float32, 1.0e-292 in float64).

    Why: a window e^{−(s z)²} falls below the smallest normal float (1.2e-38 in float32, at (s z)² > 87) for
    the many pre-activations in its tails, and subnormal numbers make every CPU operation that reads them
    several times slower (8.8× for a 4 × 256 Gaussian-activation MLP on 64² points, one thread).
    ``torch.set_flush_denormal`` sets the calling thread's floating-point mode: worker threads started after
    it inherit it, those already running do not, so it works only if called before torch's first parallel
    operation and it changes every computation of the process; the flush here is local and exact. Flushing only the subnormals themselves (τ = tiny) is not enough: products of
    small normal values with gradients make new ones in the backward pass (65 against 42 ms per step in
    ``benchmarks/subnormals.py``'s setting); with τ = tiny/ε a kept value times any factor ≥ ε stays normal.
    τ is low enough to change nothing a float32 training run can see: a gradient built from values under τ
    is at most ~1e-27 at these sizes, and Adam turns it into a step of lr·g/eps_Adam ≈ 1e-22, far under the
    resolution of any weight. (A cutoff of ε², 1.4e-14, was tried first and did change a 256² run: Adam's
    division by √v + 1e-8 turns gradients of 1e-12 from neurons deep in their tails into visible steps.)

    Example:
        >>> flush_negligible(torch.tensor([1.0, 1e-20, 1e-32, 1e-40]))
        tensor([1.0000e+00, 1.0000e-20, 0.0000e+00, 0.0000e+00])
    """
    info = torch.finfo(window.dtype)
    return torch.nn.functional.threshold(window, info.tiny / info.eps, 0.0, inplace=inplace)


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


def layer_stack(
    in_dim: int,
    width: int,
    depth: int,
    layer: Callable[[int, int], list[nn.Module]],
    head: Callable[[int], nn.Module],
    rescale_input: bool = False,
    output_activation: str = "none",
) -> list[nn.Module]:
    """The modules of a coordinate MLP, made in this order: x ↦ 2x − 1 when ``rescale_input``, ``layer(i, fan_in)``
    for i = 0 … depth − 1 (the i-th hidden layer and its activation, fan_in = ``in_dim`` for the first, ``width``
    after it), ``head(fan_in)`` (the output layer), then the ``output_activation``. Every layer is built, and
    initialised by ``layer``/``head``, before the next one, so the initial draws come in the same order for every
    network: first layer, later layers, output.

    Example:
        >>> layer_stack(2, 8, 2, lambda i, n: [nn.Linear(n, 8), nn.ReLU()], lambda n: nn.Linear(n, 1), True)
        [UnitToSymmetric(), Linear(in_features=2, out_features=8, bias=True), ReLU(), Linear(in_features=8, out_features=8, bias=True), ReLU(), Linear(in_features=8, out_features=1, bias=True)]
    """
    layers: list[nn.Module] = [UnitToSymmetric()] if rescale_input else []
    fan_in = in_dim
    for i in range(depth):
        layers += layer(i, fan_in)
        fan_in = width
    layers.append(head(fan_in))
    return [*layers, *output_layers(output_activation)]


def scalar(value: float, trainable: bool) -> float | nn.Parameter:
    """A hyper-parameter as a plain float, or as a trainable 0-d parameter initialised at ``value``."""
    return nn.Parameter(torch.tensor(float(value))) if trainable else float(value)
