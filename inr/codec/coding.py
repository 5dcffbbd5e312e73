"""A fitted network to a file's bytes (``encode_network``) and a file's bytes to pixels (``decode``).

Decoding reads only the file (and, for a file coded against a learned init, that init: ``inr.codec.init``): the
codec's table of the file's format version rebuilds the network the header names (``networks``, ``architecture``),
the range decoder gives the integers, the step codes turn them into float32 weights (w = q·Δ, or w = θ₀ + q·Δ with
the init's θ₀: two IEEE float32 operations, the same on every machine), and the network is evaluated in float64,
chunk by chunk, on the image's grid (``pixel_coords``: each pixel at its cell's lower corner, as the encoder's
training grid placed it); each value is clamped to [0, 1] and rounded to 8 bits, p = round(255 · clamp(f(v), 0, 1))
with ties to even. Every size is checked against the header and the bounds (``bounds``) before anything is
allocated; the work of evaluating the network at every pixel is bounded from the header (``cost``) and the memory
of the output checked against what the machine has, both before the network is built. The same file gives the same
pixels on every call and thread count (tests/codec/test_roundtrip.py, tests/codec/test_golden.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
from torch import Tensor, nn

from inr.codec import entropy
from inr.codec.architecture import Architecture, buffers_crc, linear_weights, stored_tensors
from inr.codec.bitstream import MAX_FILE_BYTES, Body, Header, Layout, pack, read_body, read_header
from inr.codec.bounds import MAX_DECODE_WORK
from inr.codec.cost import check_decode_work
from inr.codec.init import Init, check_digest, init_in
from inr.codec.latent_coding import decode_latent_file
from inr.codec.latent_file import is_latent_file
from inr.codec.quantise import Quantised, channel_rows, levels, quantise
from inr.errors import InputError, check_memory
from inr.io.progress import advance

RENDER_CHUNK = 16384  # coordinates per evaluation: bounds the activations' memory


def tensor_rows(encoder: nn.Module, network: nn.Module, per_channel: bool) -> list[int]:
    """The number of steps of each stored tensor (``quantise.channel_rows``), in the file's order."""
    linear = linear_weights(encoder, network)
    return [channel_rows(tuple(t.shape), per_channel and name in linear) for name, t in stored_tensors(encoder, network)]


def layout(encoder: nn.Module, network: nn.Module, per_channel: bool) -> Layout:
    """What the variable part of a file for these modules holds."""
    return Layout(
        sum(tensor_rows(encoder, network, per_channel)),
        len(stored_tensors(encoder, network)),
        buffers_crc(encoder, network) is not None,
    )


def quantised_tensors(
    encoder: nn.Module, network: nn.Module, bits: int, per_channel: bool, init: Optional[Init] = None
) -> list[Quantised]:
    """Every stored tensor quantised at ``bits``, in the file's order: the tensor itself, or its change θ − θ₀
    from ``init``."""
    rows = tensor_rows(encoder, network, per_channel)
    tensors = [t.detach() for _, t in stored_tensors(encoder, network)]
    if init is not None:
        tensors = [t.to(torch.float32) - start for t, start in zip(tensors, init.tensors)]
    return [quantise(t, bits, r) for t, r in zip(tensors, rows)]


def encode_network(
    encoder: nn.Module,
    network: nn.Module,
    arch: Architecture,
    shape: tuple[int, int, int],
    bits: int,
    per_channel: bool,
    init: Optional[Init] = None,
) -> bytes:
    """The file of a fitted (encoder, network) of ``arch`` for an image of ``shape`` (H, W, C), its weights (or
    their change from ``init``) quantised at ``bits`` (one step per output channel of each linear layer's weight if
    ``per_channel``)."""
    height, width, channels = shape
    if init is not None and init.arch != arch:
        raise InputError(f"--init {init.path}: an init of {init.arch.label()}, not of {arch.label()}")
    quantised = quantised_tensors(encoder, network, bits, per_channel, init)
    symbols = [t.q.numpy().ravel() for t in quantised]
    scales = [entropy.scale_code(q) for q in symbols]
    body = Body(
        step_codes=bytes(torch.cat([t.codes for t in quantised]).tolist()),
        scale_codes=bytes(scales),
        buffers_crc=buffers_crc(encoder, network),
        payload=entropy.encode(symbols, levels(bits), scales),
    )
    digest = init.digest if init is not None else None
    return pack(Header(height, width, channels, arch, bits, per_channel, init=digest), body)


@dataclass
class Decoded:
    """A file's header and its network (float32 weights, as the file gives them)."""

    header: Header
    encoder: nn.Module
    network: nn.Module


InitSource = Union[Init, str, Path, None]  # an init, or a file or directory of inits (``init.init_in``)


def init_of(header: Header, init: InitSource, source: str) -> Optional[Init]:
    """The init a file's weights were coded against, checked against its digest; None for a file coded without
    one (an init given for it is not used, as a dictionary given to a compressor's frame that names none)."""
    if header.init is None:
        return None
    if init is None:
        raise InputError(f"{source}: coded against a learned init ({header.init.hex()}); give its file or directory with --init")
    if not isinstance(init, Init):
        init = init_in(init, header.arch, header.side, header.channels, header.version)
    elif init.arch != header.arch:
        raise InputError(f"{source}: its network is {header.arch.label()}; --init {init.path} is an init of {init.arch.label()}")
    check_digest(init, header.init, source)
    return init


def read_network(data: bytes, source: str = "file", init: InitSource = None) -> Decoded:
    """The header and the network with the file's weights; every problem of the file (or of its init) is one
    ``InputError``."""
    header, reader = read_header(data, source)
    start = init_of(header, init, source)
    encoder, network = header.arch.build(header.side, header.channels, header.version)
    body = read_body(reader, layout(encoder, network, header.per_channel))
    if body.buffers_crc != buffers_crc(encoder, network):
        raise InputError(
            f"{source}: this decoder rebuilds the {header.arch.method} network's fixed tensors differently from the "
            "encoder that wrote the file (another version of its network's code or of torch)"
        )
    tensors = stored_tensors(encoder, network)
    rows = tensor_rows(encoder, network, header.per_channel)
    try:
        symbols = entropy.decode(body.payload, [t.numel() for _, t in tensors], levels(header.bits), list(body.scale_codes))
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    codes = torch.tensor(list(body.step_codes), dtype=torch.uint8)
    offsets = start.tensors if start is not None else [None] * len(tensors)
    at = 0
    with torch.no_grad():
        for (_, target), q, r, offset in zip(tensors, symbols, rows, offsets):
            values = Quantised(torch.from_numpy(q).reshape(target.shape), codes[at : at + r]).dequantise()
            target.copy_(values if offset is None else offset + values)
            at += r
    return Decoded(header, encoder.eval(), network.eval())


def pixel_coords(height: int, width: int, start: int, stop: int) -> Tensor:
    """v = (row / H, col / W) of pixels ``start`` … ``stop`` − 1 in row-major order, (n, 2) float32: every pixel at
    its cell's lower corner, the convention of the grid the encoder trains on (``inr.data.grid.Grid``; a test
    checks they agree), computed here so that a decoder loads no data floor.

    Example:
        >>> pixel_coords(2, 4, 5, 8).tolist()
        [[0.5, 0.25], [0.5, 0.5], [0.5, 0.75]]
    """
    index = torch.arange(start, stop)
    rows_cols = torch.stack([torch.div(index, width, rounding_mode="floor"), index % width], dim=-1)  # (n, 2)
    return rows_cols.to(torch.float32) / torch.tensor([height, width], dtype=torch.float32)


@torch.no_grad()
def render(encoder: nn.Module, network: nn.Module, height: int, width: int, chunk: int = RENDER_CHUNK) -> np.ndarray:
    """The 8-bit image (H, W, C) of a network, evaluated in float64 on the grid v = (row / H, col / W)."""
    encoder64, network64 = copy.deepcopy(encoder).double(), copy.deepcopy(network).double()
    pixels = height * width
    parts = []
    for start in range(0, pixels, chunk):
        coords = pixel_coords(height, width, start, min(start + chunk, pixels)).double()  # (n, 2)
        values = network64(encoder64(coords)).clamp(0.0, 1.0) * 255.0  # (n, C)
        parts.append(torch.round(values).to(torch.uint8))
        advance(start + len(coords), pixels)
    return torch.cat(parts).reshape(height, width, -1).numpy()


def decode(data: bytes, source: str = "file", init: InitSource = None, max_work: Optional[float] = MAX_DECODE_WORK) -> np.ndarray:
    """A file's pixels, uint8 (H, W, C) with C = 1 or 3; ``init``: the learned init a file coded against one needs;
    ``max_work``: the multiply-adds a decode may take (``cost.check_decode_work``; None: unbounded, for the encoder's
    own files, whose cost its training has already paid many times over). A latent file (``latent_file``) is
    decoded by its own decoder."""
    if is_latent_file(data):
        return decode_latent_file(data, source, max_work)
    header, _ = read_header(data, source)
    if max_work is not None:
        check_decode_work(header, source, max_work)
    # the output, its float64 values and one chunk's activations: refused before anything is built
    check_memory(f"{source}: decoding {header.width}×{header.height}", header.height * header.width * header.channels * 9)
    decoded = read_network(data, source, init)
    return render(decoded.encoder, decoded.network, header.height, header.width)


def read_file(path: Union[str, Path]) -> bytes:
    """A codec file's bytes; a missing, unreadable or oversized file is one ``InputError``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InputError(f"{path}: {size:,} bytes, more than an image file may hold ({MAX_FILE_BYTES:,})")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None


def as_unit(pixels: np.ndarray) -> Tensor:
    """8-bit pixels (H, W, C) as float32 values in [0, 1]."""
    return torch.from_numpy(pixels.astype(np.float32) / 255.0)
