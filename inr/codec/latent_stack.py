"""Several latent-codec trainings as one: K members, each an image (all of one size) at its own rate weight λ_k,
trained in one loop whose every operation runs on the K members at once (batched products, a grouped convolution).

    loss = Σ_k [ mean((x̂_k − x_k)²) + λ_k · R_k / (H·W) ]

No parameter is shared, so the gradient of member k's parameters is that of its own D + λ_k·R, and Adam (elementwise)
and the schedule move them as ``fit_latents`` would alone: member k starts from the draw of ``torch.manual_seed(s_k)``
and draws its quantisation noise from its own generator in the same order, so the stacked fit is K independent fits
up to the float rounding of batched against single products (a test holds it there). What it changes is the cost:
one step of K members instead of K steps of one (``benchmarks/codec_latent_stack.py`` measures the ratio).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from inr.codec.laplace import bits
from inr.codec.latent_arm import batched_contexts
from inr.codec.latent_fit import GAIN, Preset, Progress, quantised, train_phases
from inr.codec.latent_model import LatentImage, Spec
from inr.errors import InputError


def stacked(tensors: Sequence[Tensor]) -> nn.Parameter:
    return nn.Parameter(torch.stack([t.detach() for t in tensors]).clone())


class StackedLatents(nn.Module):
    """K ``LatentImage`` models of one ``Spec`` as batched tensors: latents (K, h_l, w_l) per level; the synthesis's
    1×1 layers (K, out, in) and biases (K, out); its 3×3 layers as one grouped convolution (K·C, C, 3, 3); the
    entropy model's layers (K, out, in)."""

    def __init__(self, members: Sequence[LatentImage]) -> None:
        super().__init__()
        self.spec = members[0].spec
        self.latents = nn.ParameterList([stacked([m.latents[level] for m in members]) for level in range(self.spec.levels)])
        self.pointwise = nn.ParameterList(
            [stacked([getattr(m.synthesis.pointwise[i], t) for m in members]) for i in range(3) for t in ("weight", "bias")]
        )
        self.spatial = nn.ParameterList(
            [
                nn.Parameter(torch.cat([getattr(m.synthesis.spatial[i], t).detach() for m in members]).clone())
                for i in range(2)
                for t in ("weight", "bias")
            ]
        )
        self.arm = nn.ParameterList(
            [stacked([getattr(m.arm.layers[i], t) for m in members]) for i in range(3) for t in ("weight", "bias")]
        )
        self.count = len(members)

    def networks(self) -> list[nn.Parameter]:
        return [*self.pointwise, *self.spatial, *self.arm]

    def image(self, latents: list[Tensor]) -> Tensor:
        """Pixels (K, H, W, C) from (quantised) latents (K, h_l, w_l): ``LatentImage.image`` of each member."""
        s, k = self.spec, self.count
        z = torch.cat(
            [F.interpolate(y[:, None], size=(s.height, s.width), mode="bilinear", align_corners=False) for y in latents], 1
        )
        x = z.permute(0, 2, 3, 1).reshape(k, s.height * s.width, s.levels)
        for i in range(3):
            weight, bias = self.pointwise[2 * i], self.pointwise[2 * i + 1]
            x = torch.baddbmm(bias[:, None, :], x, weight.transpose(1, 2))
            x = torch.relu(x) if i < 2 else x
        # (K, HW, C) -> (1, K·C, H, W): channels k·C … k·C + C − 1 are member k's, the groups of the 3×3 layers
        x = x.reshape(k, s.height, s.width, s.channels).permute(0, 3, 1, 2).reshape(1, k * s.channels, s.height, s.width)
        conv = lambda v, i: F.conv2d(v, self.spatial[2 * i], self.spatial[2 * i + 1], padding=1, groups=k)  # noqa: E731
        x = x + conv(x, 0)
        x = x + conv(torch.relu(x), 1)
        return x.reshape(k, s.channels, s.height, s.width).permute(0, 2, 3, 1)

    def rate_bits(self, latents: list[Tensor]) -> Tensor:
        """(K,): Σ −log2 P(ŷ) over every latent of each member under its (float) entropy model."""
        total = latents[0].new_zeros(self.count)
        for y in latents:
            x = batched_contexts(y)
            for i in range(3):
                weight, bias = self.arm[2 * i], self.arm[2 * i + 1]
                x = torch.baddbmm(bias[:, None, :], x, weight.transpose(1, 2))
                x = torch.relu(x) if i < 2 else x
            mean, scale = x[..., 0], torch.exp2(x[..., 1])
            total = total + bits(y.reshape(self.count, -1), mean, scale).sum(1)
        return total

    @torch.no_grad()
    def copy_into(self, members: Sequence[LatentImage]) -> None:
        """Each member's tensors back into its own ``LatentImage``."""
        c = self.spec.channels
        for k, m in enumerate(members):
            for level, y in enumerate(self.latents):
                m.latents[level].copy_(y[k])
            for i in range(3):
                m.synthesis.pointwise[i].weight.copy_(self.pointwise[2 * i][k])
                m.synthesis.pointwise[i].bias.copy_(self.pointwise[2 * i + 1][k])
                m.arm.layers[i].weight.copy_(self.arm[2 * i][k])
                m.arm.layers[i].bias.copy_(self.arm[2 * i + 1][k])
            for i in range(2):
                m.synthesis.spatial[i].weight.copy_(self.spatial[2 * i][k * c : (k + 1) * c])
                m.synthesis.spatial[i].bias.copy_(self.spatial[2 * i + 1][k * c : (k + 1) * c])


def check_members(images: Sequence[Tensor], lams: Sequence[float]) -> None:
    """One line for what cannot be stacked: no member, λ's not one per image, a λ ≤ 0, images of other sizes."""
    if not images or len(images) != len(lams):
        raise InputError(f"stacked members: {len(images)} image(s) and {len(lams)} λ's; give one λ per image")
    if not all(lam > 0 for lam in lams):
        raise InputError(f"stacked members: every λ must be > 0, got {', '.join(f'{lam:g}' for lam in lams)}")
    shapes = sorted({tuple(image.shape) for image in images})
    if len(shapes) > 1:
        raise InputError(f"stacked members: images of one size only, got {' and '.join('×'.join(map(str, s)) for s in shapes)}")


def fit_latents_stacked(
    images: Sequence[Tensor],
    lams: Sequence[float],
    preset: Preset,
    levels: int,
    seeds: Optional[Sequence[int]] = None,
    report: Optional[Callable[[Progress], None]] = None,
    device: Optional[str] = None,
) -> list[LatentImage]:
    """``fit_latents(images[k], lams[k], preset, levels, seeds[k])`` for every k, trained as one stacked run
    (module docstring); images (H, W, C) in [0, 1] of one size, seeds 0 … K − 1 by default. The models come back
    on the CPU; ``report`` gets the members' mean MSE and bits per pixel."""
    check_members(images, lams)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    seeds = list(range(len(images))) if seeds is None else list(seeds)
    height, width, channels = images[0].shape
    spec = Spec(height, width, channels, levels, preset.synthesis, preset.arm)
    members, generators = [], []
    for seed in seeds:  # each member's draw and noise stream as fit_latents(seed) makes them
        torch.manual_seed(seed)
        members.append(LatentImage(spec))
        generator = torch.Generator(device=device)
        if device == "cpu":
            generator.set_state(torch.get_rng_state())
        else:  # fit_latents draws its noise on the device, whose stream its manual_seed started afresh
            generator.manual_seed(seed)
        generators.append(generator)
    model = StackedLatents(members).to(device)
    target = torch.stack(list(images)).to(device=device, dtype=torch.float32)
    weights = torch.tensor([float(lam) for lam in lams], device=device)
    pixels = height * width

    def step_loss(hard: bool, progress: float) -> tuple[Tensor, Tensor, Tensor]:
        latents = []
        for y in model.latents:
            noise = None if hard else torch.stack([torch.rand(y.shape[1:], generator=g, device=device) for g in generators])
            latents.append(quantised(GAIN * y, hard, progress, noise=noise))
        mse = torch.mean((model.image(latents) - target) ** 2, dim=(1, 2, 3))
        rate = model.rate_bits(latents) / pixels
        return torch.sum(mse + weights * rate), mse, rate

    train_phases(
        preset, lambda lr: [{"params": list(model.latents), "lr": lr}, {"params": model.networks(), "lr": lr}], step_loss, report
    )
    model.cpu().copy_into(members)
    return members
