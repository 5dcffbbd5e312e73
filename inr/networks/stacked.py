"""K independent networks of one shape as one module: every linear layer's weights stacked to (K, out, in).

A stacked network maps features (K, N, in) -> (K, N, out): member k's rows go through member k's layers only,
with one batched matrix product per layer (``torch.baddbmm``) instead of K small ones. Its ``state_dict`` has the
keys of a single member's, each tensor with a leading axis of K (``member_state``/``stack_states``), so member k
is an ordinary network with the k-th slice of every tensor.

Stackable: an ``nn.Sequential`` of ``nn.Linear`` layers and parameter-free modules that act on each entry alone
(``STACKABLE_ACTIVATIONS``): ``MLP`` (every activation and output activation, either initialisation),
``SIREN`` (fixed ω₀), ``GaussMLP`` and ``FINER``. Refused with one line: anything else (WIRE's complex layers,
MFN and BACON's filters, conv decoders, a SIREN with trainable ω₀: a parameter outside the linear layers).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.activations import ELEMENTWISE_ACTIVATIONS
from inr.networks.finer import FinerSine
from inr.networks.gauss import GaussActivation
from inr.networks.layers import UnitToSymmetric
from inr.networks.siren import Sine

# parameter-free modules acting on each entry alone: applied to (K, N, F) they act on every member's rows alike
STACKABLE_ACTIVATIONS: tuple[type[nn.Module], ...] = (*ELEMENTWISE_ACTIVATIONS, Sine, FinerSine, GaussActivation, UnitToSymmetric)


class StackedLinear(nn.Module):
    """y_k = x_k W_kᵀ + b_k for k = 1..K: K independent linear maps, W (K, out, in), b (K, out).

    The input is (K, N, in), or (N, in) shared by every member; the output is (K, N, out).

    Example:
        >>> layers = [nn.Linear(3, 2) for _ in range(4)]
        >>> stacked = StackedLinear.from_linears(layers)
        >>> x = torch.randn(4, 5, 3)
        >>> torch.allclose(stacked(x)[2], layers[2](x[2]), atol=1e-6), tuple(stacked.weight.shape)
        (True, (4, 2, 3))
    """

    def __init__(self, members: int, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.members, self.in_features, self.out_features = members, in_features, out_features
        self.weight = nn.Parameter(torch.empty(members, out_features, in_features))
        self.bias = nn.Parameter(torch.empty(members, out_features)) if bias else None

    @classmethod
    def from_linears(cls, linears: Sequence[nn.Linear]) -> StackedLinear:
        """The K layers' weights and biases stacked (copied): member k starts where ``linears[k]`` is."""
        first = linears[0]
        layer = cls(len(linears), first.in_features, first.out_features, first.bias is not None)
        layer.to(first.weight.dtype)
        with torch.no_grad():
            layer.weight.copy_(torch.stack([lin.weight for lin in linears]))
            if layer.bias is not None:
                layer.bias.copy_(torch.stack([lin.bias for lin in linears]))
        return layer

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim == 2:  # (N, in) shared by every member -> (K, N, in), a view
            x = x.expand(self.members, *x.shape)
        if self.bias is None:
            return torch.bmm(x, self.weight.transpose(1, 2))  # (K, N, in) @ (K, in, out) -> (K, N, out)
        return torch.baddbmm(self.bias[:, None, :], x, self.weight.transpose(1, 2))  # b (K, 1, out) + (K, N, out)

    def extra_repr(self) -> str:
        return f"members={self.members}, in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def stackable_problem(network: nn.Module) -> str | None:
    """Why ``network`` cannot be stacked (one phrase), or None when it can."""
    name = type(network).__name__
    if not isinstance(network, nn.Sequential):
        return f"{name} is not a sequence of linear layers and activations"
    for layer in network:
        if isinstance(layer, nn.Linear):
            continue
        if not isinstance(layer, STACKABLE_ACTIVATIONS):
            return f"{name} holds a {type(layer).__name__}, which is not a linear layer or an entrywise activation"
        if any(True for _ in layer.parameters()) or any(True for _ in layer.buffers()):
            return f"{name} holds a {type(layer).__name__} with its own parameters (e.g. a trainable ω₀)"
    return None


def stack_networks(networks: Sequence[nn.Module]) -> nn.Sequential:
    """One module holding the K networks: their ``nn.Linear`` layers become ``StackedLinear`` (weights copied),
    the activations are shared (they have no state). The networks must be stackable (``stackable_problem``) and
    of one shape; ``InputError`` names the first problem.

    Example:
        >>> from inr.networks import MLP
        >>> nets = [MLP(2, 3, width=8, depth=2) for _ in range(5)]
        >>> stacked = stack_networks(nets)
        >>> x = torch.rand(7, 2)
        >>> torch.allclose(stacked(x)[4], nets[4](x), atol=1e-6), tuple(stacked(x).shape)
        (True, (5, 7, 3))
    """
    if not networks:
        raise InputError("model.members: at least one member is needed")
    first = networks[0]
    problem = stackable_problem(first)
    if problem is not None:
        raise InputError(f"model.network cannot be stacked into members: {problem}")
    shape = [(type(m), repr(m)) for m in first]
    for k, net in enumerate(networks[1:], start=1):
        if type(net) is not type(first) or [(type(m), repr(m)) for m in net] != shape:
            raise InputError(f"model.members: member {k}'s network differs in shape or settings from member 0's")
    layers: list[nn.Module] = []
    for i, layer in enumerate(first):
        if isinstance(layer, nn.Linear):
            layers.append(StackedLinear.from_linears([net[i] for net in networks]))
        else:
            layers.append(copy.deepcopy(layer))
    stacked = nn.Sequential(*layers)
    stacked.members = len(networks)
    return stacked


def member_state(state: Mapping[str, Tensor], k: int) -> dict[str, Tensor]:
    """Member k's tensors of a stacked state dict: the k-th slice of each (copied, so it outlives the stack)."""
    return {key: value[k].clone() for key, value in state.items()}


def stack_states(states: Sequence[Mapping[str, Tensor]]) -> dict[str, Tensor]:
    """The state dict of a stack from its members' (same keys and shapes): each tensor stacked on a new first axis."""
    return {key: torch.stack([s[key] for s in states]) for key in states[0]}
