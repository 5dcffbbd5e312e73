"""Fitting a codec's networks: one ``Architecture`` to each of a list of images of one size, as one stacked run
(``inr.tasks.members``) where the method stacks and one run per image where it does not; then, as an option,
quantisation-aware fine-tuning at a bit depth.

Every pixel is a training sample (``split="all"``) and every step sees them all (full batch), with the registry's
optimiser and learning rate for the method. A fit against a learned init (``inr.codec.init``) starts every member
at θ₀ (the task's ``init_from``) instead of the seed's draw. Member k of a stacked run is the single run on image k (docs/members.md),
so stacking changes the wall time, not the networks.

Fine-tuning (``finetune``) trains the network through its own quantiser: each stored tensor is replaced, in the
forward pass, by its quantised value (``quantise.FakeQuantised`` as a ``torch.nn.utils.parametrize``
parametrisation) and the gradient passes through the rounding unchanged (straight-through), at the registry's
learning rate times ``FINETUNE_LR_SCALE``; against an init, the change from θ₀ is what is quantised.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Optional

import lightning as L
import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

from inr.codec.architecture import Architecture, linear_weights, stored_tensors
from inr.codec.coding import render
from inr.codec.init import Init
from inr.codec.quantise import FakeQuantised, channel_rows
from inr.data.grid import Grid
from inr.data.module import GridDataModule
from inr.encoders.stacked import stack_encoders
from inr.errors import InputError
from inr.methods.training import fit_row, silence_lightning, step_seconds
from inr.networks.stacked import stackable_problem
from inr.tasks import ImageFitting

# the probe of a step's cost: a crop of at most 256² pixels (a full-batch step there is tens of ms to a second on this
# CPU, long against the per-call overhead) and the median of two steps after a warm-up one
PROBE_SIDE, PROBE_STEPS = 256, 2
OVERHEAD_SIDE = 8  # the Trainer's own cost per step, timed where the arithmetic is nothing
# fine-tuning through the quantiser starts from a fitted network: a tenth of the fit's rate (as in the
# quantisation-aware fine-tuning of Strümpler et al. 2022, sec. 3.3, which lowers the rate after the fit)
FINETUNE_LR_SCALE = 0.1


class Pixels(GridDataModule):
    """Images of one size (H, W, C) in [0, 1] as the targets of a fit: one per member, every pixel a training
    sample, full batches."""

    def __init__(self, images: Sequence[Tensor]) -> None:
        super().__init__(split="all")
        if not images:
            raise InputError("codec: no image to fit")
        shapes = {tuple(image.shape) for image in images}
        if len(shapes) > 1:
            raise InputError(f"codec: images of one fit share one size; got {sorted(shapes)}")
        self.images, self.targets = list(images), len(images)

    def load_values(self) -> Tensor:
        return torch.cat(self.images, dim=-1)  # T × (H, W, C) -> (H, W, T·C)

    def describe(self) -> str:
        return f"{len(self.images)} image(s) of {tuple(self.images[0].shape)}"


@dataclass
class Fitted:
    """One image's fitted encoder and network (float32, eval mode) and the fit's wall seconds (a stacked fit's
    seconds are shared by its members: each gets the run's seconds divided by their number)."""

    encoder: nn.Module
    network: nn.Module
    seconds: float


def stacks(arch: Architecture, side: int, channels: int) -> bool:
    """Whether the method's networks train as members of one stacked model."""
    encoder, network = arch.build(side, channels)
    try:
        stack_encoders([encoder])
    except InputError:
        return False
    return stackable_problem(network) is None


def fit_task(arch: Architecture, side: int, channels: int, steps: int, members: int, init: Optional[Init] = None) -> ImageFitting:
    """The task that fits ``arch`` to ``members`` images at once (one: a single model), from ``init`` if given."""
    spec = arch.resolve(side, steps)
    encoder, factory, optimizer = spec.build()
    start = {"init_from": str(init.path)} if init is not None else {}
    if members > 1:
        return ImageFitting(
            encoder=encoder,
            network=factory,
            out_channels=channels,
            optimizer=optimizer,
            scheduler=spec.build_scheduler(),
            members=members,
            member_seeds=[arch.seed] * members,
            **start,
        )
    encoder, network = arch.build(side, channels)
    return ImageFitting(
        encoder=encoder,
        network=lambda i, o: network,
        out_channels=channels,
        optimizer=optimizer,
        scheduler=spec.build_scheduler(),
        **start,
    )


@dataclass(frozen=True)
class StepCost:
    """What one network costs on one image: seconds of a full-batch training step and of one decode, estimated by
    ``step_cost``."""

    arch: Architecture
    step: float
    decode: float


def step_cost(arch: Architecture, image: Tensor, overhead: float = 0.0) -> StepCost:
    """The seconds of one full-batch training step of ``arch`` on ``image`` (H, W, C) and of one decode of its file.

    The arithmetic is timed on a centre crop of at most ``PROBE_SIDE``² pixels and scaled to the image's pixels (a
    full-batch step's work is linear in them): a warm-up step, then ``PROBE_STEPS`` timed steps of the registry's
    optimiser on the crop's MSE, then one float64 render of the crop as the decoder makes it. ``overhead``: what each
    step costs beyond its arithmetic (``trainer_overhead``), added unscaled."""
    height, width, channels = image.shape
    ch, cw = min(height, PROBE_SIDE), min(width, PROBE_SIDE)
    top, left = (height - ch) // 2, (width - cw) // 2
    values = image[top : top + ch, left : left + cw].reshape(-1, channels)  # (ch·cw, C)
    coords = Grid((ch, cw)).all_coords()  # (ch·cw, 2)
    encoder, factory, optimizer = arch.resolve(min(height, width)).build()
    network = factory(encoder.out_dim, channels)
    optimiser = optimizer([*encoder.parameters(), *network.parameters()])
    times = []
    for _ in range(PROBE_STEPS + 1):
        start = time.perf_counter()
        optimiser.zero_grad()
        torch.nn.functional.mse_loss(network(encoder(coords)), values).backward()
        optimiser.step()
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    render(encoder.eval(), network.eval(), ch, cw)
    rendered = time.perf_counter() - start
    scale = height * width / (ch * cw)
    return StepCost(arch, overhead + statistics.median(times[1:]) * scale, rendered * scale)


def trainer_overhead(arch: Architecture, image: Tensor) -> float:
    """Seconds a fit's step costs beyond its arithmetic (Lightning's loop, hooks and callbacks; tens of ms on a busy
    CPU, more than the arithmetic of a small image): the median step of the real Trainer
    (``inr.methods.training.step_seconds``) on a corner of ``OVERHEAD_SIDE``² pixels, where the arithmetic is
    nothing."""
    silence_lightning()
    height, width, channels = image.shape
    corner = image[: min(height, OVERHEAD_SIDE), : min(width, OVERHEAD_SIDE)]
    return step_seconds(fit_task(arch, min(height, width), channels, 1, 1), Pixels([corner]))


def fit(
    arch: Architecture, images: Sequence[Tensor], steps: int, label: str = "fit", init: Optional[Init] = None
) -> list[Fitted]:
    """Fit ``arch`` to each image (H, W, C) for ``steps`` full-batch steps, from ``init`` if given; one ``Fitted``
    per image, in order."""
    silence_lightning()
    height, width, channels = images[0].shape
    side = min(height, width)
    if len(images) > 1 and stacks(arch, side, channels):
        data = Pixels(images)
        task = fit_task(arch, side, channels, steps, len(images), init)
        seconds = fit_row(task, data, steps, label=f"{label}: {len(images)} members")
        out = []
        for k in range(len(images)):
            member = task.member(k)
            out.append(Fitted(member.encoder.eval(), member.network.eval(), seconds / len(images)))
        return out
    out = []
    for k, image in enumerate(images):
        task = fit_task(arch, side, channels, steps, 1, init)
        name = label if len(images) == 1 else f"{label}: image {k + 1} of {len(images)}"
        seconds = fit_row(task, Pixels([image]), steps, label=name)
        out.append(Fitted(task.encoder.eval(), task.network.eval(), seconds))
    return out


def finetune(
    arch: Architecture,
    fitted: Fitted,
    image: Tensor,
    bits: int,
    per_channel: bool,
    steps: int,
    init: Optional[Init] = None,
) -> Fitted:
    """``steps`` more full-batch steps of ``fitted`` through its quantiser at ``bits`` (the module docstring); the
    latent float weights come back, and quantising them (their change from ``init``) gives the weights the
    fine-tuning saw."""
    silence_lightning()
    height, width, channels = image.shape
    side = min(height, width)
    linear = linear_weights(fitted.encoder, fitted.network)
    starts = dict(zip([name for name, _ in stored_tensors(fitted.encoder, fitted.network)], init.tensors)) if init else {}
    for prefix, module in (("encoder", fitted.encoder), ("network", fitted.network)):
        for name, p in list(module.named_parameters()):
            if p.is_complex():
                raise InputError(f"codec: fine-tuning through the quantiser takes real weights; {arch.method} has complex ones")
            owner_name, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_name) if owner_name else module
            rows = channel_rows(tuple(p.shape), per_channel and f"{prefix}.{name}" in linear)
            offset = starts.get(f"{prefix}.{name}")
            parametrize.register_parametrization(owner, attr, FakeQuantised(bits, rows, offset))
    spec = arch.resolve(side, steps)
    _, _, optimizer = spec.build()
    lr = spec.lr * FINETUNE_LR_SCALE
    task = ImageFitting(
        encoder=fitted.encoder,
        network=lambda i, o: fitted.network,
        out_channels=channels,
        optimizer=partial(optimizer.func, **{**optimizer.keywords, "lr": lr}),
    )
    L.seed_everything(arch.seed, verbose=False)
    seconds = fit_row(task, Pixels([image]), steps, label="fine-tuning through the quantiser")
    for module in (fitted.encoder, fitted.network):
        for owner in list(module.modules()):
            if parametrize.is_parametrized(owner):
                for attr in list(owner.parametrizations.keys()):
                    parametrize.remove_parametrizations(owner, attr, leave_parametrized=False)
    return Fitted(fitted.encoder.eval(), fitted.network.eval(), fitted.seconds + seconds)
