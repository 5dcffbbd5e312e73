"""The classical codecs beside which the coordinate-network codec is measured: JPEG, WebP and AVIF through Pillow
(its wheels carry libjpeg-turbo, libwebp and libavif with libaom), each at the highest quality whose file fits a rate;
and two slower anchors for rate–distortion curves, AVIF at libaom's slowest speed and HEVC intra in HEIF (libheif
with x265, through pillow-heif: ``pip install 'inr[rd]'``).

A codec's rate is its file's size (every byte the library writes, headers included) × 8 / pixels. ``at_rate``
bisects the integer quality setting (a larger quality never gave a smaller file in these libraries' ranges, which
``at_rate`` does not rely on: it keeps the best file that fits among those it tried). Gray images are written as
such by JPEG; WebP, AVIF and HEIF store RGB, so a gray image goes in as three equal channels and comes back as their
mean. Every codec here stores colour as YCbCr with 4:2:0 chroma (Pillow's and libheif's defaults, stated in
``OPTIONS``)."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Optional

import numpy as np
from PIL import Image

from inr.errors import InputError
from inr.extras import require

# Pillow's quality ranges (Image file formats): JPEG 0–95 recommended (above 95 disables parts of the
# compression), WebP 0–100, AVIF 0–100; pillow-heif's 0–100 (-1, lossless, is not a lossy anchor's setting)
QUALITIES = {"jpeg": (1, 95), "webp": (0, 100), "avif": (0, 100), "avif-slow": (0, 100), "heif": (0, 100)}
OPTIONS: dict[str, dict] = {
    # optimised Huffman tables: the smallest baseline files; Pillow's default chroma, 4:2:0
    "jpeg": {"format": "JPEG", "optimize": True},
    "webp": {"format": "WEBP", "method": 6},  # the slowest, best-compressing effort; lossy WebP is always 4:2:0
    "avif": {"format": "AVIF"},  # Pillow's AVIF defaults (PIL.AvifImagePlugin): libaom speed 6, 4:2:0 chroma
    # libaom's slowest, best-compressing speed (about 40× speed 6's encode time on a 256² crop), the same chroma
    "avif-slow": {"format": "AVIF", "speed": 0, "subsampling": "4:2:0"},
    # HEVC intra (x265 through libheif): libheif's default preset written out, and its default 4:2:0 chroma
    "heif": {"chroma": 420, "enc_params": {"preset": "slow"}},
}
CODECS = ("jpeg", "webp", "avif")  # the codec study's rows at each rate (inr.experiments.codec)
ANCHORS = tuple(QUALITIES)  # every codec here: the rate–distortion anchors (inr.experiments.rd)


@dataclass
class Coded:
    """One classical file: its codec, quality, bytes, decoded 8-bit pixels (H, W, C) and wall seconds."""

    codec: str
    quality: int
    data: bytes
    pixels: np.ndarray
    encode_seconds: float
    decode_seconds: float

    @property
    def size_bits(self) -> int:
        return 8 * len(self.data)


def _image(pixels: np.ndarray, codec: str) -> Image.Image:
    gray = pixels.shape[2] == 1
    if gray and codec == "jpeg":
        return Image.fromarray(pixels[:, :, 0], mode="L")
    return Image.fromarray(np.repeat(pixels, 3, axis=2) if gray else pixels, mode="RGB")


def _heif() -> ModuleType:
    return require("pillow_heif", extra="rd", what="the heif anchor (HEVC through libheif)")


def _save(image: Image.Image, codec: str, quality: int) -> bytes:
    buffer = io.BytesIO()
    if codec == "heif":
        options = {**OPTIONS[codec], "enc_params": dict(OPTIONS[codec]["enc_params"])}  # pillow-heif writes into it
        _heif().from_pillow(image).save(buffer, quality=quality, **options)
    else:
        image.save(buffer, quality=quality, **OPTIONS[codec])
    return buffer.getvalue()


def _load(data: bytes, codec: str, mode: str) -> np.ndarray:
    if codec == "heif":
        return np.asarray(_heif().open_heif(io.BytesIO(data)).to_pillow().convert(mode))
    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert(mode))


def code(pixels: np.ndarray, codec: str, quality: int) -> Coded:
    """8-bit pixels (H, W, C ∈ {1, 3}) through ``codec`` at ``quality``: the file and what it decodes to."""
    if codec not in QUALITIES:
        raise InputError(f"unknown classical codec {codec!r}; choose from {', '.join(ANCHORS)}")
    if codec == "heif":
        _heif()  # a missing pillow-heif is reported before the clock starts
    image = _image(pixels, codec)
    start = time.perf_counter()
    data = _save(image, codec, int(quality))
    encoded = time.perf_counter() - start
    start = time.perf_counter()
    back = _load(data, codec, "L" if pixels.shape[2] == 1 and codec == "jpeg" else "RGB")
    decoded = time.perf_counter() - start
    if back.ndim == 2:
        back = back[:, :, None]
    if pixels.shape[2] == 1 and back.shape[2] == 3:
        back = np.round(back.astype(np.float64).mean(axis=2, keepdims=True)).astype(np.uint8)
    return Coded(codec, int(quality), data, back, encoded, decoded)


def at_rate(pixels: np.ndarray, codec: str, bpp: float, coder: Callable[..., Coded] = code) -> Optional[Coded]:
    """The file of the highest quality tried whose size is at most ``bpp`` × pixels bits, by bisection over the
    codec's quality range; None when even the lowest quality is larger.

    Example:
        >>> flat = np.full((64, 64, 3), 128, dtype=np.uint8)
        >>> coded = at_rate(flat, "jpeg", 1.0)
        >>> coded.size_bits <= 64 * 64, coded.quality
        (True, 95)
    """
    budget = bpp * pixels.shape[0] * pixels.shape[1]
    low, high = QUALITIES[codec]
    best: Optional[Coded] = None
    while low <= high:
        middle = (low + high) // 2
        coded = coder(pixels, codec, middle)
        if coded.size_bits <= budget:
            if best is None or coded.quality > best.quality:
                best = coded
            low = middle + 1
        else:
            high = middle - 1
    return best
