"""``ConvDecoder``: a cascade of 2D convolutions with optional upsampling stages, and zero-insertion upsampling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.activations import make_activation

PADDINGS = ("circular", "zeros", "reflect")
UPSAMPLE_MODES = ("nearest", "bilinear", "zero")


def zero_insertion(x: Tensor, factor: int) -> Tensor:
    """Upsample (..., H, W) -> (..., sH, sW) by placing x[i, j] at (s i, s j) and zeros elsewhere.

    Its DFT is the input's DFT tiled s×s: Y[u, v] = X[u mod H, v mod W] (no rescaling).

    Example:
        >>> zero_insertion(torch.tensor([[1.0, 2.0]]), 2)
        tensor([[1., 0., 2., 0.],
                [0., 0., 0., 0.]])
    """
    h, w = x.shape[-2:]
    out = x.new_zeros(*x.shape[:-2], h * factor, w * factor)
    out[..., ::factor, ::factor] = x
    return out


class ZeroInsertion(nn.Module):
    """Zero-insertion upsampling by an integer ``factor`` (see ``zero_insertion``)."""

    def __init__(self, factor: int = 2) -> None:
        super().__init__()
        self.factor = int(factor)

    def forward(self, x: Tensor) -> Tensor:
        return zero_insertion(x, self.factor)

    def extra_repr(self) -> str:
        return f"factor={self.factor}"


def make_upsample(mode: str, factor: int) -> nn.Module:
    """An upsampling stage: ``nearest`` (each pixel repeated s×s), ``bilinear`` (align_corners=False,
    border samples clamped) or ``zero`` (zero insertion)."""
    if mode == "zero":
        return ZeroInsertion(factor)
    if mode == "nearest":
        return nn.Upsample(scale_factor=factor, mode="nearest")
    if mode == "bilinear":
        return nn.Upsample(scale_factor=factor, mode="bilinear", align_corners=False)
    raise InputError(f"network.upsample_mode: unknown mode {mode!r}; choose one of {', '.join(UPSAMPLE_MODES)}")


class ConvDecoder(nn.Sequential):
    """y = C_D ∘ σ ∘ … ∘ σ ∘ U ∘ C_1(x): ``depth`` stride-1 convolutions (k×k, padding k//2, so each keeps
    the map size), ReLU σ between them (``relu=False``: none, the cascade is linear), and an upsampling
    stage U by ``scale_factor`` before each conv layer listed in ``upsample``; then ``output_activation``.

    Channels: in_dim → width (× depth−1 hidden maps) → out_dim. Input (B, in_dim, H, W), output
    (B, out_dim, H·s^n, W·s^n) for n upsampling stages.

    Initialisation: weights ~ N(weight_mean, weight_std²) i.i.d.; ``weight_std=None`` uses He's
    std √(2 / fan_in) with ReLU and LeCun's √(1 / fan_in) without (fan_in = C_in k²); biases are zero, so a
    freshly built linear circular decoder is exactly the transfer matrix of ``inr.conv_decoders.conv_transfer``.

    Args:
        in_dim, out_dim: input and output channels (the task passes the code's and the image's).
        width: channels of the hidden feature maps.
        depth: number of convolution layers (≥ 1).
        kernel_size: odd k of every layer.
        padding: ``circular`` | ``zeros`` | ``reflect`` (how each conv extends the map by k//2).
        upsample: indices (0-based) of the conv layers preceded by an upsampling stage.
        upsample_mode: ``nearest`` | ``bilinear`` | ``zero`` (zero insertion).
        scale_factor: integer factor of each upsampling stage.
        relu: ReLU between convolutions (never after the last one).
        bias: learnable biases (zero at initialisation).
        weight_mean, weight_std: the initial weight distribution.
        output_activation: applied after the last conv (``none``, ``sigmoid``, ...).

    Example:
        >>> net = ConvDecoder(4, 3, width=8, depth=3, upsample=[1, 2], upsample_mode="zero")
        >>> net(torch.zeros(2, 4, 5, 6)).shape, len(net.convs())
        (torch.Size([2, 3, 20, 24]), 3)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 64,
        depth: int = 4,
        kernel_size: int = 3,
        padding: str = "circular",
        upsample: Sequence[int] = (),
        upsample_mode: str = "nearest",
        scale_factor: int = 2,
        relu: bool = True,
        bias: bool = True,
        weight_mean: float = 0.0,
        weight_std: Optional[float] = None,
        output_activation: str = "none",
    ) -> None:
        if in_dim < 1 or out_dim < 1 or width < 1:
            raise InputError(f"network: channels must be positive, got in_dim={in_dim} out_dim={out_dim} width={width}")
        if depth < 1:
            raise InputError(f"network.depth must be ≥ 1 convolution layers, got {depth}")
        if kernel_size < 1 or kernel_size % 2 == 0:
            raise InputError(f"network.kernel_size must be odd and positive (padding k//2 keeps the size), got {kernel_size}")
        if padding not in PADDINGS:
            raise InputError(f"network.padding: unknown padding {padding!r}; choose one of {', '.join(PADDINGS)}")
        if upsample_mode not in UPSAMPLE_MODES:
            raise InputError(f"network.upsample_mode: unknown mode {upsample_mode!r}; choose one of {', '.join(UPSAMPLE_MODES)}")
        upsample = sorted(int(i) for i in upsample)
        if any(i < 0 or i >= depth for i in upsample) or len(set(upsample)) != len(upsample):
            raise InputError(f"network.upsample: conv-layer indices must be distinct and in [0, {depth}), got {upsample}")
        if scale_factor < 2:
            raise InputError(f"network.scale_factor must be an integer ≥ 2, got {scale_factor}")
        if weight_std is not None and weight_std < 0:
            raise InputError(f"network.weight_std must be ≥ 0, got {weight_std}")
        channels = [in_dim] + [width] * (depth - 1) + [out_dim]
        layers: list[nn.Module] = []
        for i in range(depth):
            if i in upsample:
                layers.append(make_upsample(upsample_mode, scale_factor))
            layers.append(
                nn.Conv2d(channels[i], channels[i + 1], kernel_size, padding=kernel_size // 2, padding_mode=padding, bias=bias)
            )
            if relu and i < depth - 1:
                layers.append(nn.ReLU())
        if output_activation.lower() not in ("none", "identity"):
            layers.append(make_activation(output_activation))
        super().__init__(*layers)
        self.in_dim, self.out_dim, self.width, self.depth = in_dim, out_dim, width, depth
        self.kernel_size, self.padding, self.relu = kernel_size, padding, relu
        self.upsample, self.upsample_mode, self.scale_factor = upsample, upsample_mode, scale_factor
        self.weight_mean = weight_mean
        self.weight_std = weight_std
        self.reset_parameters()

    @property
    def total_scale(self) -> int:
        """Factor from input to output size, s^(number of upsampling stages)."""
        return self.scale_factor ** len(self.upsample)

    def convs(self) -> list[nn.Conv2d]:
        """The convolution layers in order."""
        return [m for m in self if isinstance(m, nn.Conv2d)]

    def init_std(self, conv: nn.Conv2d) -> float:
        """The std of a layer's initial weights: ``weight_std`` or He / LeCun normal, √(gain / (C_in k²))."""
        if self.weight_std is not None:
            return self.weight_std
        fan_in = conv.in_channels * conv.kernel_size[0] * conv.kernel_size[1]
        return math.sqrt((2.0 if self.relu else 1.0) / fan_in)  # He et al. 2015 / LeCun et al. 1998

    @torch.no_grad()
    def reset_parameters(self, generator: Optional[torch.Generator] = None) -> None:
        """Draw weights ~ N(weight_mean, std²) and zero the biases (``generator`` for reproducible draws)."""
        for conv in self.convs():
            w = torch.randn(conv.weight.shape, generator=generator, dtype=conv.weight.dtype)
            conv.weight.copy_(w * self.init_std(conv) + self.weight_mean)
            if conv.bias is not None:
                conv.bias.zero_()
