"""Entropy coding of quantised weights: constriction's range coder (``stream.queue.RangeEncoder``) with one
quantised Gaussian per tensor.

Each tensor's integers q ∈ {−L … L} are coded under N(0, σ²) integrated over the unit bins of −L … L (constriction's
``QuantizedGaussian``), σ = the tensor's root mean square √(mean q²) — the maximum-likelihood σ of a centred
Gaussian — stored in one byte as a point of a logarithmic grid, σ = 2^((e − SCALE_OFFSET) / SCALE_PER_OCTAVE).
The tensors follow one another in one range-coded stream of 32-bit words, written little-endian.

Why this model and this coder: benchmarks/codec_entropy.py codes the quantised weights of fitted networks with
it, with a Laplace and a Cauchy model, with a categorical model whose histogram is sent along, and with zlib and
lzma as the floor; the Gaussian was the smallest at every bit depth measured (benchmarks/README.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from inr.errors import InputError
from inr.extras import require

# σ = 2^((e − 60) / 12): 2^−5 ≈ 0.03 … 2^16.25, twelve codes per octave (a σ off by up to 3 % costs < 0.001 bits)
SCALE_PER_OCTAVE, SCALE_OFFSET = 12, 60
WORD_BYTES = 4  # the range coder emits 32-bit words


def scale_value(code: int) -> float:
    """σ(e) = 2^((e − 60) / 12).

    Example:
        >>> scale_value(60), scale_value(72)
        (1.0, 2.0)
    """
    return 2.0 ** ((int(code) - SCALE_OFFSET) / SCALE_PER_OCTAVE)


def scale_code(q: np.ndarray) -> int:
    """The byte code of the grid point nearest (in log scale) to q's root mean square.

    Example:
        >>> scale_code(np.array([2, -2, 2, -2]))
        72
    """
    rms = math.sqrt(float(np.mean(np.square(q, dtype=np.float64)))) if q.size else 0.0
    code = round(math.log2(max(rms, scale_value(0))) * SCALE_PER_OCTAVE) + SCALE_OFFSET
    return int(min(max(code, 0), 255))


def _model(bound: int, code: int):
    constriction = require("constriction", extra="codec", what="the codec's range coder")

    return constriction.stream.model.QuantizedGaussian(-bound, bound, 0.0, scale_value(code))


def encode(tensors: Sequence[np.ndarray], bound: int, codes: Sequence[int]) -> bytes:
    """Range-code integer arrays (values in −bound … bound) one after another, tensor i under σ(codes[i]).

    Example:
        >>> q = [np.array([0, 1, -1, 3]), np.array([5, -5])]
        >>> data = encode(q, 7, [scale_code(t) for t in q])
        >>> [t.tolist() for t in decode(data, [4, 2], 7, [scale_code(t) for t in q])]
        [[0, 1, -1, 3], [5, -5]]
    """
    constriction = require("constriction", extra="codec", what="encoding with the codec")

    coder = constriction.stream.queue.RangeEncoder()
    for q, code in zip(tensors, codes):
        if q.size:
            coder.encode(np.ascontiguousarray(q, dtype=np.int32).ravel(), _model(bound, code))
    return coder.get_compressed().astype("<u4").tobytes()


def decode(data: bytes, sizes: Sequence[int], bound: int, codes: Sequence[int]) -> list[np.ndarray]:
    """The integer arrays (flat, int32) of ``sizes`` elements from ``encode``'s bytes; refuses a stream that is not
    a whole number of words or holds words beyond the last tensor's (beyond the one word the decoder's state reads
    ahead: a single appended word is caught by the file's declared length and CRC, not here), and a stream the
    decoder cannot read under these models (a file damaged behind a recomputed CRC: its weights, or a network size
    that gives the payload other models)."""
    constriction = require("constriction", extra="codec", what="decoding with the codec")

    if len(data) % WORD_BYTES:
        raise InputError(f"the coded weights take {len(data)} bytes, not a whole number of {WORD_BYTES}-byte words")
    decoder = constriction.stream.queue.RangeDecoder(np.frombuffer(data, dtype="<u4").astype(np.uint32))
    try:
        out = [
            np.asarray(decoder.decode(_model(bound, code), n), dtype=np.int32) if n else np.zeros(0, np.int32)
            for n, code in zip(sizes, codes)
        ]
    except AssertionError:  # constriction's word for a stream no encoder under these models writes
        raise InputError("the coded weights are damaged: the range decoder found words no encoder writes") from None
    if not decoder.maybe_exhausted():
        raise InputError("the coded weights hold more data than the network's weights need")
    return out
