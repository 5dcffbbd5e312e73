"""The multilayer perceptron every coordinate network starts from, with PyTorch's or the paper's initialisation."""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn

from inr.networks.activations import make_activation
from inr.networks.layers import layer_stack

INITS = ("torch", "paper")
# Standard deviation of a standard normal truncated to (−2, 2): the divisor JAX's variance_scaling uses so that
# the truncated draw keeps the requested variance (jax/nn/initializers.py, 2020: ".87962566103423978").
TRUNCATED_NORMAL_STD = 0.87962566103423978
# stax.Dense's bias initialiser: jax.nn.initializers.normal(), whose default stddev is 1e-2.
PAPER_BIAS_STD = 1e-2


def paper_init_(linear: nn.Linear) -> nn.Linear:
    """W ~ N(0, 2/(fan_in + fan_out)) truncated to ±2 of the underlying normal's σ (Glorot normal), b ~ N(0, 0.01²).

    This is stax's ``Dense(out_dim, W_init=glorot_normal(), b_init=normal())`` as the paper's released code
    used it (Tancik et al. 2020, ``Experiments/2d_image_regression.ipynb``, ``make_network``), with the JAX
    initialisers of 2020 (``jax/experimental/stax.py`` and ``jax/nn/initializers.py``):

    - ``glorot_normal = variance_scaling(1.0, "fan_avg", "truncated_normal")``: variance v = 2/(fan_in +
      fan_out), drawn as ``truncated_normal(-2, 2) · √v / 0.87962566103423978``. The draw is truncated at
      ±2 of the underlying normal, whose σ = √v / 0.8796 is chosen so that the weights' standard deviation is
      exactly √v; no weight exceeds 2√v / 0.8796 ≈ 2.27√v in magnitude.
    - ``normal()``: biases N(0, σ²) with σ = 1e-2 (not zero).

    Fans are those of the weight matrix: ``in_features`` and ``out_features``. The draws use the global torch
    generator, like PyTorch's default initialisation, so ``seed_everything`` fixes them.
    """
    fan_in, fan_out = linear.in_features, linear.out_features
    underlying_std = math.sqrt(2.0 / (fan_in + fan_out)) / TRUNCATED_NORMAL_STD
    with torch.no_grad():
        nn.init.trunc_normal_(linear.weight, mean=0.0, std=underlying_std, a=-2 * underlying_std, b=2 * underlying_std)
        if linear.bias is not None:
            nn.init.normal_(linear.bias, mean=0.0, std=PAPER_BIAS_STD)
    return linear


class MLP(nn.Sequential):
    """f(x) = L_{D+1} ∘ σ ∘ L_D ∘ … ∘ σ ∘ L_1(x), then ``output_activation``; ``depth`` = D hidden layers.

    Layer sizes: in_dim → width (× D hidden layers) → out_dim. ``depth=0`` is a single linear map.
    It is an ``nn.Sequential`` of ``nn.Linear`` and activation modules, so tools that walk the layers
    (the structured NTK, for one) see them in order.

    ``init``: ``torch`` keeps ``nn.Linear``'s default (Kaiming-uniform weights with a = √5, i.e.
    U(−1/√fan_in, 1/√fan_in), and biases U(−1/√fan_in, 1/√fan_in)); ``paper`` is the initialisation of the
    paper's stax network, Glorot-normal weights truncated at two standard deviations and N(0, 0.01²) biases
    (``paper_init_`` gives the sources).

    Example:
        >>> import torch
        >>> net = MLP(4, 3, width=8, depth=2, output_activation="sigmoid", init="paper")
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
        init: Literal["torch", "paper"] = "torch",
    ) -> None:
        if in_dim < 1 or out_dim < 1 or width < 1 or depth < 0:
            raise ValueError(f"MLP sizes must be positive (depth ≥ 0): in={in_dim} out={out_dim} width={width} depth={depth}")
        if init not in INITS:
            raise ValueError(f"MLP init must be one of {', '.join(INITS)}, got {init!r}")
        layers = layer_stack(
            in_dim,
            width,
            depth,
            lambda i, fan_in: [nn.Linear(fan_in, width), make_activation(activation)],
            lambda fan_in: nn.Linear(fan_in, out_dim),
            output_activation=output_activation,
        )
        super().__init__(*layers)
        if init == "paper":
            for layer in layers:
                if isinstance(layer, nn.Linear):
                    paper_init_(layer)
        self.in_dim, self.out_dim, self.width, self.depth, self.init = in_dim, out_dim, width, depth, init
