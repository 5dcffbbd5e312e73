"""FINER: SIREN's layers with the variable-periodic activation sin(ω₀(|z| + 1)z) of Liu et al. 2024."""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.layers import check_positive, check_sizes, init_uniform_, layer_stack


class FinerSine(nn.Module):
    """σ(z) = sin(ω₀ (|z| + 1) z): a sine whose local frequency ω₀(2|z| + 1) grows with |z|.

    ``scale_grad=False`` (default, as the authors' code: ``scale_req_grad=False``) treats the factor
    (|z| + 1) as a constant in backward, so the gradient is ω₀(|z| + 1) cos(·) rather than the true derivative
    ω₀(2|z| + 1) cos(·); ``scale_grad=True`` differentiates through it.

    Example:
        >>> FinerSine(omega_0=1.0)(torch.tensor([0.0, 1.0]))  # sin(0), sin(2)
        tensor([0.0000, 0.9093])
    """

    def __init__(self, omega_0: float = 30.0, scale_grad: bool = False) -> None:
        super().__init__()
        self.omega_0, self.scale_grad = float(omega_0), bool(scale_grad)

    def forward(self, z: Tensor) -> Tensor:
        scale = z.abs() + 1
        if not self.scale_grad:
            scale = scale.detach()
        return torch.sin(self.omega_0 * scale * z)

    def extra_repr(self) -> str:
        return f"omega_0={self.omega_0:g}, scale_grad={self.scale_grad}"


class FINER(nn.Sequential):
    """f(x) = W_{D+1} φ_D ∘ … ∘ φ_1(x) + b_{D+1}, φ_i(x) = sin(ω_i (|z_i| + 1) z_i), z_i = W_i x + b_i.

    Liu et al. 2024 ("FINER: Flexible spectral-bias tuning in Implicit NEural Representation by
    Variable-periodic Activation Functions", CVPR; code ``liuzhen0212/FINER``, ``models.py``). Layer sizes
    are those of ``SIREN``/``MLP`` (in_dim → width × D → out_dim); the authors' ``hidden_layers = D − 1``.

    Initialisation (the authors' ``FinerLayer``, identical to SIREN's for the weights): first layer
    W ~ U(−1/n, 1/n), later layers and the output W ~ U(−√(6/n)/ω₀, √(6/n)/ω₀), n the fan-in. Biases keep
    PyTorch's U(−1/√n, 1/√n), except the first layer's when ``first_bias_scale`` = k is given: b ~ U(−k, k).
    That bias is FINER's tuning knob (the paper's "flexible spectral-bias tuning"): since the local frequency
    of σ is ω₀(2|z| + 1), a wider first bias places neurons on higher-frequency parts of the activation, so
    k shifts the network's spectrum upwards. The released image script leaves k unset (PyTorch's default), which is our default.

    Defaults (``run_finer.sh`` of the authors' code): ω₀ = 30 for all layers, 4 layers of 256, Adam lr 5e-4
    (with a decay to 0.1× over 5000 steps there), coordinates in [−1, 1] (``rescale_input`` maps the task's
    [0, 1) there first).

    When to use: images and other signals with both smooth regions and fine detail, where SIREN's single
    period leaves high frequencies slow to fit. Known failure modes: as SIREN, it fits the training samples
    with high frequencies that need not interpolate between them (noise in, noise out); a large k or ω₀
    gives noisy, aliased renderings off the training grid.

    Example:
        >>> net = FINER(2, 3, width=16, depth=2)
        >>> net(torch.zeros(5, 2)).shape, sum(isinstance(m, FinerSine) for m in net)
        (torch.Size([5, 3]), 2)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 256,
        depth: int = 4,  # 4 FINER layers of 256: run_finer.sh (HIDDENLAYERS=3 after the first)
        first_omega_0: float = 30.0,  # run_finer.sh FIRSTOMEGA=30
        hidden_omega_0: float = 30.0,  # run_finer.sh HIDDENOMEGA=30
        first_bias_scale: Optional[float] = None,  # k of b ~ U(−k, k); None = PyTorch's bias (train_image.py)
        scale_grad: bool = False,  # models.py FinerLayer scale_req_grad=False
        output_activation: str = "none",
        rescale_input: bool = True,
    ) -> None:
        check_sizes("FINER", in_dim, out_dim, width, depth)
        check_positive("FINER", first_omega_0=first_omega_0, hidden_omega_0=hidden_omega_0)
        if first_bias_scale is not None and not first_bias_scale >= 0:
            raise InputError(f"FINER needs first_bias_scale ≥ 0 (or null), got {first_bias_scale}")

        def layer(i: int, fan_in: int) -> list[nn.Module]:
            omega = first_omega_0 if i == 0 else hidden_omega_0
            bound = 1.0 / fan_in if i == 0 else math.sqrt(6.0 / fan_in) / omega
            bias_bound = first_bias_scale if i == 0 else None
            return [init_uniform_(nn.Linear(fan_in, width), bound, bias_bound), FinerSine(omega, scale_grad)]

        def head(fan_in: int) -> nn.Linear:
            return init_uniform_(nn.Linear(fan_in, out_dim), math.sqrt(6.0 / fan_in) / hidden_omega_0)

        super().__init__(*layer_stack(in_dim, width, depth, layer, head, rescale_input, output_activation))
        self.in_dim, self.out_dim, self.width, self.depth = in_dim, out_dim, width, depth
