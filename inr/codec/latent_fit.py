"""Training the latent codec's model on one image: minimise D + λ·R over the latents, the synthesis and the entropy
model, with R the entropy model's bits per pixel of the quantised latents.

    loss = mean((x̂ − x)²) + λ · Σ_l Σ_p −log2 P(ŷ_l,p | context) / (H·W)

The latents are trained as y = 16·θ (the encoder's gain: Adam's steps on θ move y sixteen times as far, so the
grids reach the tens of units the synthesis reads within a few hundred steps; Cool-chic's ``encoder_gain``).
Quantisation is simulated in two phases, as the published overfitted codecs do (Cool-chic 3, C3): first soft
rounding around additive noise, ŷ = s_T(s_T(y) + a·u), u ~ U(−½, ½), with

    s_T(y) = ⌊y⌋ + ½ + ½·tanh(r / T) / tanh(1 / (2T)),   r = y − ⌊y⌋ − ½

and the temperature T annealed 0.35 → 0.08 and the noise a 1 → 0.3 (s_T tends to rounding as T → 0, to the
identity as T grows); then the true rounding ŷ = round(y) with the straight-through gradient at a tenth of the
learning rate, so the last steps train what the file will hold. Adam, cosine decay within each phase. The entropy
model reads the same ŷ its rate is charged on, as the decoder will.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor

from inr.codec.laplace import bits
from inr.codec.latent_arm import contexts
from inr.codec.latent_model import LatentImage, Spec
from inr.codec.latent_prior import Prior, load_prior
from inr.io.progress import advance


@dataclass(frozen=True)
class Preset:
    """Training length and model size of an encoding speed: more steps, a wider synthesis, a slower encode."""

    name: str
    steps: int
    synthesis: int
    arm: int
    lr: float = 1e-2
    hard_fraction: float = 0.0  # the last steps, trained through the true rounding (none: see below)
    hard_lr: float = 0.01  # their learning rate, relative to lr
    # the networks' learning rate when they start from a decoder prior, relative to lr: held near the prior (0.1)
    # they cost more PSNR than their change saves bits; free (1.0) the prior is a start and a code (docs/codec.md)
    prior_lr: float = 1.0


# 8-wide networks: on 256² crops their weights cost half the bits of 16-wide ones, which more than pays at every
# rate measured (docs/codec.md, "How the presets were chosen")
PRESETS = {
    "fast": Preset("fast", 1000, 8, 8),
    "medium": Preset("medium", 3000, 8, 8),
    "slow": Preset("slow", 10000, 8, 8),
}
DEFAULT_PRESET = "medium"


GAIN = 16.0
TEMPERATURE = (0.35, 0.08)
NOISE = (1.0, 0.3)


def soft_round(y: Tensor, temperature: float) -> Tensor:
    """s_T(y) = ⌊y⌋ + ½ + ½·tanh(r/T)/tanh(1/(2T)), r = y − ⌊y⌋ − ½: continuous, s_T(k ± ½) = k ± ½ at integers' edges.

    Example:
        >>> [round(float(v), 3) for v in soft_round(torch.tensor([0.5, 1.0, 1.2]), 0.1)]
        [0.5, 1.0, 1.002]
    """
    floor = torch.floor(y).detach()
    r = y - floor - 0.5
    return floor + 0.5 + 0.5 * torch.tanh(r / temperature) / math.tanh(0.5 / temperature)


def quantised(y: Tensor, hard: bool, progress: float = 1.0, noise: Optional[Tensor] = None) -> Tensor:
    """ŷ of latents y: soft rounding around noise at the schedule's point ``progress`` ∈ [0, 1] (soft phase), or
    round(y) with the identity gradient (hard phase). ``noise``: the draws u + ½ ~ U(0, 1) (default: torch's)."""
    if hard:
        return y + (torch.round(y) - y).detach()
    temperature = TEMPERATURE[0] + (TEMPERATURE[1] - TEMPERATURE[0]) * progress
    amplitude = NOISE[0] + (NOISE[1] - NOISE[0]) * progress
    u = torch.rand_like(y) if noise is None else noise
    return soft_round(soft_round(y, temperature) + amplitude * (u - 0.5), temperature)


def rate_bits(model: LatentImage, latents: list[Tensor]) -> Tensor:
    """Σ −log2 P(ŷ) over every latent of every level under the (float) entropy model."""
    total = latents[0].new_zeros(())
    for y in latents:
        mean, scale = model.arm(contexts(y))
        total = total + bits(y.reshape(-1), mean, scale).sum()
    return total


@dataclass
class Progress:
    """What a training step reports: its index, the loss's parts."""

    step: int
    steps: int
    mse: float
    bpp: float


def train_phases(
    preset: Preset,
    groups: Callable[[float], list[dict]],
    step_loss: Callable[[bool, float], tuple[Tensor, Tensor, Tensor]],
    report: Optional[Callable[[Progress], None]] = None,
) -> None:
    """The schedule every latent training follows: the soft phase, then the hard one (``preset.hard_fraction`` of the
    steps at ``preset.hard_lr`` of the rate), each a fresh Adam over ``groups(lr)`` with cosine decay; a step
    minimises ``step_loss(hard, progress)``'s loss, and ``report`` gets its MSE and bits per pixel (means, for several
    members) every 2 s and at the end."""
    hard_steps = int(round(preset.steps * preset.hard_fraction))
    phases = [(False, preset.steps - hard_steps, preset.lr), (True, hard_steps, preset.lr * preset.hard_lr)]
    done, last = 0, time.perf_counter()
    for hard, steps, lr in phases:
        if steps <= 0:
            continue
        optimiser = torch.optim.Adam(groups(lr))
        schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda k, n=steps: 0.5 * (1 + math.cos(math.pi * k / n)))
        for k in range(steps):
            loss, mse, rate = step_loss(hard, k / steps)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
            done += 1
            advance(done, preset.steps)
            if report is not None and (time.perf_counter() - last > 2.0 or done == preset.steps):
                last = time.perf_counter()
                report(Progress(done, preset.steps, float(mse.mean()), float(rate.mean())))


def fit_latents(
    image: Tensor,
    lam: float,
    preset: Preset,
    levels: int,
    seed: int = 0,
    report: Optional[Callable[[Progress], None]] = None,
    prior: Optional[Prior] = None,
    device: Optional[str] = None,
) -> LatentImage:
    """The trained model of an image (H, W, C) in [0, 1] at rate weight λ; ``prior``: the decoder prior whose
    synthesis and entropy model training starts from (``latent_prior``); ``device``: where to train (default: a
    GPU when torch sees one; the model comes back on the CPU, and the file it makes decodes the same anywhere)."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(seed)
    height, width, channels = image.shape
    spec = Spec(height, width, channels, levels, preset.synthesis, preset.arm)
    model = LatentImage(spec)
    if prior is not None:
        load_prior(model, prior)
    model = model.to(device)
    target = image.to(device=device, dtype=torch.float32)
    pixels = height * width

    def groups(lr: float) -> list[dict]:
        # from a prior, the networks may be held near it (prior_lr < 1): the file pays for every step they take away
        network_lr = lr * (preset.prior_lr if prior is not None else 1.0)
        networks = [*model.synthesis.parameters(), *model.arm.parameters()]
        if network_lr > 0:
            return [{"params": list(model.latents), "lr": lr}, {"params": networks, "lr": network_lr}]
        for p in networks:
            p.requires_grad_(False)
        return [{"params": list(model.latents), "lr": lr}]

    def step_loss(hard: bool, progress: float) -> tuple[Tensor, Tensor, Tensor]:
        latents = [quantised(GAIN * y, hard, progress) for y in model.latents]
        mse = torch.mean((model.image(latents) - target) ** 2)
        rate = rate_bits(model, latents) / pixels
        return mse + lam * rate, mse, rate

    train_phases(preset, groups, step_loss, report)
    return model.cpu()
