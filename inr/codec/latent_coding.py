"""Range coding of the latent grids under the integer entropy model, wave by wave, the decoder of a latent file and
where its bits go (``file_bits``).

Each latent ŷ is coded as the symbol d = ŷ − c ∈ −K … K under the table row P[s, f] (``laplace.table``) of its
predicted (c, f, s) (``latent_arm.FixedPoint.predict``). The encoder knows every latent, so it predicts all of them
at once and codes them in the decoder's order: grid by grid, wave by wave (``latent_arm.waves``). The decoder
fills each grid one wave at a time: the contexts of a wave's latents are all decoded, so one batched prediction
and one call of the range decoder decode the whole wave. Predictions are integers from integers, the tables
integers, the coder's models built from them by exact arithmetic: the same file decodes to the same latents on
every machine, thread count and process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from inr.codec import entropy
from inr.codec.laplace import table
from inr.codec.latent_arm import CONTEXT, PAD_SIDE, PAD_TOP, FixedPoint, contexts, wave_order, waves
from inr.codec.latent_file import LatentBody, LatentHeader, pack, unpack
from inr.codec.latent_model import Spec, Synthesis, render
from inr.codec.latent_prior import Prior, prior_named
from inr.errors import InputError, check_memory
from inr.extras import require

CODER_PRECISION = 24  # constriction's Categorical: probabilities in 24-bit fixed point
ENCODE_CHUNK = 1 << 15  # symbols per call of the range encoder: bounds the probability rows held at once
OFFSET_ROWS = np.array([di for di, _ in CONTEXT])
OFFSET_COLS = np.array([dj for _, dj in CONTEXT])


def _categorical():
    constriction = require("constriction", extra="codec", what="the codec's range coder")
    return constriction, constriction.stream.model.Categorical(perfect=False)


def predictions(model: FixedPoint, grids: Sequence[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(c, f, s) of every latent of every grid, flat in raster order (the encoder's view: all contexts known)."""
    return [model.predict(contexts(torch.from_numpy(g.astype(np.int64))).numpy()) for g in grids]


def latent_bound(grids: Sequence[np.ndarray], predicted: Sequence[tuple[np.ndarray, ...]]) -> int:
    """K = max |ŷ − c| over every latent."""
    return max(int(np.abs(g.reshape(-1) - c).max(initial=0)) for g, (c, _, _) in zip(grids, predicted))


def ideal_bits(grids: Sequence[np.ndarray], predicted: Sequence[tuple[np.ndarray, ...]], bound: int) -> float:
    """Σ −log2 P(ŷ) under the integer tables, each probability floored at the coder's smallest share 2^−24 (constriction's
    precision): what the range coder spends, to within its fixed-point rounding."""
    probabilities = table(bound)
    totals = probabilities.sum(axis=-1).astype(np.float64)
    out = 0.0
    for g, (c, f, s) in zip(grids, predicted):
        p = probabilities[s, f, g.reshape(-1) - c + bound].astype(np.float64)
        out += float(np.sum(np.log2(totals[s, f]) - np.log2(np.maximum(p, totals[s, f] * 2.0**-CODER_PRECISION))))
    return out


def encode_latents(grids: Sequence[np.ndarray], model: FixedPoint) -> tuple[bytes, int]:
    """The coded latents and K: every grid in the decoder's order."""
    constriction, categorical = _categorical()
    predicted = predictions(model, grids)
    # at least two symbols: the range coder's categorical refuses a one-symbol alphabet (every latent predicted exactly)
    bound = max(1, latent_bound(grids, predicted))
    if bound > 1023:
        raise InputError(f"a latent lies {bound} from its predicted mean; a file holds at most 1023")
    probabilities = table(bound).astype(np.float64)
    coder = constriction.stream.queue.RangeEncoder()
    for g, (c, f, s) in zip(grids, predicted):
        order = wave_order(*g.shape)
        symbols = (g.reshape(-1) - c + bound)[order].astype(np.int32)
        f, s = f[order], s[order]
        for start in range(0, len(order), ENCODE_CHUNK):
            part = slice(start, start + ENCODE_CHUNK)
            coder.encode(symbols[part], categorical, probabilities[s[part], f[part]])
    return coder.get_compressed().astype("<u4").tobytes(), bound


def decode_latents(data: bytes, model: FixedPoint, shapes: Sequence[tuple[int, int]], bound: int) -> list[np.ndarray]:
    """The latent grids (int64) from ``encode_latents``'s bytes; a stream no encoder under this model writes is one
    ``InputError``."""
    constriction, categorical = _categorical()
    if len(data) % entropy.WORD_BYTES:
        raise InputError(f"the coded latents take {len(data)} bytes, not a whole number of {entropy.WORD_BYTES}-byte words")
    probabilities = table(bound).astype(np.float64)
    decoder = constriction.stream.queue.RangeDecoder(np.frombuffer(data, dtype="<u4").astype(np.uint32))
    grids = []
    try:
        for h, w in shapes:
            padded = np.zeros((h + PAD_TOP, w + 2 * PAD_SIDE), dtype=np.int64)
            for rows, cols in waves(h, w):
                r, k = rows + PAD_TOP, cols + PAD_SIDE
                context = padded[r[:, None] + OFFSET_ROWS, k[:, None] + OFFSET_COLS]  # (n, 12)
                c, f, s = model.predict(context)
                symbols = np.asarray(decoder.decode(categorical, probabilities[s, f]), dtype=np.int64)
                padded[r, k] = c + symbols - bound
            grids.append(padded[PAD_TOP:, PAD_SIDE : PAD_SIDE + w].copy())
    except AssertionError:  # constriction's word for a stream no encoder under these models writes
        raise InputError("the coded latents are damaged: the range decoder found words no encoder writes") from None
    if not decoder.maybe_exhausted():
        raise InputError("the coded latents hold more data than the grids need")
    return grids


def split_weights(spec: Spec, tensors: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The stored integer tensors as (synthesis's, entropy model's)."""
    n = len(spec.synthesis_shapes())
    return list(tensors[:n]), list(tensors[n:])


def synthesis_of(spec: Spec, integers: Sequence[np.ndarray], bits: int) -> Synthesis:
    """The synthesis with weights q·2^−b (float64: exact for |q| < 2^53)."""
    net = Synthesis(spec.levels, spec.synthesis, spec.channels).double()
    with torch.no_grad():
        for target, q in zip(net.stored(), integers):
            target.copy_(torch.from_numpy(q.astype(np.float64).reshape(target.shape) * 2.0**-bits))
    return net.eval()


def decode_work(spec: Spec) -> int:
    """Multiply-adds of a decode: the synthesis and upsampling at every pixel, the entropy model at every latent."""
    n, hidden = len(CONTEXT), spec.arm
    return spec.height * spec.width * (spec.synthesis_macs() + 3 * spec.levels) + spec.latent_count() * (
        n * hidden + hidden * hidden + 2 * hidden
    )


@dataclass(frozen=True)
class LatentRead:
    """What a latent file holds, read and checked: its header and body, the weights' integers as the file codes
    them (``coded``: before a decoder prior is applied, the synthesis's then the entropy model's), the synthesis
    built from them, the integer entropy model and the decoded latent grids (int64, level 0 the finest first)."""

    header: LatentHeader
    body: LatentBody
    coded: list[np.ndarray]
    synthesis: Synthesis
    arm: FixedPoint
    grids: list[np.ndarray]

    @property
    def spec(self) -> Spec:
        return self.header.spec


def read_latent_file(data: bytes, source: str = "file", max_work: Optional[float] = None) -> LatentRead:
    """A latent file read up to its pixels: unpacked, its decode's work and memory checked, its weights decoded
    (and a decoder prior it names applied), its entropy model built and its grids decoded; every problem one
    ``InputError``. ``max_work``: the multiply-adds a decode may take (None: any)."""
    header, body = unpack(data, source)
    spec = header.spec
    work = decode_work(spec)
    if max_work is not None and work > max_work:
        raise InputError(f"{source}: decoding it takes about {work:.2g} multiply-adds, more than --max-work {max_work:.2g}")
    # the grids (int64 plus the float64 features of a band) and the output: refused before anything is built
    check_memory(
        f"{source}: decoding {spec.width}×{spec.height}", spec.latent_count() * 16 + spec.height * spec.width * spec.channels * 9
    )
    shapes = spec.stored_shapes()
    try:
        flat = entropy.decode(body.weights, [int(np.prod(s)) for s in shapes], header.weight_bound, list(body.scale_codes))
        coded = [q.astype(np.int64) for q in flat]
        integers = coded
        synthesis_bits, arm_bits = header.synthesis_bits, header.arm_bits
        if header.prior is not None:  # the change from the shipped prior the file names, at its steps or coarser
            prior = prior_named(header.prior, "the file")
            if not prior.fits(spec) or synthesis_bits > prior.synthesis_bits or arm_bits > prior.arm_bits:
                raise InputError(f"its networks are not those of the decoder prior {header.prior.hex()} it names")
            integers = from_prior(coded, prior, synthesis_bits, arm_bits, spec)
            synthesis_bits, arm_bits = prior.synthesis_bits, prior.arm_bits
        synthesis_q, arm_q = split_weights(spec, integers)
        arm = FixedPoint.from_tensors(arm_q, spec.arm, arm_bits)
        grids = decode_latents(body.latents, arm, spec.level_shapes(), header.latent_bound)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    return LatentRead(header, body, coded, synthesis_of(spec, synthesis_q, synthesis_bits), arm, grids)


def decode_latent_file(data: bytes, source: str = "file", max_work: Optional[float] = None) -> np.ndarray:
    """A latent file's pixels, uint8 (H, W, C); ``max_work``: the multiply-adds a decode may take (None: any)."""
    read = read_latent_file(data, source, max_work)
    return render(read.synthesis, read.grids, read.spec)


STREAMS = ("latent stream", "weight stream")  # file_bits' byte counts of the two range-coded payloads


def file_bits(data: bytes, source: str = "file", max_work: Optional[float] = None) -> dict[str, float]:
    """Where a latent file's bits go, in bits, read from the file alone (``read_latent_file``: no encode).

    Two views of the same bytes:

    - estimates of what each part costs: ``level 0`` … ``level L−1`` (level 0 the finest, full-resolution grid,
      in the order the file stores them), each grid's Σ −log2 P(ŷ) under the file's own integer tables
      (``ideal_bits``); ``synthesis weights`` and ``entropy-model weights``, each network's coded integers (the
      change from the prior for a file coded against one) range-coded alone as a file codes them
      (``weight_bits``);
    - counts of the file's bytes × 8: ``latent stream`` and ``weight stream`` (the two range-coded payloads),
      ``scale codes`` (one byte per stored tensor), ``header and CRC`` (the rest: the fixed header, the two
      4-byte payload lengths, the CRC-32).

    ``latent stream`` + ``weight stream`` + ``scale codes`` + ``header and CRC`` = 8·len(data) exactly; the levels
    sum to the latent stream, and the two networks' to the weight stream, to within the range coder's rounding
    (a 32-bit word or so per stream). Leaving out ``STREAMS``, the rest is the estimate that sums to the file.
    """
    return bits_of(read_latent_file(data, source, max_work), len(data))


def bits_of(read: LatentRead, size: int) -> dict[str, float]:
    """``file_bits`` of a file of ``size`` bytes already read."""
    header, body = read.header, read.body
    predicted = predictions(read.arm, read.grids)
    bits: dict[str, float] = {
        f"level {level}": ideal_bits([g], [p], header.latent_bound) for level, (g, p) in enumerate(zip(read.grids, predicted))
    }
    synthesis_q, arm_q = split_weights(read.spec, read.coded)
    bits["synthesis weights"] = weight_bits(synthesis_q)
    bits["entropy-model weights"] = weight_bits(arm_q)
    bits["latent stream"] = 8 * len(body.latents)
    bits["weight stream"] = 8 * len(body.weights)
    bits["scale codes"] = 8 * len(body.scale_codes)
    bits["header and CRC"] = 8 * (size - len(body.latents) - len(body.weights) - len(body.scale_codes))
    return bits


def encode_weights(tensors: Sequence[np.ndarray]) -> tuple[bytes, bytes, int]:
    """(scale codes, coded weights, bound) of integer tensors under one quantised Gaussian each (``entropy``)."""
    flat = [np.asarray(t, dtype=np.int64).reshape(-1) for t in tensors]
    bound = max(1, max(int(np.abs(t).max(initial=0)) for t in flat))
    if bound > 32767:
        raise InputError(f"a weight of {bound} steps; a file holds at most 32767")
    codes = [entropy.scale_code(t) for t in flat]
    return bytes(codes), entropy.encode(flat, bound, codes), bound


def weight_bits(tensors: Sequence[np.ndarray]) -> int:
    """The bits of integer tensors coded as a file codes them (the range coder's words)."""
    return 8 * len(encode_weights(tensors)[1])


def from_prior(coded: Sequence[np.ndarray], prior: Prior, synthesis_bits: int, arm_bits: int, spec: Spec) -> list[np.ndarray]:
    """The weights' integers at the prior's steps from a file's changes q at coarser steps 2^−b ≥ the prior's:
    w = p + q·2^(B − b) for the synthesis (B, b: the prior's and the file's synthesis bits) and the entropy model
    (its own B, b) alike, integer arithmetic."""
    n = len(spec.synthesis_shapes())
    shifts = [prior.synthesis_bits - synthesis_bits] * n + [prior.arm_bits - arm_bits] * (len(coded) - n)
    return [
        p.reshape(-1) + (np.asarray(q, dtype=np.int64).reshape(-1) << shift) for q, p, shift in zip(coded, prior.tensors, shifts)
    ]


def pack_file(
    spec: Spec,
    coded: Sequence[np.ndarray],
    synthesis_bits: int,
    arm_bits: int,
    arm: FixedPoint,
    grids: Sequence[np.ndarray],
    prior: Optional[Prior] = None,
) -> bytes:
    """The latent file of the weights' integers ``coded`` (the synthesis's then the entropy model's: the weights
    × 2^b, or with a ``prior`` their change from it at steps 2^−b, ``from_prior``), the integer entropy model
    ``arm`` the latents are coded under, and the latent grids."""
    codes, weights, weight_bound = encode_weights(coded)
    latents, bound = encode_latents(grids, arm)
    header = LatentHeader(spec, arm_bits, synthesis_bits, weight_bound, bound, prior.digest if prior is not None else None)
    return pack(header, LatentBody(codes, weights, latents))
