"""SIREN: an MLP with sine activations and the initialisation of Sitzmann et al. 2020."""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.layers import init_uniform_, layer_stack, scalar


class Sine(nn.Module):
    """σ(z) = sin(ω₀ z): the activation of a SIREN layer, sin(ω₀ (Wx + b)) after its ``nn.Linear``.

    ``trainable=True`` makes ω₀ a learned scalar parameter (initialised at ``omega_0``); otherwise it is a
    plain float and the module has no state.
    """

    def __init__(self, omega_0: float = 30.0, trainable: bool = False) -> None:
        super().__init__()
        self.omega_0 = scalar(omega_0, trainable)

    def forward(self, z: Tensor) -> Tensor:
        return torch.sin(self.omega_0 * z)

    def extra_repr(self) -> str:
        return f"omega_0={float(self.omega_0):g}, trainable={isinstance(self.omega_0, nn.Parameter)}"


class SIREN(nn.Sequential):
    """f(x) = W_{D+1} φ_D ∘ … ∘ φ_1(x) + b_{D+1}, φ_i(x) = sin(ω_i (W_i x + b_i)); ``depth`` = D sine layers.

    Layer sizes are those of ``MLP`` with the same ``width`` and ``depth`` (in_dim → width × D → out_dim);
    Sitzmann et al.'s reference code counts ``hidden_layers = D − 1``. The module is an ``nn.Sequential``
    of ``nn.Linear`` followed by ``Sine(ω₀)``, so layer-walking tools see a plain MLP with a sine activation.

    Initialisation (Sitzmann et al. 2020, sec. 3.2 and supplement 1): first layer W ~ U(−1/n, 1/n), later
    layers and the output W ~ U(−√(6/n)/ω₀, √(6/n)/ω₀), n the fan-in. Then ω₀ W x has unit variance for
    arcsine-distributed inputs, so pre-activations keep the same distribution through depth. The paper does
    not specify biases: ``bias_init="torch"`` (default) keeps PyTorch's U(−1/√n, 1/√n), as the reference code
    (``vsitzmann/siren``) does — ω₀b then spans ±1.9 rad in hidden layers of 256 — which adds ω₀²/(3n) ≈ 1.2 to
    the hidden pre-activation variance at n = 256; ``bias_init="weight"`` draws each bias from its layer's
    weight law (ω₀b within ±0.15 rad), keeping the paper's unit variance.

    ``rescale_input=True`` (default) prepends x ↦ 2x − 1, because the task's coordinates lie in [0, 1) and
    the paper's ω₀ = 30 assumes inputs in [−1, 1]; turn it off behind an encoder whose features are centred.

    ``trainable_omega=True`` makes each layer's ω₀ a learned scalar, initialised at ``first_omega_0`` /
    ``hidden_omega_0`` (the weights are still initialised with those values), as WIRE's released code does for
    its ω₀ and σ₀ (vishwa91/wire, modules/wire.py, ``trainable``). The default keeps ω₀ fixed and adds no
    parameter, so existing checkpoints load unchanged. With Adam a scalar moves by about the learning rate per
    step, so ω₀ changes by at most ≈ lr × steps (0.15 at lr 5e-4 over 300 steps): a small correction to the
    bandwidth, not a search for it.

    Example:
        >>> net = SIREN(2, 3, width=16, depth=2)
        >>> net(torch.zeros(5, 2)).shape, sum(isinstance(m, Sine) for m in net)
        (torch.Size([5, 3]), 2)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 256,
        depth: int = 3,
        first_omega_0: float = 30.0,  # ω₀ = 30 for the first layer: Sitzmann et al. 2020, sec. 3.2
        hidden_omega_0: float = 30.0,  # ω₀ = 30 in later layers too: reference code, supplement 1.5
        output_activation: str = "none",
        rescale_input: bool = True,
        bias_init: Literal["weight", "torch"] = "torch",  # the reference code's PyTorch-default biases
        trainable_omega: bool = False,
    ) -> None:
        if in_dim < 1 or out_dim < 1 or width < 1 or depth < 1:
            raise InputError(f"SIREN sizes must be positive (depth ≥ 1): in={in_dim} out={out_dim} width={width} depth={depth}")
        if first_omega_0 <= 0 or hidden_omega_0 <= 0:
            raise InputError(f"SIREN needs ω₀ > 0, got first_omega_0={first_omega_0}, hidden_omega_0={hidden_omega_0}")
        if bias_init not in ("weight", "torch"):
            raise InputError(f"SIREN bias_init must be 'weight' or 'torch', got {bias_init!r}")

        def layer(i: int, fan_in: int) -> list[nn.Module]:
            omega = first_omega_0 if i == 0 else hidden_omega_0
            # first layer U(−1/n, 1/n), so that sin(ω₀(Wx + b)) spans several periods over [−1, 1] (sec. 3.2,
            # final paragraph; the bound is the reference code's first_layer_sine_init). Later layers
            # U(−√(6/n)/ω₀, √(6/n)/ω₀): c = √6 gives unit-variance ω₀Wx (sec. 3.2, proof in supplement 1), and
            # dividing by the ω₀ of the sine they feed keeps that while boosting the gradients (supplement 1.5)
            bound = 1.0 / fan_in if i == 0 else math.sqrt(6.0 / fan_in) / omega
            return [_init_linear(nn.Linear(fan_in, width), bound, bias_init), Sine(omega, trainable=trainable_omega)]

        def head(fan_in: int) -> nn.Linear:
            # the linear output layer follows a sine of ω₀ = hidden_omega_0: same bound (reference code)
            return _init_linear(nn.Linear(fan_in, out_dim), math.sqrt(6.0 / fan_in) / hidden_omega_0, bias_init)

        super().__init__(*layer_stack(in_dim, width, depth, layer, head, rescale_input, output_activation))
        self.in_dim, self.out_dim, self.width, self.depth = in_dim, out_dim, width, depth
        self.first_omega_0, self.hidden_omega_0 = first_omega_0, hidden_omega_0


def _init_linear(linear: nn.Linear, bound: float, bias_init: str) -> nn.Linear:
    """W ~ U(−bound, bound); b from the same law, or left at PyTorch's default for ``bias_init="torch"``."""
    return init_uniform_(linear, bound, bound if bias_init == "weight" else None)
