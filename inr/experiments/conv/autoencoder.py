"""``ConvAutoencoder``: a strided-conv encoder and a ``ConvDecoder``, trained on image patches, so the
decoders of the frequency analysis can be studied after training, not only at initialisation."""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor, nn

from inr.experiments.conv.patches import PatchSet
from inr.networks.conv_decoder import PADDINGS, ConvDecoder


class ConvAutoencoder(nn.Module):
    """x̂ = g(e(x)): e = conv 3×3 + ReLU, then ``stages`` × (conv 3×3 with stride 2), ReLU between, down to a
    code (``code_channels``, H/2^stages, W/2^stages); g = ``ConvDecoder(code_channels, channels, width, depth,
    kernel_size, padding, upsample=[1 … stages], upsample_mode, scale_factor=2)`` with no output activation.

    ``upsample_mode="zero"`` (zero insertion, then a k×k conv) with ``padding="zeros"`` is exactly a stride-2
    transposed convolution (``ConvTranspose2d(k, stride=2, padding=k//2, output_padding=1)`` with the kernel
    flipped), so the three modes cover the usual decoder upsamplers: transposed conv, nearest, bilinear.

    Args:
        channels: image channels.
        width: channels of the hidden maps of encoder and decoder.
        code_channels: channels of the code; the code holds code_channels · HW / 4^stages numbers.
        stages: downsampling stages of the encoder = upsampling stages of the decoder.
        depth: decoder convolutions (≥ stages + 1).
        kernel_size: odd k of the decoder's convolutions (the encoder's are 3×3).
        padding: ``zeros`` | ``circular`` | ``reflect`` for every conv.
        upsample_mode: ``zero`` | ``nearest`` | ``bilinear``.

    Example:
        >>> ae = ConvAutoencoder(width=8, code_channels=2)
        >>> ae.encoder(torch.zeros(3, 1, 32, 32)).shape, ae(torch.zeros(3, 1, 32, 32)).shape
        (torch.Size([3, 2, 8, 8]), torch.Size([3, 1, 32, 32]))
    """

    def __init__(
        self,
        channels: int = 1,
        width: int = 16,
        code_channels: int = 4,
        stages: int = 2,
        depth: int = 4,
        kernel_size: int = 3,
        padding: str = "zeros",
        upsample_mode: str = "nearest",
    ) -> None:
        super().__init__()
        if padding not in PADDINGS:
            raise ValueError(f"unknown padding {padding!r}; choose one of {', '.join(PADDINGS)}")
        if stages < 1 or depth < stages + 1:
            raise ValueError(f"need stages ≥ 1 and decoder depth ≥ stages + 1, got stages={stages} depth={depth}")
        layers: list[nn.Module] = [nn.Conv2d(channels, width, 3, padding=1, padding_mode=padding)]
        for s in range(stages):
            out = code_channels if s == stages - 1 else width
            layers += [nn.ReLU(), nn.Conv2d(width, out, 3, stride=2, padding=1, padding_mode=padding)]
        self.encoder = nn.Sequential(*layers)
        self.decoder = ConvDecoder(
            code_channels,
            channels,
            width,
            depth,
            kernel_size,
            padding,
            upsample=list(range(1, stages + 1)),
            upsample_mode=upsample_mode,
        )
        self.stages = stages

    @property
    def code_numbers_per_pixel(self) -> float:
        """Code size over image size: code_channels / (channels · 4^stages)."""
        return self.decoder.in_dim / (self.decoder.out_dim * 4**self.stages)

    def forward(self, x: Tensor) -> Tensor:
        return self.decoder(self.encoder(x))


def train_autoencoder(
    model: nn.Module,
    patches: PatchSet,
    steps: int,
    batch_size: int = 32,
    lr: float = 2e-3,
    seed: int = 0,
) -> Tensor:
    """Adam on MSE(model(x), x) over ``steps`` batches of fresh random training crops, the learning rate
    decayed by a cosine from ``lr`` to 0; returns the loss of every step (steps,).

    ``seed`` fixes the crops drawn; the model's initialisation is the caller's (seed it before building).
    """
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 0.5 * (1 + math.cos(math.pi * t / steps)))
    losses = torch.empty(steps, device=device)  # stays on the device: no sync per step
    model.train()
    for step in range(steps):
        x = patches.crops(batch_size, generator).to(device)
        loss = ((model(x) - x) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
        losses[step] = loss.detach()
    return losses.cpu()


@torch.no_grad()
def reconstruct(model: nn.Module, x: Tensor, chunk: Optional[int] = 256) -> Tensor:
    """model(x) for patches (N, C, p, p), ``chunk`` patches at a time (memory bound), in eval mode."""
    model.eval()
    device = next(model.parameters()).device
    size = chunk or len(x)
    return torch.cat([model(x[i : i + size].to(device)).cpu() for i in range(0, len(x), size)])
