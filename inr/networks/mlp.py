"""The multilayer perceptron every coordinate network starts from."""
from __future__ import annotations

from torch import nn

from inr.networks.activations import make_activation


class MLP(nn.Sequential):
    """f(x) = L_{D+1} ∘ σ ∘ L_D ∘ … ∘ σ ∘ L_1(x), then ``output_activation``; ``depth`` = D hidden layers.

    Layer sizes: in_dim → width (× D hidden layers) → out_dim. ``depth=0`` is a single linear map.
    It is an ``nn.Sequential`` of ``nn.Linear`` and activation modules, so tools that walk the layers
    (the structured NTK, for one) see them in order.

    Example:
        >>> import torch
        >>> net = MLP(4, 3, width=8, depth=2, output_activation="sigmoid")
        >>> net(torch.zeros(5, 4)).shape, sum(isinstance(m, nn.Linear) for m in net)
        (torch.Size([5, 3]), 3)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 256,
        depth: int = 3,
        activation: str = "relu",
        output_activation: str = "none",
    ) -> None:
        if in_dim < 1 or out_dim < 1 or width < 1 or depth < 0:
            raise ValueError(f"MLP sizes must be positive (depth ≥ 0): in={in_dim} out={out_dim} width={width} depth={depth}")
        layers: list[nn.Module] = []
        fan_in = in_dim
        for _ in range(depth):
            layers += [nn.Linear(fan_in, width), make_activation(activation)]
            fan_in = width
        layers.append(nn.Linear(fan_in, out_dim))
        if output_activation.lower() not in ("none", "identity"):
            layers.append(make_activation(output_activation))
        super().__init__(*layers)
        self.in_dim, self.out_dim, self.width, self.depth = in_dim, out_dim, width, depth
