"""Encoding images to files under a target: a rate (bits per pixel), a quality (PSNR) or a size (weights).

``encode_images`` fits the sizes the search names (``search``), all images of one size as one stacked run per
size, and picks each image's file on its true size and its decoded PSNR; ``finetune_steps`` then trains the
chosen network through its quantiser and keeps the fine-tuned file where it is better within the target. With
``init`` (a learned init's file, or a directory of inits: ``inr.codec.init``) the search trains only the networks it
has inits for, each from its init, and codes their change from it. With a ``budget`` (seconds) the networks' time is
estimated from a few timed steps before the first starts, printed, and refused past it (``Clock``).
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.codec.architecture import Architecture
from inr.codec.coding import read_network
from inr.codec.fit import Fitted, StepCost, finetune, fit, step_cost, trainer_overhead
from inr.codec.init import Init, file_name, init_in, init_matching
from inr.codec.search import BITS, Choice, best_under, choices, first_reaching, knee
from inr.codec.sizes import default_depth, ladder, rungs_for_budget, weights_of
from inr.data.image import convert_channels, read_image
from inr.errors import InputError
from inr.io.progress import format_seconds

# a rate target decodes and scores the files of this many bit depths per quantiser: the deepest within the budget
SCORED_PER_QUANTISER = 2
MAX_BPP = 24.0  # raw 8-bit RGB: a file larger than the pixels is no codec
MAX_PSNR = 60.0  # above the PSNR of 8-bit rounding noise alone (58.9 dB)


@dataclass(frozen=True)
class Target:
    """What a file must meet: ``bpp`` (at most this many bits per pixel), ``psnr`` (at least this many dB) or
    ``params`` (a network of at most this many weights)."""

    kind: Literal["bpp", "psnr", "params"]
    value: float

    def check(self) -> None:
        """Refuse a target no file can meet, in one line naming the option."""
        if not np.isfinite(self.value):
            raise InputError(f"--{self.kind} {self.value}: not a finite number")
        if self.kind == "bpp" and not 0 < self.value <= MAX_BPP:
            raise InputError(f"--bpp {self.value:g}: bits per pixel must lie in (0, {MAX_BPP:g}]")
        if self.kind == "psnr" and not 0 < self.value <= MAX_PSNR:
            raise InputError(f"--psnr {self.value:g}: a PSNR target must lie in (0, {MAX_PSNR:g}] dB")
        if self.kind == "params" and (self.value < 1 or self.value != int(self.value)):
            raise InputError(f"--params {self.value:g}: the number of weights must be a whole number ≥ 1")

    def describe(self) -> str:
        unit = {"bpp": " bpp", "psnr": " dB", "params": " weights"}[self.kind]
        return f"{self.value:g}{unit}"


def read_codec_image(path: Union[str, Path]) -> Tensor:
    """An image file as the codec's target (H, W, C) in [0, 1]: gray (and gray + alpha) as 1 channel, colour as 3;
    alpha composited onto white (``inr.data.image``)."""
    image = read_image(path, "keep").numpy()
    channels = "gray" if image.shape[2] in (1, 2) else "rgb"
    return torch.from_numpy(convert_channels(image, channels, str(path)))


class Clock:
    """An encode's time budget: what the networks it trains are expected to cost (``fit.step_cost``: a few steps'
    arithmetic timed on a crop and scaled, plus the Trainer's own cost per step, ``fit.trainer_overhead``), printed
    before the first starts and refused past ``budget`` seconds in one line, before any training, so that nothing is
    written. A quality target's search, which stops at the first network that reaches it, checks each next network
    against what is left instead (``next``)."""

    def __init__(self, budget: float, images: Sequence[Tensor], steps: int, finetune_steps: int, files: int) -> None:
        self.budget, self.image, self.count = budget, images[0], len(images)
        self.steps, self.finetune_steps, self.files = steps, finetune_steps, files
        self.start = time.perf_counter()
        self.overhead: Optional[float] = None  # the Trainer's per step, timed once with the first network

    def cost(self, arch: Architecture) -> StepCost:
        if self.overhead is None:
            self.overhead = trainer_overhead(arch, self.image)
        return step_cost(arch, self.image, self.overhead)

    def fit_seconds(self, cost: StepCost) -> float:
        """One network's fit and the decodes of its ``files`` candidate files, for every image (a stacked run's step
        costs about its members' steps one after another on a CPU: benchmarks/stacked.py)."""
        return self.count * (self.steps * cost.step + self.files * cost.decode)

    def plan(self, archs: Sequence[Architecture]) -> None:
        """Refuse training ``archs`` (and fine-tuning the chosen one) past the budget; else print its expected time."""
        costs = [self.cost(arch) for arch in archs]
        total = sum(self.fit_seconds(c) for c in costs) + self.count * self.finetune_steps * max(c.step for c in costs)
        self.refuse_past(total, f"{len(archs)} network(s) × {self.steps} steps")
        height, width, _ = self.image.shape
        steps = ", ".join(f"{arch_label(c.arch)} {c.step:.2g} s/step" for c in costs)
        print(
            f"expected time: about {format_seconds(total)} for {len(archs)} network(s) × {self.steps} steps on "
            f"{width}×{height} (an estimate: {steps}, timed on a crop and scaled to the image)",
            file=sys.stderr,
            flush=True,
        )

    def next(self, arch: Architecture, first: bool) -> None:
        """Refuse training ``arch`` when it is expected to take more than what is left of the budget."""
        cost = self.cost(arch)
        seconds = self.fit_seconds(cost) + self.count * self.finetune_steps * cost.step
        spent = time.perf_counter() - self.start
        size = f"{arch_label(arch)} × {self.steps} steps"
        self.refuse_past(spent + seconds, size if first else f"{format_seconds(spent)} spent, then {size}, the next size")
        if first:
            print(
                f"expected time: about {format_seconds(seconds)} for the first network ({size}); a --psnr search trains "
                "wider ones until one reaches the target, each begun only within the budget",
                file=sys.stderr,
                flush=True,
            )

    def refuse_past(self, seconds: float, what: str) -> None:
        if seconds > self.budget:
            raise InputError(
                f"encoding takes an estimated {format_seconds(seconds)} ({what}), more than --budget-minutes "
                f"{self.budget / 60:g}; use fewer --steps (the time is linear in them), a smaller image or a lower target, "
                "or a larger --budget-minutes"
            )


def encode_images(
    images: Sequence[Tensor],
    target: Target,
    method: str = "siren",
    depth: Optional[int] = None,
    steps: int = 1000,
    seed: int = 0,
    bits: Optional[int] = None,
    finetune_steps: int = 0,
    init: Union[str, Path, None] = None,
    sources: Optional[Sequence[str]] = None,
    budget: Optional[float] = None,
) -> list[Choice]:
    """One file per image (H, W, C in [0, 1], all of one size), each meeting ``target``; the search's rules are in
    ``inr.codec.search``. ``bits`` fixes the bit depth (default: searched). ``init``: a learned init's file or a
    directory of inits (the module docstring); ``sources``: the images' names in messages; ``budget``: the seconds the
    encode may take, its estimate printed before the training and refused past them (``Clock``; None: unbounded,
    nothing estimated)."""
    target.check()
    if steps < 1:
        raise InputError(f"--steps {steps}: at least one training step")
    if finetune_steps < 0:
        raise InputError(f"--finetune-steps {finetune_steps}: must be ≥ 0")
    if bits is not None and bits not in BITS:
        raise InputError(f"--bits {bits}: choose {BITS[0]}…{BITS[-1]}")
    height, width, channels = images[0].shape
    side = min(height, width)
    rungs = ladder(method, depth if depth is not None else default_depth(method), seed)
    inits: dict[Architecture, Init] = {}
    if init is not None:
        rungs, inits = rungs_with_inits(Path(init), rungs, side, channels)
        for k, image in enumerate(images):
            for start in inits.values():
                start.check_unseen(image, sources[k] if sources else f"image {k + 1}")
    start_of = lambda arch: inits.get(arch)  # noqa: E731 (None: the seed's random draw)
    bit_depths = [bits] if bits is not None else list(BITS)
    picked: list[Optional[Choice]] = [None] * len(images)
    scored = 2 * (min(len(bit_depths), SCORED_PER_QUANTISER) if target.kind == "bpp" else len(bit_depths))
    clock = Clock(budget, images, steps, finetune_steps, scored) if budget is not None else None
    if target.kind == "bpp":
        bits_budget = target.value * height * width
        planned = rungs_for_budget(rungs, bits_budget, side, channels)
        if clock is not None:
            clock.plan(planned)
        for i, arch in enumerate(planned, 1):
            label = f"network {i} of {len(planned)} ({arch_label(arch)})"
            for k, fitted in enumerate(fit(arch, images, steps, label=label, init=start_of(arch))):
                found = choices(
                    arch, fitted, images[k], bit_depths, budget=bits_budget, keep=SCORED_PER_QUANTISER, init=start_of(arch)
                )
                best = best_under([*found, *filter(None, [picked[k]])], bits_budget)
                picked[k] = best
        missing = [k for k, c in enumerate(picked) if c is None]
        if missing:
            raise InputError(f"no file of image {missing[0] + 1} fits {target.describe()}; try a larger rate or --bits")
    elif target.kind == "psnr":
        limit = height * width * channels  # more weights than pixel values is no longer compression
        candidates = list(itertools.takewhile(lambda a: weights_of(a, side, channels) <= limit, rungs))
        for i, arch in enumerate(candidates, 1):
            if clock is not None:
                clock.next(arch, first=i == 1)
            todo = [k for k, c in enumerate(picked) if c is None]
            label = f"network {i} of up to {len(candidates)} ({arch_label(arch)})"
            fits = fit(arch, [images[k] for k in todo], steps, label=label, init=start_of(arch))
            for k, fitted in zip(todo, fits):
                picked[k] = first_reaching(arch, fitted, images[k], target.value, bit_depths, start_of(arch))
            if all(c is not None for c in picked):
                break
        missing = [k for k, c in enumerate(picked) if c is None]
        if missing:
            raise InputError(
                f"image {missing[0] + 1} does not reach {target.describe()} with {method} networks of up to "
                f"{limit:,} weights at {steps} steps; ask for a lower PSNR or more --steps"
            )
    else:
        fitting = [a for a in rungs if weights_of(a, side, channels) <= target.value]
        if not fitting:
            raise InputError(
                f"--params {target.value:g}: the smallest {method} network has {weights_of(rungs[0], side, channels):,} weights"
            )
        arch = fitting[-1]
        if clock is not None:
            clock.plan([arch])
        for k, fitted in enumerate(fit(arch, images, steps, label=f"network 1 of 1 ({arch_label(arch)})", init=start_of(arch))):
            picked[k] = knee(choices(arch, fitted, images[k], bit_depths, init=start_of(arch)))
    if finetune_steps:
        picked = [finetuned(c, images[k], target, finetune_steps) for k, c in enumerate(picked)]
    return picked


def rungs_with_inits(
    path: Path, rungs: Sequence[Architecture], side: int, channels: int
) -> tuple[list[Architecture], dict[Architecture, Init]]:
    """The sizes the search may train with the learned inits at ``path`` and their inits: a file's one network (found
    among ``rungs``), or every rung a directory of inits has a file for."""
    if path.is_dir():
        found = [arch for arch in rungs if (path / file_name(arch)).is_file()]
        if not found:
            raise InputError(
                f"--init {path}: no init of a {rungs[0].method} network of depth {rungs[0].depth} in it "
                f"(files such as {file_name(rungs[0])}); make them with inr-codec learn-init"
            )
        return found, {arch: init_in(path, arch, side, channels) for arch in found}
    start = init_matching(path, rungs, side, channels)
    return [start.arch], {start.arch: start}


def finetuned(choice: Choice, image: Tensor, target: Target, steps: int) -> Choice:
    """The choice's network trained ``steps`` more through its quantiser; kept if the new file meets the target and
    scores higher (a rate target) or is smaller (a quality target), else the choice as it was."""
    decoded = read_network(choice.data, init=choice.init)  # the quantised weights are where fine-tuning starts
    start = Fitted(decoded.encoder.train(), decoded.network.train(), choice.fit_seconds)
    tuned = finetune(choice.arch, start, image, choice.bits, choice.per_channel, steps, choice.init)
    (new,) = choices(choice.arch, tuned, image, [choice.bits], [choice.per_channel], init=choice.init)
    if target.kind == "bpp":
        return new if new.size_bits <= target.value * image.shape[0] * image.shape[1] and new.psnr > choice.psnr else choice
    if target.kind == "psnr":
        return new if new.psnr >= target.value and new.size_bits < choice.size_bits else choice
    return new if new.psnr > choice.psnr else choice


def arch_label(arch: Architecture) -> str:
    """A network size in words, e.g. ``siren 4 × 24`` or ``hashgrid 2 × 16, T = 2^12`` (``Architecture.label``)."""
    return arch.label()
