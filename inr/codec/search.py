"""The rate–distortion search: which network size and which bit depth give the best image for a rate, the
smallest file for a quality, or the best bit depth for a size.

Sizes form a ladder (``ladder``): the method's network at the widths ``WIDTHS`` (hash grids: at table sizes
2^6 … 2^18 with 8 levels and a 16-wide network). Training is what costs, so only a few rungs are trained:
for a budget of T bits (``bpp`` × pixels), the widest rung whose estimated file fits at each of ``BIT_GUESSES`` bits,
the estimate being P·(b − ESTIMATE_SAVING) + ESTIMATE_OVERHEAD bits for P weights at b bits (the range coder saves
about half a bit a weight on fitted networks: benchmarks/codec_entropy.py). Every trained network is then encoded
for real at every bit depth of ``BITS``, per tensor and per output channel, and each file decoded and scored: the
choice is made on the files' true sizes and the decoded images' PSNR, never on the estimate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from inr.codec.architecture import MAX_HASH_LOG2, Architecture, parameter_count
from inr.codec.coding import decode, encode_network
from inr.codec.fit import Fitted
from inr.codec.init import Init
from inr.errors import InputError
from inr.metrics import psnr

WIDTHS = (4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512)
HASH_LOG2 = tuple(range(6, MAX_HASH_LOG2 + 1))
BITS = tuple(range(4, 17))
BIT_GUESSES = (6, 8, 10)
GUESS_BITS = 8  # a comparison's one network per rate: estimated at the middle guess (its files span every depth)
ESTIMATE_SAVING, ESTIMATE_OVERHEAD = 0.5, 480
# --params and --bits unset: the smallest file within this much of the best PSNR over the bit depths
KNEE_DB = 0.1


def ladder(method: str, depth: int, seed: int = 0) -> list[Architecture]:
    """The sizes the search may train, smallest first."""
    if method.startswith("hashgrid"):
        return [Architecture(method, 16, depth, seed, hash_levels=8, hash_log2=k) for k in HASH_LOG2]
    return [Architecture(method, w, depth, seed) for w in WIDTHS]


def weights_of(arch: Architecture, side: int, channels: int) -> int:
    """How many weights a rung stores."""
    return parameter_count(*arch.build(side, channels))


def estimated_bits(weights: int, bits: int) -> float:
    return weights * (bits - ESTIMATE_SAVING) + ESTIMATE_OVERHEAD


def rungs_for_budget(rungs: Sequence[Architecture], budget: float, side: int, channels: int) -> list[Architecture]:
    """For each guessed bit depth, the largest rung whose estimated file fits ``budget`` bits (distinct, in ladder
    order); refused in one line when not even the smallest fits at the smallest guess."""
    counts = [weights_of(a, side, channels) for a in rungs]
    chosen = []
    for bits in BIT_GUESSES:
        fitting = [a for a, n in zip(rungs, counts) if estimated_bits(n, bits) <= budget]
        if fitting and fitting[-1] not in chosen:
            chosen.append(fitting[-1])
    if not chosen:
        smallest = estimated_bits(counts[0], BIT_GUESSES[0])
        raise InputError(f"a budget of {budget:.0f} bits is below the smallest network's file (about {smallest:.0f} bits)")
    return sorted(chosen, key=rungs.index)


def size_for_budget(rungs: Sequence[Architecture], budget: float, side: int, channels: int) -> Architecture:
    """The one network a comparison trains for ``budget`` bits: the largest rung whose file, estimated at
    ``GUESS_BITS``, fits; below every such rung, the smallest that fits at the smallest guess."""
    fitting = [a for a in rungs if estimated_bits(weights_of(a, side, channels), GUESS_BITS) <= budget]
    return fitting[-1] if fitting else rungs_for_budget(rungs, budget, side, channels)[0]


@dataclass
class Choice:
    """One file: its network, bit depth and quantiser, bytes, decoded pixels and PSNR against the image."""

    arch: Architecture
    bits: int
    per_channel: bool
    data: bytes
    pixels: Optional[np.ndarray]
    psnr: float
    fit_seconds: float = 0.0
    init: Optional[Init] = None  # the learned init the file is coded against

    @property
    def size_bits(self) -> int:
        return 8 * len(self.data)


def choices(
    arch: Architecture,
    fitted: Fitted,
    image: torch.Tensor,
    bits: Iterable[int] = BITS,
    per_channel: Iterable[bool] = (False, True),
    budget: Optional[float] = None,
    keep: Optional[int] = None,
    init: Optional[Init] = None,
) -> list[Choice]:
    """The files of one fitted network over bit depths and quantisers, decoded and scored (PSNR of the 8-bit
    decoded image against ``image`` (H, W, C) in [0, 1]). Encoding is cheap and decoding is not: with a
    ``budget`` (bits) only the files within it are decoded, and with ``keep`` only the ``keep`` deepest bit depths
    of each quantiser among them (a deeper bit depth quantises the same network more finely). ``init``: code the
    change from this learned init."""
    shape = tuple(image.shape)
    files = [
        (b, pc, encode_network(fitted.encoder, fitted.network, arch, shape, b, pc, init))
        for pc in per_channel
        for b in sorted(bits)
    ]
    if budget is not None:
        files = [f for f in files if 8 * len(f[2]) <= budget]
    if keep is not None:
        files = [f for f in files if sum(1 for g in files if g[1] == f[1] and g[0] > f[0]) < keep]
    return [score(Choice(arch, b, pc, data, None, float("nan"), fitted.seconds, init), image) for b, pc, data in files]


def score(choice: Choice, image: torch.Tensor) -> Choice:
    """The choice with its file decoded and its PSNR against ``image``."""
    choice.pixels = decode(choice.data, init=choice.init, max_work=None)  # its own file: the fit paid for far more
    choice.psnr = psnr(torch.from_numpy(choice.pixels.astype(np.float64) / 255.0), image.to(torch.float64))
    return choice


def first_reaching(
    arch: Architecture,
    fitted: Fitted,
    image: torch.Tensor,
    target: float,
    bits: Iterable[int] = BITS,
    init: Optional[Init] = None,
) -> Optional[Choice]:
    """The smallest file of one fitted network whose decoded PSNR reaches ``target``: per quantiser, bit depths
    are decoded from the shallowest up to the first that reaches it."""
    found = []
    for pc in (False, True):
        for b in sorted(bits):
            (choice,) = choices(arch, fitted, image, [b], [pc], init=init)
            if choice.psnr >= target:
                found.append(choice)
                break
    return smallest_reaching(found, target)


def best_under(options: Iterable[Choice], budget: float) -> Optional[Choice]:
    """The best PSNR among the files of at most ``budget`` bits (the smaller file on a tie), or None."""
    fitting = [c for c in options if c.size_bits <= budget]
    return max(fitting, key=lambda c: (c.psnr, -c.size_bits)) if fitting else None


def smallest_reaching(options: Iterable[Choice], target: float) -> Optional[Choice]:
    """The smallest file whose decoded PSNR is at least ``target`` dB (the better one on a tie), or None."""
    reaching = [c for c in options if c.psnr >= target]
    return min(reaching, key=lambda c: (c.size_bits, -c.psnr)) if reaching else None


def knee(options: Sequence[Choice], tolerance: float = KNEE_DB) -> Choice:
    """The smallest file within ``tolerance`` dB of the best PSNR among ``options``."""
    best = max(c.psnr for c in options)
    return smallest_reaching(options, best - tolerance)


def parse_rates(text: str) -> tuple[float, ...]:
    """``0.1,0.3`` -> (0.1, 0.3), each in (0, 24].

    Example:
        >>> parse_rates("0.1, 0.3,1")
        (0.1, 0.3, 1.0)
    """
    try:
        rates = tuple(float(r) for r in text.split(",") if r.strip())
    except ValueError:
        raise InputError(f"--bpp {text!r}: comma-separated numbers, e.g. 0.1,0.3,1") from None
    if not rates or any(not 0 < r <= 24 or not np.isfinite(r) for r in rates):
        raise InputError(f"--bpp {text!r}: every rate must lie in (0, 24] bits per pixel")
    return tuple(dict.fromkeys(rates))
