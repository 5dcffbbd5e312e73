"""The network sizes an encoder chooses among, and what their files are expected to cost before any is trained.

Sizes form a ladder (``ladder``): the method's network at the widths ``WIDTHS`` (hash grids: at table sizes
2^6 … 2^18 with 8 levels and a 16-wide network), at the registry's depth for the method (``default_depth``).
Training is what costs, so only a few rungs are trained: for a budget of T bits (``bpp`` × pixels), the widest rung
whose estimated file fits at each of ``BIT_GUESSES`` bits (``rungs_for_budget``), the estimate being
P·(b − ESTIMATE_SAVING) + ESTIMATE_OVERHEAD bits for P weights at b bits (the range coder saves about half a bit a
weight on fitted networks: benchmarks/codec_entropy.py). The files themselves are chosen on their true sizes
(``inr.codec.search``). Importing this module loads no torch: ``inr-codec --help`` stands on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from inr.codec.architecture import Architecture, codec_methods, parameter_count
from inr.codec.bounds import MAX_HASH_LOG2
from inr.errors import InputError

WIDTHS = (4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512)
HASH_LOG2 = tuple(range(6, MAX_HASH_LOG2 + 1))
BIT_GUESSES = (6, 8, 10)
GUESS_BITS = 8  # a comparison's one network per rate: estimated at the middle guess (its files span every depth)
ESTIMATE_SAVING, ESTIMATE_OVERHEAD = 0.5, 480
MAX_RATE = 24.0  # bits per pixel: raw 8-bit RGB


def default_depth(method: str) -> int:
    """The depth of the method's network in the registry (the paper's MLP: 3; SIREN: 4)."""
    if method not in codec_methods():  # a 3-D-only method (positional_rotated) cannot code an image
        raise InputError(f"--method {method!r}: not a method for images; choose from {', '.join(codec_methods())}")
    from inr.methods.registry import METHODS, Setting  # the encoder's choice, not part of what a file means

    return int(METHODS[method].resolve(Setting(in_dim=2)).network.init_args.get("depth", 1))


def ladder(method: str, depth: int, seed: int = 0) -> list[Architecture]:
    """The sizes the search may train, smallest first.

    Example:
        >>> [a.label() for a in ladder("siren", 4)[:2]], ladder("hashgrid", 2)[0].label()
        (['siren 4 × 4', 'siren 4 × 6'], 'hashgrid 2 × 16, T = 2^6')
    """
    if method.startswith("hashgrid"):
        return [Architecture(method, 16, depth, seed, hash_levels=8, hash_log2=k) for k in HASH_LOG2]
    return [Architecture(method, w, depth, seed) for w in WIDTHS]


def weights_of(arch: Architecture, side: int, channels: int) -> int:
    """How many weights a rung stores."""
    return parameter_count(*arch.build(side, channels))


def estimated_bits(weights: int, bits: int) -> float:
    """P·(b − ESTIMATE_SAVING) + ESTIMATE_OVERHEAD: the file of P weights at b bits, before it exists."""
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
    if not rates or any(not 0 < r <= MAX_RATE or not math.isfinite(r) for r in rates):
        raise InputError(f"--bpp {text!r}: every rate must lie in (0, 24] bits per pixel")
    return tuple(dict.fromkeys(rates))
