"""BACON (Lindell et al. 2022): a multiplicative filter network whose spectrum is band-limited by construction."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.layers import check_positive, check_sizes, init_uniform_
from inr.networks.mfn import MultiplicativeFilterNetwork


class BandLimitedSineFilter(nn.Module):
    """g(x) = sin(2π K x + φ): K (width, d) integer frequencies in cycles per unit, frozen; φ trained.

    Each entry of K is drawn uniformly from {−m, …, m}; φ ~ U(−π, π). Integer K makes g periodic with
    period 1 along every axis, so on the task's [0, 1)^d grid its DFT has no leakage: g holds exactly the
    frequencies ±K_j.
    """

    def __init__(self, in_dim: int, width: int, max_frequency: int) -> None:
        super().__init__()
        self.max_frequency = int(max_frequency)
        # a buffer, not a parameter: the frequencies never train (bacon modules.py FourierLayer:
        # weight.requires_grad = False), and they travel with the state_dict
        self.register_buffer("frequencies", torch.randint(-self.max_frequency, self.max_frequency + 1, (width, in_dim)).float())
        self.phase = nn.Parameter(torch.empty(width).uniform_(-math.pi, math.pi))

    def forward(self, x: Tensor) -> Tensor:
        return torch.sin(2 * math.pi * x @ self.frequencies.T + self.phase)  # (N, d) -> (N, width)

    def extra_repr(self) -> str:
        return f"in={self.frequencies.shape[1]}, width={self.frequencies.shape[0]}, max_frequency={self.max_frequency}"


class BACON(MultiplicativeFilterNetwork):
    """f(x) = W_out z_D + b_out, z_0 = g_0(x), z_i = g_i(x) ⊙ (W_i z_{i−1} + b_i), g_i(x) = sin(2π K_i x + φ_i).

    Lindell et al. 2022 ("BACON: Band-limited Coordinate Networks for Multiscale Scene Representation",
    CVPR; code ``computational-imaging/bacon``, ``modules.py``). A multiplicative filter network whose filter
    frequencies K_i are integers (cycles per unit) with |K_i| ≤ m_i per axis and never trained. Every term of
    f is then a sinusoid at a sum ±K_0 ± K_1 … ± K_D, so the spectrum of f is confined, whatever the trained
    weights, to the box max_d |k_d| ≤ M = Σ_i m_i (``max_frequency``), and it is periodic with period 1 on the
    task's [0, 1)^d coordinates (used as they are: the released code's [−0.5, 0.5) differs by a shift,
    which only moves phases). ``depth`` = D linear layers, D + 1 filters.

    The band limit: m_i = round(B · f_i) with B = ``bandwidth`` (cycles per unit) and the fractions f_i
    (``filter_fractions``, default 1/(D + 1) each), so M = B when every B·f_i is an integer (otherwise M is
    the sum of the rounded m_i; read ``max_frequency``). The paper sets B to the Nyquist frequency of the
    training samples (``experiments/train_img.py``: "the maximum network bandwidth in cycles per unit
    interval is half [the resolution]"), so the network cannot alias: the default 64 is that of the default
    image config's training pixels (128 per axis). Its image experiments use the fractions
    (1/8, 1/8, 1/4, 1/4, 1/4) with D = 4 (``train_img.py`` ``input_scales``).

    Initialisation (``modules.py``): K_i uniform on {−m_i, …, m_i}^d (``FourierLayer``: the released
    quantisation interval 2π on [−0.5, 0.5) is one cycle per unit), φ ~ U(−π, π); hidden and output linear
    layers W ~ U(−√(6/n), √(6/n)) (``mfn_weights_init``), biases PyTorch's default. Defaults: 256 wide,
    D = 4, Adam lr 5e-3 (``experiments/config/img/bacon.ini``).

    When to use: when the representation must not alias — rendering at other resolutions, anti-aliased
    multiscale outputs, a guaranteed spectrum. Known failure modes: it cannot represent anything above M
    (edges and text finer than the bandwidth stay blurred, by design); detail off the training grid is
    limited to that bandwidth; in more than one dimension the limit is a box, so the diagonal reaches √d·M.
    An ``output_activation`` other than none (a sigmoid, say) breaks the band limit. The released code also
    trains the intermediate outputs (multiscale BACON); this class is the single-output ``BACON``.

    Example:
        >>> net = BACON(2, 3, width=16, depth=2, bandwidth=6)
        >>> net(torch.zeros(5, 2)).shape, [f.max_frequency for f in net.filters], net.max_frequency
        (torch.Size([5, 3]), [2, 2, 2], 6)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 256,  # bacon.ini hidden_features = 256
        depth: int = 4,  # bacon.ini hidden_layers = 4
        bandwidth: float = 64.0,  # B, cycles per unit: Nyquist of the default config's 128 training pixels
        filter_fractions: Optional[Sequence[float]] = None,  # f_i; None: equal (modules.py BACON)
        output_activation: str = "none",
    ) -> None:
        check_sizes("BACON", in_dim, out_dim, width, depth)
        check_positive("BACON", bandwidth=bandwidth)
        fractions = [1.0 / (depth + 1)] * (depth + 1) if filter_fractions is None else [float(f) for f in filter_fractions]
        if len(fractions) != depth + 1 or not all(f > 0 for f in fractions):
            raise InputError(f"BACON needs depth + 1 = {depth + 1} positive filter_fractions, got {list(fractions)}")
        # m_i = round(B f_i): bacon modules.py round((π·res·scale)/2π)·2π with res = 2B, in cycles per unit
        bounds = [round(bandwidth * f) for f in fractions]
        filters = [BandLimitedSineFilter(in_dim, width, m) for m in bounds]
        bound = math.sqrt(6.0 / width)  # modules.py mfn_weights_init: U(−√(6/n), √(6/n))
        linears = [init_uniform_(nn.Linear(width, width), bound) for _ in range(depth)]
        head = init_uniform_(nn.Linear(width, out_dim), bound)
        super().__init__(filters, linears, head, None, output_activation)
        self.in_dim, self.out_dim, self.width, self.depth = in_dim, out_dim, width, depth
        self.bandwidth, self.max_frequency = float(bandwidth), sum(bounds)
