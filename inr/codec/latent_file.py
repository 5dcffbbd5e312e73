"""The latent codec's file: a versioned header, the entropy-model scales of the stored weights, the range-coded
weights, the range-coded latents and a CRC-32; ``pack`` writes it, ``unpack`` reads it back with every size checked
before anything is allocated.

Layout of version 1 (integers unsigned, little-endian; docs/codec.md has the same table):

    magic       4   b"\\x89ILG"
    version     1   1
    channels    1   1 (gray) or 3 (RGB): 8-bit values
    height      2   2 … 16384
    width       2   2 … 16384
    levels      1   L, 1 … 12 latent grids (each ⌈H/2^l⌉ × ⌈W/2^l⌉, at least 1 × 1)
    synthesis   1   n, the synthesis's width, 1 … 64 (``latent_model.Spec``)
    arm         1   the entropy model's width, 1 … 64 (``latent_arm``)
    arm bits    1   F, 1 … 14: its weights are integers × 2^−F, and so is every activation (fixed point); with a
                    prior, the steps 2^−F of the change from the prior's (F at most the prior's)
    synth bits  1   the synthesis's weights are integers × 2^−b, b 0 … 20 (with a prior: of the change, as above)
    prior       1+d 0: the weights are coded as they are; 1: as their change from the shipped decoder prior named by
                    the next d = 8 bytes (``latent_prior.digest``), whose steps the two bits fields then repeat
    weight max  2   the largest |integer| among the stored weights, 1 … 32767
    latent max  2   K, the largest |ŷ − c| of a latent from its predicted integer mean, 1 … 1023 (at least 1: two symbols)
    scales      T   one byte per stored tensor (``entropy.scale_value``), T from the widths (16 tensors)
    weights     4+P their length P, then the range coder's 32-bit words
    latents     4+Q their length Q, then the range coder's 32-bit words
    crc         4   CRC-32 of every byte before it
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Optional

from inr.codec.bitstream import CRC_BYTES, Reader, check_image
from inr.codec.bounds import MAX_FILE_BYTES
from inr.codec.latent_model import Spec
from inr.errors import InputError

MAGIC = b"\x89ILG"
VERSION = 1
READABLE = (1,)
MAX_LEVELS, MAX_WIDTH = 12, 64
ARM_BITS = (1, 14)
SYNTHESIS_BITS = (0, 20)
MAX_WEIGHT, MAX_LATENT = 32767, 1023
NO_PRIOR, WITH_PRIOR = 0, 1
PRIOR_DIGEST_BYTES = 8


@dataclass(frozen=True)
class LatentHeader:
    """What the fixed part of a latent file says."""

    spec: Spec
    arm_bits: int
    synthesis_bits: int
    weight_bound: int
    latent_bound: int
    prior: Optional[bytes] = None  # the digest of the decoder prior the weights are coded against
    version: int = VERSION

    def check(self, source: str) -> None:
        s = self.spec
        check_image(source, s.channels, s.height, s.width)
        checks = (
            ("latent levels", s.levels, 1, MAX_LEVELS),
            ("synthesis width", s.synthesis, 1, MAX_WIDTH),
            ("entropy-model width", s.arm, 1, MAX_WIDTH),
            ("entropy-model bits", self.arm_bits, *ARM_BITS),
            ("synthesis bits", self.synthesis_bits, *SYNTHESIS_BITS),
            ("largest weight", self.weight_bound, 1, MAX_WEIGHT),
            ("largest latent residual", self.latent_bound, 1, MAX_LATENT),
        )
        for name, value, low, high in checks:
            if not low <= value <= high:
                raise InputError(f"{source}: {name} {value} outside {low}…{high}")
        if self.version not in READABLE:
            raise InputError(f"{source}: latent format version {self.version}; this inr reads {READABLE}")
        if self.prior is not None and len(self.prior) != PRIOR_DIGEST_BYTES:
            raise InputError(f"{source}: a decoder prior is named by {PRIOR_DIGEST_BYTES} bytes")


@dataclass(frozen=True)
class LatentBody:
    """The variable part: one scale code per stored tensor, the coded weights, the coded latents."""

    scale_codes: bytes
    weights: bytes
    latents: bytes


def pack(header: LatentHeader, body: LatentBody) -> bytes:
    """The file's bytes.

    Example:
        >>> h = LatentHeader(Spec(4, 6, 3, 2, 8, 8), 8, 10, 100, 5)
        >>> data = pack(h, LatentBody(bytes(16), b"\\x00" * 8, b"\\x01" * 4))
        >>> len(data), unpack(data)[0] == h
        (60, True)
    """
    header.check("pack")
    s = header.spec
    if len(body.scale_codes) != len(s.stored_shapes()):
        raise ValueError(f"{len(body.scale_codes)} scale codes for {len(s.stored_shapes())} tensors")
    out = bytearray(MAGIC)
    out += struct.pack("<BBHH", header.version, s.channels, s.height, s.width)
    out += struct.pack("<BBBBB", s.levels, s.synthesis, s.arm, header.arm_bits, header.synthesis_bits)
    out += struct.pack("<B", NO_PRIOR if header.prior is None else WITH_PRIOR) + (header.prior or b"")
    out += struct.pack("<HH", header.weight_bound, header.latent_bound)
    out += body.scale_codes
    out += struct.pack("<I", len(body.weights)) + body.weights
    out += struct.pack("<I", len(body.latents)) + body.latents
    out += struct.pack("<I", zlib.crc32(out))
    return bytes(out)


def is_latent_file(data: bytes) -> bool:
    return data[: len(MAGIC)] == MAGIC


def payload(r: Reader, what: str, last: bool) -> bytes:
    """A length-prefixed payload; the last one must end exactly where the CRC begins."""
    (length,) = r.unpack("<I", f"{what} length")
    held = len(r.data) - r.pos - CRC_BYTES
    if length > held or (last and length != held):
        relation = "shorter" if held < length else "longer"
        raise InputError(
            f"{r.source}: the file is {relation} than its {what} declare: {max(held, 0)} bytes where it declares {length}"
        )
    return r.take(length, what)


def unpack(data: bytes, source: str = "file") -> tuple[LatentHeader, LatentBody]:
    """(header, body) from a latent file's bytes; every problem is one ``InputError``."""
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{source}: {len(data):,} bytes, more than an image file may hold ({MAX_FILE_BYTES:,})")
    if not is_latent_file(data):
        raise InputError(f"{source}: not an inr latent file (its first bytes are not {MAGIC!r})")
    r = Reader(data, source)
    r.take(len(MAGIC), "magic")
    (version,) = r.unpack("<B", "version")
    if version not in READABLE:
        raise InputError(f"{source}: latent format version {version}; this inr reads version {', '.join(map(str, READABLE))}")
    if len(data) < r.pos + CRC_BYTES or zlib.crc32(data[:-CRC_BYTES]) != struct.unpack("<I", data[-CRC_BYTES:])[0]:
        raise InputError(f"{source}: damaged or truncated: the checksum does not match the file's bytes")
    channels, height, width = r.unpack("<BHH", "image size")
    levels, synthesis, arm, arm_bits, synthesis_bits, field = r.unpack("<BBBBBB", "model size")
    if field not in (NO_PRIOR, WITH_PRIOR):
        raise InputError(
            f"{source}: prior field {field:#04x}; this version defines {NO_PRIOR} (none) and {WITH_PRIOR} (a shipped prior)"
        )
    prior = r.take(PRIOR_DIGEST_BYTES, "prior digest") if field == WITH_PRIOR else None
    weight_bound, latent_bound = r.unpack("<HH", "bounds")
    spec = Spec(height, width, channels, levels, synthesis, arm)
    header = LatentHeader(spec, arm_bits, synthesis_bits, weight_bound, latent_bound, prior, version)
    header.check(source)
    scales = r.take(len(header.spec.stored_shapes()), "entropy-model scales")
    weights = payload(r, "coded weights", last=False)
    latents = payload(r, "coded latents", last=True)
    return header, LatentBody(scales, weights, latents)
