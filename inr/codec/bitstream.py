"""The ``.inr`` file: a versioned binary header, the quantisation side information, the range-coded weights and a
CRC-32; written by ``pack`` and read back by ``unpack`` with every size checked before anything is allocated.

Layout of format version 2 (integers unsigned, little-endian; docs/codec.md has the same table):

    magic      4   b"\\x89INR"
    version    1   2 (version 1, read as well, is the same without the init field)
    channels   1   1 (gray) or 3 (RGB): 8-bit values, the colour space of the input file
    height     2   2 … 16384
    width      2   2 … 16384
    name       1+n the network's name in the table of this version (``inr.codec.networks``; n ≤ 32 ASCII bytes)
    net width  2   1 … 1024
    depth      1   1 … 16
    seed       2   drawn before the network is built
    hash levels, hash log2   1 + 1   (0: the table's)
    quantiser  1   bits b (2 … 16) in the low five bits; bit 7: one step per output channel
    init       1+d 0: the weights are coded as they are; 1: as their change from a learned initialisation the
                   decoder is given, named by the next d = 8 bytes (``inr.codec.init.digest``)
    steps      R   one byte per step (``quantise.step_value``), R from the architecture and bit 7
    scales     T   one byte per stored tensor (``entropy.scale_value``)
    buffers    4   CRC-32 of the rebuilt buffers, present only when the architecture has buffers
    payload    4+P its length P, then the range coder's 32-bit words
    crc        4   CRC-32 of every byte before it

R, T and the buffers' presence follow from the architecture, so the reader checks the CRC, parses the fixed part,
checks its bounds, asks ``layout(header)`` for them (which builds the network) and parses the rest. The file's length is the rate:
nothing a decoder needs lives outside it.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from inr.codec.architecture import Architecture
from inr.codec.bounds import MAX_FILE_BYTES, MAX_NAME, MAX_PIXELS, MAX_SIDE
from inr.codec.quantise import MAX_BITS, MIN_BITS
from inr.errors import InputError

MAGIC = b"\x89INR"
# Each version has its table of the networks its files may name (``networks.TABLES``; 1 and 2 share one)
VERSION = 2  # what ``pack`` writes
READABLE = (1, 2)  # what ``read_header`` reads: version 1 is version 2 without the init field
INIT_DIGEST_BYTES = 8
NO_INIT, WITH_INIT = 0, 1  # the init field's first byte: no init, or its digest of INIT_DIGEST_BYTES follows
CHANNELS = (1, 3)
PER_CHANNEL_FLAG = 0x80
CRC_BYTES = 4


def check_image(source: str, channels: int, height: int, width: int) -> None:
    """Refuse, in one line, an image a file may not declare: channels other than 1 or 3, a side outside 2 … 16384,
    more than 2^26 pixels (every file format of the codec)."""
    if channels not in CHANNELS:
        raise InputError(f"{source}: {channels} channels; a file holds 1 (gray) or 3 (RGB)")
    for name, value in (("height", height), ("width", width)):
        if not 2 <= value <= MAX_SIDE:
            raise InputError(f"{source}: image {name} {value} outside 2…{MAX_SIDE}")
    if height * width > MAX_PIXELS:
        raise InputError(f"{source}: {width}×{height} pixels, more than {MAX_PIXELS:,}")


@dataclass(frozen=True)
class Header:
    """What the fixed part of a file says: the image's size and channels, the network, the quantiser."""

    height: int
    width: int
    channels: int
    arch: Architecture
    bits: int
    per_channel: bool
    version: int = VERSION
    init: Optional[bytes] = None  # the digest of the learned initialisation the weights are coded against

    @property
    def side(self) -> int:
        """The training grid's samples per axis the registry's settings follow: the shorter side."""
        return min(self.height, self.width)

    def check(self, source: str) -> None:
        check_image(source, self.channels, self.height, self.width)
        if not MIN_BITS <= self.bits <= MAX_BITS:
            raise InputError(f"{source}: {self.bits} bits per weight outside {MIN_BITS}…{MAX_BITS}")
        if self.version not in READABLE:
            raise InputError(f"{source}: format version {self.version}; this inr reads {' and '.join(map(str, READABLE))}")
        if self.init is not None and (self.version < 2 or len(self.init) != INIT_DIGEST_BYTES):
            raise InputError(f"{source}: a learned init is named by {INIT_DIGEST_BYTES} bytes in a version-2 file")
        self.arch.check(source, self.version)


@dataclass(frozen=True)
class Layout:
    """What the architecture implies for the variable part: step bytes R, tensor count T, a buffers CRC or not."""

    steps: int
    tensors: int
    has_buffers: bool


@dataclass(frozen=True)
class Body:
    """The variable part: step codes (R bytes), scale codes (T bytes), the buffers' CRC and the coded weights."""

    step_codes: bytes
    scale_codes: bytes
    buffers_crc: Optional[int]
    payload: bytes


def pack(header: Header, body: Body) -> bytes:
    """The file's bytes.

    Example:
        >>> body = Body(b"\\x01\\x02", b"\\x03", None, b"\\x00" * 8)
        >>> h = Header(4, 6, 3, Architecture("siren", 8, 2), bits=8, per_channel=False, init=bytes(range(8)))
        >>> data = pack(h, body)
        >>> len(data), unpack(data, lambda header: Layout(2, 1, False))[0] == h
        (52, True)
        >>> old = Header(4, 6, 3, Architecture("siren", 8, 2), bits=8, per_channel=False, version=1)  # no init field
        >>> len(pack(old, body)), unpack(pack(old, body), lambda header: Layout(2, 1, False))[0] == old
        (43, True)
    """
    header.check("pack")
    name = header.arch.method.encode("ascii")
    a = header.arch
    out = bytearray(MAGIC)
    out += struct.pack("<BBHH", header.version, header.channels, header.height, header.width)
    out += struct.pack("<B", len(name)) + name
    out += struct.pack("<HBHBB", a.width, a.depth, a.seed, a.hash_levels, a.hash_log2)
    out += struct.pack("<B", header.bits | (PER_CHANNEL_FLAG if header.per_channel else 0))
    if header.version >= 2:
        out += struct.pack("<B", WITH_INIT if header.init else NO_INIT) + (header.init or b"")
    out += body.step_codes + body.scale_codes
    if body.buffers_crc is not None:
        out += struct.pack("<I", body.buffers_crc)
    out += struct.pack("<I", len(body.payload)) + body.payload
    out += struct.pack("<I", zlib.crc32(out))
    return bytes(out)


class Reader:
    """Reads fields in order from bytes, refusing to read past the end (a truncated file) in one line."""

    def __init__(self, data: bytes, source: str) -> None:
        self.data, self.pos, self.source = data, 0, source

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > len(self.data):
            raise InputError(f"{self.source}: truncated: the file ends at byte {len(self.data)} inside the {what}")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))


def read_header(data: bytes, source: str = "file") -> tuple[Header, Reader]:
    """The fixed part, checked (magic, version, bounds), and the reader positioned after it."""
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{source}: {len(data):,} bytes, more than an image file may hold ({MAX_FILE_BYTES:,})")
    r = Reader(data, source)
    if data[: len(MAGIC)] != MAGIC:
        raise InputError(f"{source}: not an inr image file (its first bytes are not {MAGIC!r})")
    r.take(len(MAGIC), "magic")
    (version,) = r.unpack("<B", "version")
    if version not in READABLE:
        newer = "a newer" if version > VERSION else "an unknown"
        raise InputError(
            f"{source}: format version {version}, written by {newer} inr; this one reads versions {' and '.join(map(str, READABLE))}"
        )
    # the checksum first: a damaged file is refused before any of its sizes is believed
    if len(data) < r.pos + CRC_BYTES or zlib.crc32(data[:-CRC_BYTES]) != struct.unpack("<I", data[-CRC_BYTES:])[0]:
        raise InputError(f"{source}: damaged or truncated: the checksum does not match the file's bytes")
    channels, height, width = r.unpack("<BHH", "image size")
    (n,) = r.unpack("<B", "method name")
    if not 1 <= n <= MAX_NAME:
        raise InputError(f"{source}: method name of {n} bytes; at most {MAX_NAME}")
    raw = r.take(n, "method name")
    try:
        method = raw.decode("ascii")
    except UnicodeDecodeError:
        raise InputError(f"{source}: the method name is not ASCII") from None
    net_width, depth, seed, levels, log2 = r.unpack("<HBHBB", "network size")
    (quantiser,) = r.unpack("<B", "quantiser")
    if quantiser & 0x60:
        raise InputError(f"{source}: quantiser byte {quantiser:#04x} sets bits this version does not define")
    init = None
    if version >= 2:
        (field,) = r.unpack("<B", "init field")
        if field not in (NO_INIT, WITH_INIT):
            raise InputError(
                f"{source}: init field {field:#04x}; this version defines {NO_INIT} (none) and {WITH_INIT} (a learned init)"
            )
        if field == WITH_INIT:
            init = r.take(INIT_DIGEST_BYTES, "init digest")
    arch = Architecture(method, net_width, depth, seed, levels, log2)
    header = Header(height, width, channels, arch, quantiser & 0x1F, bool(quantiser & PER_CHANNEL_FLAG), version, init)
    header.check(source)
    return header, r


def read_body(r: Reader, layout: Layout) -> Body:
    """The variable part after the header; the payload's declared length must be what the file holds before
    its CRC."""
    steps = r.take(layout.steps, "quantisation steps")
    scales = r.take(layout.tensors, "entropy-model scales")
    crc = r.unpack("<I", "buffers checksum")[0] if layout.has_buffers else None
    (length,) = r.unpack("<I", "payload length")
    held = len(r.data) - r.pos - CRC_BYTES
    if length != held:
        relation = "shorter" if held < length else "longer"
        raise InputError(
            f"{r.source}: the payload is {relation} than declared: {max(held, 0)} bytes where the header declares {length}"
        )
    payload = r.take(length, "payload")
    return Body(steps, scales, crc, payload)


def unpack(data: bytes, layout: Callable[[Header], Layout], source: str = "file") -> tuple[Header, Body]:
    """(header, body) from a file's bytes; ``layout(header)`` says what the variable part holds."""
    header, reader = read_header(data, source)
    return header, read_body(reader, layout(header))
