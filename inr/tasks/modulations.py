"""Shift modulations (functa, Dupont et al. 2022; COIN++, Dupont et al. 2022): a signal as a short vector of
per-layer shifts s of one shared network θ, the only weights its inner loop adapts.

Each hidden layer l of θ's network computes h_{l+1} = act(W_l h_l + b_l + s_l), s_l ∈ R^{width_l} per signal, and
the output layer none; θ = (W, b) is shared by the class of signals, s = (s_1 … s_D) is the signal's own (D·width
numbers: 768 for 3 × 256). A shift enters where its layer's bias does, so member k's modulated network is the
stacked network of ``inr.networks.stacked`` at biases b_l + s_{k,l}, whose forward already adds a bias of its own to
each member (b (K, 1, out) + (K, N, out)): ``modulated`` builds those parameters, φ_k = θ with b_l ↦ b_l + s_{k,l},
and the members' field, measurement and loss are the task's as for any φ. With s = 0 it is θ's field exactly.

Inner loop (``shift_losses``): s^(0) = 0, then n steps s_l^(t+1) = s_l^(t) − α_l ∇_{s_l} Σ_k L_k(θ, s^(t)), θ held;
α_l is one rate (MAML's) or exp(a_l), a learned log-rate per layer (Meta-SGD on the shifts). Each inner gradient is
taken with ``torch.func.grad`` and keeps the graph of θ and of the a_l, so the outer loss mean_k L_k(θ, s_k^(n))
differentiates through every inner step (second order, as MAML's loop over every weight does).

A fit from such an init (``inr.tasks.init_steps``) takes the same n steps on the hidden layers' biases alone: with
s^(0) = 0 and ∇_{s_l} L(b_l + s_l) = ∇_{b_l} L at b_l + s_l, SGD on s from 0 with θ held is SGD on b_l from b_l with
every other tensor held, b_l^(n) = b_l + s_l^(n).

Example (shifts of the one hidden layer of a 2 → 4 → 1 network, K = 3 members, all zero: θ's biases):
    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    >>> theta = dict(net.named_parameters())
    >>> names = shift_names(net)
    >>> names, tuple(modulated(theta, zero_shifts(theta, names, 3))["0.bias"].shape)
    (['0.bias'], (3, 4))
"""

from __future__ import annotations

from collections.abc import Mapping

from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.stacked import StackedLinear
from inr.tasks.adaptation import Losses, Rates, differentiable_sgd, expand

ADAPTS = ("all", "modulations")


def shift_names(network: nn.Module) -> list[str]:
    """The tensors the shifts are added to: the bias of every linear layer but the last (the hidden layers), by
    ``network.named_parameters()``'s names. Refused in one line: a network that is not a sequence of layers, one
    without a hidden layer, a hidden layer without a bias."""
    where = "model.adapt modulations"
    if not isinstance(network, nn.Sequential):
        raise InputError(f"{where}: {type(network).__name__} is not a sequence of linear layers and activations")
    linears = [(name, m) for name, m in network.named_children() if isinstance(m, (nn.Linear, StackedLinear))]
    hidden = linears[:-1]
    if not hidden:
        raise InputError(f"{where}: {type(network).__name__} has no hidden layer to shift (depth ≥ 1)")
    for name, layer in hidden:
        if layer.bias is None:
            raise InputError(f"{where}: layer {name} of {type(network).__name__} has no bias to shift")
    return [f"{name}.bias" for name, _ in hidden]


def zero_shifts(theta: Mapping[str, Tensor], names: list[str], count: int) -> dict[str, Tensor]:
    """s^(0) = 0 for K members: {bias name: zeros (K, width)} of θ's dtype and device."""
    return {name: theta[name].new_zeros(count, *theta[name].shape) for name in names}


def modulated(theta: Mapping[str, Tensor], shifts: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """φ_k = θ with each shifted bias b_l ↦ b_l + s_{k,l}: every tensor (…) -> (K, …), K the shifts' leading axis;
    differentiable with respect to θ and s."""
    count = len(next(iter(shifts.values())))
    phi = expand(theta, count)
    for name, s in shifts.items():
        phi[name] = theta[name].unsqueeze(0) + s  # (width,) + (K, width) -> (K, width)
    return phi


def shift_losses(
    losses: Losses, theta: Mapping[str, Tensor], names: list[str], count: int, steps: int, lr: Rates
) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
    """The inner loop on the shifts alone (module docstring): -> (the K losses at θ, s = 0; the K losses after n
    steps, differentiable with respect to θ and to ``lr``'s tensors; s^(n), {bias name: (K, width)}). ``losses``
    maps the members' parameters φ (each (K, …)) to their losses (K,); ``lr`` is one rate or one per shifted bias."""
    return differentiable_sgd(lambda s: losses(modulated(theta, s)), zero_shifts(theta, names, count), steps, lr)
