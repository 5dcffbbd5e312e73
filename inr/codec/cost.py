"""What decoding a file will cost, known from its header before any of the work: the bound that refuses a file
whose network, evaluated at every pixel, would keep the decoder busy for hours.

A file is small whatever it declares: 105 bytes may name 16 layers of 1024 at 2^26 pixels, about 1.1e15
multiply-adds, days of this 2-core CPU. The work of a decode is pixels × the multiply-adds of the matrix products
one coordinate goes through (``macs_per_pixel``: ``Products`` counts them as one coordinate goes through the network
the header names). Elementwise activations and hash-table look-ups are not counted: the count is the floor of the
work, and the matrix products are most of it for every network wide enough to matter. ``check_decode_work``
refuses a file past ``MAX_DECODE_WORK`` (``inr.codec.bounds``; ``inr-codec decode --max-work`` raises it) with the
estimate and the time it would take at this machine's float64 matrix-product rate, measured when it refuses.

Why not torch's ``FlopCounterMode``, which counts the same (tests/codec/test_cost.py checks they agree on every
network of the table): entering it imports ``torch._dynamo`` and sympy, about 900 modules and more CPU seconds than
the rest of a small file's decode; so does any arithmetic on the meta device, which is therefore used only for a
network too large to build quickly on the CPU (``META_ABOVE``).
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from inr.codec.architecture import Architecture
from inr.codec.bitstream import Header
from inr.codec.bounds import MAX_DECODE_WORK
from inr.codec.networks import NEWEST
from inr.errors import InputError

# the matrix products the networks' forward passes make (``nn.Linear`` calls F.linear; the Fourier features, BACON's
# and MFN's filters use @)
PRODUCTS = frozenset(
    {F.linear, torch.matmul, torch.mm, torch.bmm, Tensor.__matmul__, Tensor.__rmatmul__, Tensor.matmul, Tensor.mm, Tensor.bmm}
)
# width² × depth of a file's network above which it is counted on the meta device: below, building it on the CPU
# (initialisation included) takes well under a second here; above, the meta device allocates nothing, at the price
# of the import above (seconds, once), which a file that large is worth
META_ABOVE = 2**22


class Products(TorchFunctionMode):
    """Counts the multiply-adds of the matrix products run under it: each product's output elements × the length of
    its contracted axis (F.linear of (…, k) by an (n, k) weight: rows · n · k; a @ b likewise).

    Example:
        >>> with Products() as counted:
        ...     _ = nn.Linear(3, 4)(torch.zeros(5, 3)) @ torch.zeros(4, 2)
        >>> counted.macs  # 5·4·3 + 5·2·4
        100
    """

    def __init__(self) -> None:
        super().__init__()
        self.macs = 0

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func in PRODUCTS:
            first = args[1] if func is Tensor.__rmatmul__ else args[0]
            self.macs += out.numel() * first.shape[-1]
        return out


def counted_macs(encoder: nn.Module, network: nn.Module, device: str) -> int:
    """Multiply-adds of the matrix products of one coordinate's forward pass."""
    with Products() as counted, torch.no_grad():
        network(encoder(torch.full((1, 2), 0.5, device=device)))
    return counted.macs


@functools.lru_cache(maxsize=64)  # a decoder given many files of one size (the encoder's search) counts it once
def macs_per_pixel(arch: Architecture, side: int, channels: int, version: int = NEWEST) -> int:
    """Multiply-adds per pixel of ``arch`` (as format ``version`` builds it) for an image of ``channels`` whose
    shorter side is ``side``.

    Built on the CPU (the global random state left as it was), or for a network larger than ``META_ABOVE`` on the
    meta device (nothing allocated, whatever the size), unless its modules compute tensors from values while they
    are built or run (a hash grid's level sizes, an MFN's filters): those are built on the CPU, which the bounds of
    ``architecture`` keep to seconds.

    Example:
        >>> macs_per_pixel(Architecture("siren", width=16, depth=3), side=64, channels=3)  # 2·16 + 2·16·16 + 16·3
        592
    """
    if arch.width * arch.width * arch.depth > META_ABOVE:
        try:
            with torch.device("meta"):
                return counted_macs(*arch.build(side, channels, version), "meta")
        except (NotImplementedError, RuntimeError):  # "Cannot copy out of meta tensor", ".item() on meta tensors"
            pass
    with torch.random.fork_rng(devices=[]):
        return counted_macs(*arch.build(side, channels, version), "cpu")


def matmul_rate(size: int = 256, rows: int = 4096) -> float:
    """Multiply-adds a second of this machine's float64 matrix products at a layer's shape (the decoder's
    precision and chunked layout), after one warm-up product."""
    a = torch.rand(rows, size, dtype=torch.float64)
    b = torch.rand(size, size, dtype=torch.float64)
    a @ b
    start = time.perf_counter()
    a @ b
    return rows * size * size / max(time.perf_counter() - start, 1e-9)


def decode_work(header: Header) -> int:
    """The multiply-adds of decoding a file with this header: pixels × ``macs_per_pixel``."""
    return header.height * header.width * macs_per_pixel(header.arch, header.side, header.channels, header.version)


def check_decode_work(header: Header, source: str, max_work: float = MAX_DECODE_WORK) -> None:
    """Refuse, before the network is built, a file whose decode takes more than ``max_work`` multiply-adds: one line
    with the estimate, the time it means here and the option that raises the bound."""
    work = decode_work(header)
    if work <= max_work:
        return
    from inr.io.progress import format_seconds

    raise InputError(
        f"{source}: decoding {header.width}×{header.height} pixels through {header.arch.label()} takes an estimated "
        f"{work:.2g} multiply-adds (about {format_seconds(work / matmul_rate())} on this machine), more than the bound "
        f"of {max_work:.2g}; give --max-work 1e{math.ceil(math.log10(work))} to decode it anyway"
    )
