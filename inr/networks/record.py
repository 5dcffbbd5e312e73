"""What a field is made of, independently of its weights and of stacking: the record a checkpoint keeps beside
its tensors (``inr.io.checkpoint.INIT_KEY``), so that weights offered to another architecture are refused in one
line instead of loaded into it.

The record is the encoder's class and widths and each layer of the network (one entry for a network that is not
a sequence of layers); a stacked linear layer is recorded as the single layer of each member.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import nn

from inr.networks.stacked import StackedLinear


def layer_text(layer: nn.Module) -> str:
    """One layer as the architecture records it; a stacked linear layer as the single layer of each member.

    Example:
        >>> layer_text(nn.Linear(4, 3)), layer_text(nn.ReLU())
        ('Linear(4, 3, bias=True)', 'ReLU()')
    """
    if isinstance(layer, (nn.Linear, StackedLinear)):
        return f"Linear({layer.in_features}, {layer.out_features}, bias={layer.bias is not None})"
    return repr(layer)


def architecture(task: Any) -> dict[str, Any]:
    """The record of a task's field (anything with ``stack``, ``encoder`` and ``network``: a task, or a namespace
    of a bare encoder and network with ``stack=None``)."""
    encoder = task.stack.encoders[0] if task.stack is not None else task.encoder
    network = task.network
    layers = [layer_text(layer) for layer in network] if isinstance(network, nn.Sequential) else [repr(network)]
    return {"encoder": f"{type(encoder).__name__}({encoder.in_dim} -> {encoder.out_dim})", "network": layers}


def first_difference(recorded: Any, here: Mapping[str, Any]) -> str:
    """The first way a recorded architecture differs from the model's, as a phrase ('' when they agree).

    Example:
        >>> first_difference({"encoder": "E(2 -> 2)", "network": ["A", "B"]}, {"encoder": "E(2 -> 2)", "network": ["A", "C"]})
        'network layer 1 is B there and C here'
    """
    if not isinstance(recorded, Mapping):
        return "its recorded architecture is not readable"
    if recorded.get("encoder") != here["encoder"]:
        return f"its encoder is {recorded.get('encoder')}, the model's {here['encoder']}"
    theirs, ours = list(recorded.get("network") or []), here["network"]
    for i, (a, b) in enumerate(zip(theirs, ours)):
        if a != b:
            return f"network layer {i} is {a} there and {b} here"
    if len(theirs) != len(ours):
        return f"its network has {len(theirs)} layers, the model's {len(ours)}"
    return ""
