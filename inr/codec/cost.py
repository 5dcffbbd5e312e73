"""What decoding a file will cost, known from its header before any of the work: the bound that refuses a file
whose network, evaluated at every pixel, would keep the decoder busy for hours.

A file is small whatever it declares: 105 bytes may name 16 layers of 1024 at 2^26 pixels, about 1.1e15
multiply-adds, days of this 2-core CPU. The work of a decode is pixels × the multiply-adds of the matrix products
one coordinate goes through (``macs_per_pixel``: torch's ``FlopCounterMode`` on one coordinate of the network the
header names, built on the meta device where its modules allow, so that nothing of its size is allocated).
Elementwise activations and hash-table look-ups are not counted: the count is the floor of the work, and the
matrix products are most of it for every network wide enough to matter. ``check_decode_work`` refuses a file past
``MAX_DECODE_WORK`` (``inr-codec decode --max-work`` raises it) with the estimate and the time it would take at this
machine's float64 matrix-product rate, measured when it refuses.
"""

from __future__ import annotations

import functools
import math
import time

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from inr.codec.architecture import Architecture
from inr.codec.bitstream import Header
from inr.errors import InputError

# A 768×512 photograph through SIREN 4 × 64 is about 4e9 multiply-adds (a second here); 1e12 is a few minutes of
# this CPU's float64 matrix products (≈ 7e9 a second, measured with 2 threads) and 250 times the largest file the
# codec's search writes for such a photograph.
MAX_DECODE_WORK = 1e12


def counted_macs(encoder: nn.Module, network: nn.Module, device: str) -> int:
    """Multiply-adds of the matrix products of one coordinate's forward pass (a product counts 2 flops)."""
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        network(encoder(torch.full((1, 2), 0.5, device=device)))
    return counter.get_total_flops() // 2


@functools.lru_cache(maxsize=64)  # a decoder given many files of one size (the encoder's search) counts it once
def macs_per_pixel(arch: Architecture, side: int, channels: int) -> int:
    """Multiply-adds per pixel of ``arch`` for an image of ``channels`` whose shorter side is ``side``.

    Built on the meta device (nothing allocated, whatever the size); a module that computes its tensors from values
    while it is built or run (a hash grid's level sizes, an MFN's filters) is built on the CPU instead, which the
    bounds of ``architecture`` keep to under a second.

    Example:
        >>> macs_per_pixel(Architecture("siren", width=16, depth=3), side=64, channels=3)  # 2·16 + 2·16·16 + 16·3
        592
    """
    try:
        with torch.device("meta"):
            return counted_macs(*arch.build(side, channels), "meta")
    except (NotImplementedError, RuntimeError):  # "Cannot copy out of meta tensor", ".item() on meta tensors"
        return counted_macs(*arch.build(side, channels), "cpu")


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
    return header.height * header.width * macs_per_pixel(header.arch, header.side, header.channels)


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
