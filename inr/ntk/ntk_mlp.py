"""The MLP in the NTK parametrization of Jacot et al. 2018, whose wide limit ``analytic_ntk`` describes."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from inr.networks.activations import make_activation
from inr.networks.layers import layer_stack


class NTKLinear(nn.Module):
    """z = σ_w/√n_in · W x + β b with W, b ~ N(0, 1): the scale sits in the forward pass, not in the init.

    ``weight_scale`` = σ_w/√n_in and ``bias_scale`` = β are plain attributes, so the structured NTK reads
    them: the layer contributes (weight_scale² · a·a′ + bias_scale²) · g·g′ to Θ.
    """

    def __init__(self, in_features: int, out_features: int, weight_std: float = 1.0, bias_std: float = 0.0) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.randn(out_features))
        self.weight_scale = weight_std / math.sqrt(in_features)
        self.bias_scale = float(bias_std)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight * self.weight_scale, self.bias * self.bias_scale)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, weight_scale={self.weight_scale:.4g}, bias_scale={self.bias_scale:.4g}"


class NTKMLP(nn.Sequential):
    """f(x) = L_{D+1} ∘ σ ∘ L_D ∘ … ∘ σ ∘ L_1(x) with every L an ``NTKLinear``; ``depth`` = D hidden layers.

    Same layout and factory signature ``(in_dim, out_dim, ...)`` as ``inr.networks.MLP``, so a task can
    use it as its ``network``; with ``activation="relu"`` its NTK tends to
    ``analytic_ntk(x, x′, depth, weight_std, bias_std)`` as ``width`` → ∞ (Jacot et al. 2018, Thm. 1).

    Example:
        >>> net = NTKMLP(2, 1, width=16, depth=2, weight_std=1.5, bias_std=0.1)
        >>> net(torch.zeros(4, 2)).shape, len(net)
        (torch.Size([4, 1]), 5)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 1024,
        depth: int = 3,
        weight_std: float = 1.0,
        bias_std: float = 0.0,
        activation: str = "relu",
    ) -> None:
        if in_dim < 1 or out_dim < 1 or width < 1 or depth < 0:
            raise ValueError(f"NTKMLP sizes must be positive (depth ≥ 0): in={in_dim} out={out_dim} width={width} depth={depth}")
        layers = layer_stack(
            in_dim,
            width,
            depth,
            lambda i, fan_in: [NTKLinear(fan_in, width, weight_std, bias_std), make_activation(activation)],
            lambda fan_in: NTKLinear(fan_in, out_dim, weight_std, bias_std),
        )
        super().__init__(*layers)
        self.in_dim, self.out_dim, self.width, self.depth = in_dim, out_dim, width, depth
