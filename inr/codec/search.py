"""The rate–distortion search: which network size and which bit depth give the best image for a rate, the
smallest file for a quality, or the best bit depth for a size.

The sizes and their estimated files are ``inr.codec.sizes``'s (the ladder, the rungs a budget trains). Every trained
network is encoded for real at every bit depth of ``BITS``, per tensor and per output channel, and each file decoded
and scored: the choice is made on the files' true sizes and the decoded images' PSNR, never on the estimate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from inr.codec.architecture import Architecture
from inr.codec.coding import decode, encode_network
from inr.codec.fit import Fitted
from inr.codec.init import Init
from inr.codec.sizes import ladder, parse_rates, size_for_budget  # noqa: F401 (the comparison's names for them)
from inr.metrics import psnr

BITS = tuple(range(4, 17))
# --params and --bits unset: the smallest file within this much of the best PSNR over the bit depths
KNEE_DB = 0.1


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
