"""Encoding an image with the latent codec: train the model at a rate weight λ (``latent_fit``), quantise its
networks at the bit depths that minimise D + λ·R, write the file and decode it back, and the λ search behind a
target rate or PSNR.

The entropy model's fixed-point precision F changes only the rate (the latents are fixed by then), so it is the F
of 6 … 12 that gives the fewest bits (latents under the integer tables + its own weights); the synthesis's step
2^−b changes the distortion too, so b of 6 … 14 is the one of least D + λ·R measured on the decoded pixels.
The file is decoded from its bytes before it is returned: the PSNR reported is the decoder's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
from torch import Tensor

from inr.codec.latent_arm import FixedPoint
from inr.codec.latent_coding import (
    STREAMS,
    bits_of,
    ideal_bits,
    latent_bound,
    pack_file,
    predictions,
    read_latent_file,
    synthesis_of,
    weight_bits,
)
from inr.codec.latent_fit import GAIN, PRESETS, Preset, Progress, fit_latents
from inr.codec.latent_model import LatentImage, Spec, render
from inr.codec.latent_prior import prior_for
from inr.codec.latent_stack import check_members, fit_latents_stacked
from inr.errors import InputError

ARM_BITS = range(6, 13)
SYNTHESIS_BITS = range(6, 15)
MAX_LEVELS = 7


def default_levels(height: int, width: int) -> int:
    """L = 7 latent grids, fewer for an image whose shorter side is under 2^7 (the coarsest at least 2 pixels).

    Example:
        >>> default_levels(512, 768), default_levels(32, 40)
        (7, 4)
    """
    return max(1, min(MAX_LEVELS, int(math.log2(min(height, width))) - 1))


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """10·log10(255² / MSE) of two 8-bit images (over every channel)."""
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


@dataclass
class LatentCoded:
    """One latent file: its bytes, its decoded pixels, the λ and preset it was trained at, and where its bits went."""

    data: bytes
    pixels: np.ndarray
    psnr: float
    lam: float
    preset: str
    spec: Spec
    seconds: float
    parts: dict = field(default_factory=dict)  # bits: per latent level, the networks' weights, the rest (``file_bits``)

    @property
    def bpp(self) -> float:
        return 8 * len(self.data) / (self.spec.height * self.spec.width)


def integer_latents(model: LatentImage) -> list[np.ndarray]:
    """round(16·θ) of every grid, int64."""
    return [torch.round(GAIN * y.detach()).to(torch.int64).numpy() for y in model.latents]


def choose_arm(model: LatentImage, grids: list[np.ndarray]) -> FixedPoint:
    """The fixed-point entropy model of the fewest bits (latents + its weights) over F = 6 … 12."""

    def cost(arm: FixedPoint) -> float:
        predicted = predictions(arm, grids)
        return ideal_bits(grids, predicted, latent_bound(grids, predicted)) + weight_bits(arm.tensors())

    return min((FixedPoint.of(model.arm, bits) for bits in ARM_BITS), key=cost)


def choose_synthesis(model: LatentImage, grids: list[np.ndarray], target: np.ndarray, lam: float) -> tuple[list[np.ndarray], int]:
    """The synthesis's integer weights at the step 2^−b of least MSE + λ·(weight bits / pixels), b = 6 … 14."""
    spec = model.spec
    pixels = spec.height * spec.width
    best = None
    for bits in SYNTHESIS_BITS:
        q = [np.round(t.detach().double().numpy() * 2.0**bits).astype(np.int64) for t in model.synthesis.stored()]
        if max(int(np.abs(t).max()) for t in q) > 32767:
            break  # finer steps only need larger integers than a file holds
        decoded = render(synthesis_of(spec, q, bits), grids, spec)
        mse = float(np.mean((decoded.astype(np.float64) - target) ** 2)) / 255.0**2
        score = mse + lam * weight_bits(q) / pixels
        if best is None or score < best[0]:
            best = (score, q, bits)
    if best is None:
        raise InputError("the synthesis's weights are too large for any step a file holds")
    return best[1], best[2]


def changes(full: list[np.ndarray], start: tuple[np.ndarray, ...], shift: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(q, p + q·2^shift): the change of integer weights ``full`` from ``start`` at a step 2^shift of theirs,
    rounded half to even, and the weights it gives back."""
    q = [np.round((f.reshape(-1) - p.reshape(-1)) / 2.0**shift).astype(np.int64) for f, p in zip(full, start)]
    return q, [p.reshape(-1) + (d << shift) for d, p in zip(q, start)]


def choose_changes(model: LatentImage, grids: list[np.ndarray], target: np.ndarray, lam: float, prior) -> tuple:
    """With a prior: the synthesis's change at the step 2^−b (b ≤ the prior's) of least MSE + λ·(bits / pixels), and
    the entropy model's at the step 2^−a (a ≤ the prior's) of fewest bits; ((q, b), (q, a, the integer model))."""
    spec = model.spec
    n = len(spec.synthesis_shapes())
    pixels = spec.height * spec.width
    full = [np.round(t.detach().double().numpy() * 2.0**prior.synthesis_bits).astype(np.int64) for t in model.synthesis.stored()]
    synthesis = []
    for bits in range(2, prior.synthesis_bits + 1):
        q, weights = changes(full, prior.tensors[:n], prior.synthesis_bits - bits)
        decoded = render(synthesis_of(spec, weights, prior.synthesis_bits), grids, spec)
        mse = float(np.mean((decoded.astype(np.float64) - target) ** 2)) / 255.0**2
        synthesis.append((mse + lam * weight_bits(q) / pixels, q, bits))
    arm_full = FixedPoint.of(model.arm, prior.arm_bits).tensors()
    arms = []
    for bits in range(2, prior.arm_bits + 1):
        q, weights = changes(arm_full, prior.tensors[n:], prior.arm_bits - bits)
        fixed = FixedPoint.from_tensors(weights, spec.arm, prior.arm_bits)
        predicted = predictions(fixed, grids)
        arms.append((ideal_bits(grids, predicted, latent_bound(grids, predicted)) + weight_bits(q), q, bits, fixed))
    _, synthesis_q, synthesis_bits = min(synthesis, key=lambda c: c[0])
    _, arm_q, arm_bits, fixed = min(arms, key=lambda c: c[0])
    return (synthesis_q, synthesis_bits), (arm_q, arm_bits, fixed)


def encode_latent_image(
    image: Tensor,
    lam: float,
    preset: Preset,
    levels: Optional[int] = None,
    seed: int = 0,
    report: Optional[Callable[[Progress], None]] = None,
    use_prior: bool = False,
) -> LatentCoded:
    """The latent file of an image (H, W, C) in [0, 1] trained at rate weight λ, decoded back from its bytes; with
    ``use_prior`` and a shipped prior that fits the model, trained from it and coded as the change from it."""
    if not lam > 0:
        raise InputError(f"--lambda {lam:g}: the rate's weight, > 0 (e.g. 0.001)")
    start = time.perf_counter()
    height, width, _ = image.shape
    levels = default_levels(height, width) if levels is None else levels
    spec = Spec(height, width, image.shape[2], levels, preset.synthesis, preset.arm)
    prior = prior_for(spec) if use_prior else None
    if use_prior and prior is None:
        raise InputError(
            f"--prior: no shipped decoder prior fits {levels} grids with networks {spec.synthesis} and {spec.arm} wide"
        )
    model = fit_latents(image, lam, preset, levels, seed=seed, report=report, prior=prior)
    return coded_model(model, image, lam, preset, prior, time.perf_counter() - start)


def encode_latent_images(
    images: Sequence[Tensor],
    lams: Sequence[float],
    preset: Preset,
    levels: Optional[int] = None,
    seeds: Optional[Sequence[int]] = None,
    report: Optional[Callable[[Progress], None]] = None,
) -> list[LatentCoded]:
    """The latent files of several images of one size, each at its own λ (the same image at several λ, or several
    images), trained as one stacked run (``latent_stack``; no decoder prior) and each coded and decoded back as
    ``encode_latent_image`` codes it. A file's ``seconds``: the shared training's over the members, plus its coding."""
    check_members(images, lams)
    start = time.perf_counter()
    height, width, _ = images[0].shape
    levels = default_levels(height, width) if levels is None else levels
    models = fit_latents_stacked(images, lams, preset, levels, seeds, report)
    share = (time.perf_counter() - start) / len(models)
    return [coded_model(m, image, lam, preset, None, share) for m, image, lam in zip(models, images, lams)]


def coded_model(model: LatentImage, image: Tensor, lam: float, preset: Preset, prior, seconds: float) -> LatentCoded:
    """The file of a trained model: its networks quantised at the steps that pay (or as their change from
    ``prior``), written, and decoded back from its bytes; ``seconds``: the training's, to which the coding's adds."""
    start = time.perf_counter()
    grids = integer_latents(model)
    target = np.round(image.double().numpy() * 255.0)
    if prior is None:
        arm = choose_arm(model, grids)
        synthesis_q, synthesis_bits = choose_synthesis(model, grids, target, lam)
        coded, arm_bits = [*synthesis_q, *arm.tensors()], arm.bits
    else:
        (synthesis_delta, synthesis_bits), (arm_delta, arm_bits, arm) = choose_changes(model, grids, target, lam, prior)
        coded = [*synthesis_delta, *arm_delta]
    data = pack_file(model.spec, coded, synthesis_bits, arm_bits, arm, grids, prior)
    read = read_latent_file(data, "the encoded file")
    pixels = render(read.synthesis, read.grids, read.spec)  # the decoder's pixels: decode_latent_file's steps
    parts = {name: bits for name, bits in bits_of(read, len(data)).items() if name not in STREAMS}
    seconds += time.perf_counter() - start
    return LatentCoded(data, pixels, psnr(pixels, target.astype(np.uint8)), lam, preset.name, model.spec, seconds, parts)


def preset_of(name: str) -> Preset:
    if name not in PRESETS:
        raise InputError(f"--preset {name!r}: one of {', '.join(PRESETS)}")
    return PRESETS[name]


MAX_FITS = 4  # fits a --bpp or --psnr target may take


def step_seconds(image: Tensor, preset: Preset, levels: Optional[int] = None, steps: int = 3) -> float:
    """Seconds a training step of ``preset`` takes on this image here: a few steps timed (after one to warm up)."""
    height, width, _ = image.shape
    levels = default_levels(height, width) if levels is None else levels
    probe = Preset(preset.name, 1, preset.synthesis, preset.arm, hard_fraction=0.0)
    fit_latents(image, 1e-3, probe, levels)
    start = time.perf_counter()
    fit_latents(image, 1e-3, Preset(preset.name, steps, preset.synthesis, preset.arm, hard_fraction=0.0), levels)
    return (time.perf_counter() - start) / steps


def next_lambda(lam: float, low: Optional[float], high: Optional[float]) -> float:
    """The next λ of a search whose answer lies in (low, high) (None: unbounded on that side): their geometric mean,
    or a factor of 4 beyond the one known bound.

    Example:
        >>> next_lambda(0.001, 0.001, None), next_lambda(0.001, None, 0.001), next_lambda(0.004, 0.001, 0.004)
        (0.004, 0.00025, 0.002)
    """
    if low is not None and high is not None:
        return math.sqrt(low * high)
    return lam * 4 if high is None else lam / 4


def encode_to_target(
    image: Tensor,
    kind: str,
    value: float,
    preset: Preset,
    lam: float = 1e-3,
    levels: Optional[int] = None,
    seed: int = 0,
    fits: int = MAX_FITS,
    use_prior: bool = False,
    say: Callable[[str], None] = lambda line: None,
) -> LatentCoded:
    """The best file meeting a target, by a search over λ of at most ``fits`` full encodes: for ``bpp`` the file of
    highest PSNR at most ``value`` bits per pixel, for ``psnr`` the smallest file of at least ``value`` dB. λ
    raises the rate's weight: a larger λ, a smaller file, a lower PSNR."""

    def train(lams: list[float]) -> list[LatentCoded]:
        return [encode_latent_image(image, lams[0], preset, levels, seed, use_prior=use_prior)]

    return search_targets(1, kind, value, train, lam, fits, lambda k, line: say(line))[0]


def encode_to_targets(
    images: Sequence[Tensor],
    kind: str,
    value: float,
    preset: Preset,
    lam: float = 1e-3,
    levels: Optional[int] = None,
    seed: int = 0,
    fits: int = MAX_FITS,
    say: Callable[[int, str], None] = lambda k, line: None,
) -> list[LatentCoded]:
    """``encode_to_target`` of several images of one size, each searched for its own λ, every round's encodes
    trained as one stacked run (``encode_latent_images``, each member from ``seed``); ``say(k, line)`` of image k."""

    def train(lams: list[float]) -> list[LatentCoded]:
        return encode_latent_images(images, lams, preset, levels, [seed] * len(images))

    return search_targets(len(images), kind, value, train, lam, fits, say)


def search_targets(
    count: int,
    kind: str,
    value: float,
    train: Callable[[list[float]], list[LatentCoded]],
    lam: float,
    fits: int,
    say: Callable[[int, str], None],
) -> list[LatentCoded]:
    """The λ search of ``count`` files at once: each round, ``train`` codes file k at its own λ_k; a file within the
    target narrows its λ from one side, a file outside it from the other (``next_lambda``), for ``fits`` rounds.
    Per file the best within the target (``bpp``: the highest PSNR; ``psnr``: the fewest bits); one line if a file
    has none."""
    best: list[Optional[LatentCoded]] = [None] * count
    bounds: list[list[Optional[float]]] = [[None, None] for _ in range(count)]  # the answer's λ lies between
    lams = [lam] * count
    for _ in range(fits):
        coded = train(lams)
        for k, c in enumerate(coded):
            meets = c.bpp <= value if kind == "bpp" else c.psnr >= value
            say(k, f"λ {lams[k]:.3g}: {c.bpp:.4f} bpp, {c.psnr:.2f} dB{'' if meets else ' (misses the target)'}")
            if meets and (best[k] is None or (c.psnr > best[k].psnr if kind == "bpp" else c.bpp < best[k].bpp)):
                best[k] = c
            # bpp: a file within the budget may afford a smaller λ; psnr: a file above the target may afford a larger one
            bounds[k][1 if (kind == "bpp") == meets else 0] = lams[k]
            lams[k] = next_lambda(lams[k], *bounds[k])
    for k, b in enumerate(best):
        if b is None:
            unit = "bpp" if kind == "bpp" else "dB"
            which = f" (image {k + 1} of {count})" if count > 1 else ""
            raise InputError(
                f"--{kind} {value:g}: no file of {fits} λ's met it{which} (the last: {coded[k].bpp:.4f} bpp, "
                f"{coded[k].psnr:.2f} dB); try --preset slow or another target {unit}"
            )
    return best
