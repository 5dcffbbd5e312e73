"""Video files in and out: MP4 (H.264) and WebM (VP9) through PyAV, the optional ``video`` extra
(``pip install av``, or ``pip install '.[video]'`` from a clone); animated GIF through imageio, always available.

Frames are (T, H, W, C) with C ∈ {1, 3}: floats in [0, 1] or uint8. MP4 and WebM are written as yuv420p,
the pixel format every player decodes, which needs even sides: an odd height or width is padded by
repeating the last row or column. Files are written atomically (``inr.io.files``).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Optional, Union

import numpy as np
from torch import Tensor

from inr.errors import InputError, check_memory
from inr.extras import require
from inr.io.bounded import first_line
from inr.io.files import atomic_write

# suffix -> (container, encoder); libx264 and libvpx-vp9 are in PyAV's wheels
ENCODERS = {".mp4": ("mp4", "libx264"), ".webm": ("webm", "libvpx-vp9")}
READABLE = (".mp4", ".webm", ".mov", ".mkv", ".avi")  # anything FFmpeg demuxes; these are the usual names
WRITABLE = (*ENCODERS, ".gif")
EXTRA_HINT = "pip install av (PyAV; from a clone: pip install '.[video]')"


def pyav_available() -> bool:
    return importlib.util.find_spec("av") is not None


def require_pyav(what: str) -> None:
    if not pyav_available():
        raise InputError(f"{what} needs the video extra: {EXTRA_HINT}")


def to_uint8(frames: Union[Tensor, np.ndarray]) -> np.ndarray:
    """Floats in [0, 1] (clipped) -> uint8 by rounding x·255; uint8 passes through.

    Example:
        >>> to_uint8(np.array([0.0, 0.5, 1.2])).tolist()
        [0, 128, 255]
    """
    array = frames.detach().cpu().numpy() if isinstance(frames, Tensor) else np.asarray(frames)
    if array.dtype == np.uint8:
        return array
    return np.round(np.clip(array, 0.0, 1.0) * 255.0).astype(np.uint8)


def _rgb_even(frames: np.ndarray) -> np.ndarray:
    """(T, H, W, C) uint8 -> (T, H', W', 3) with gray repeated to RGB and odd sides padded to even."""
    if frames.shape[-1] == 1:
        frames = np.repeat(frames, 3, axis=-1)
    pad = [(0, 0), (0, frames.shape[1] % 2), (0, frames.shape[2] % 2), (0, 0)]
    return np.ascontiguousarray(np.pad(frames, pad, mode="edge"))


def write_video(path: Union[str, Path], frames: Union[Tensor, np.ndarray], fps: float = 8.0, crf: int = 18) -> Path:
    """Write (T, H, W, C) frames to ``path`` (.mp4, .webm or .gif) at ``fps`` frames per second.

    ``crf`` is the encoder's constant-quality setting for MP4/WebM (lower is closer to the frames; 18 is
    visually near-lossless for H.264, per FFmpeg's H.264 guide).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in WRITABLE:
        raise InputError(f"{path}: unsupported video extension {path.suffix!r}; use one of {', '.join(WRITABLE)}")
    frames = to_uint8(frames)
    if frames.ndim != 4 or frames.shape[-1] not in (1, 3) or len(frames) < 1:
        raise InputError(f"a video needs frames shaped (T, H, W, 1 or 3), got {tuple(frames.shape)}")
    if fps <= 0:
        raise InputError(f"video fps must be > 0, got {fps}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".gif":
        import imageio.v3 as iio

        with atomic_write(path) as f:  # duration per frame in ms; loop=0 repeats forever
            iio.imwrite(f, frames[..., 0] if frames.shape[-1] == 1 else frames, extension=".gif", duration=1000.0 / fps, loop=0)
        return path
    require_pyav(f"writing {suffix}")
    from fractions import Fraction

    av = require("av", extra="video", what=f"writing {suffix}")

    container_format, codec = ENCODERS[suffix]
    frames = _rgb_even(frames)
    with atomic_write(path) as f:
        container = av.open(f, mode="w", format=container_format)
        try:
            stream = container.add_stream(codec, rate=Fraction(fps).limit_denominator(1000))
            stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
            stream.options = {"crf": str(crf)}
            for frame in frames:
                container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
            container.mux(stream.encode())  # flush the encoder's delayed frames
        finally:
            container.close()
    return path


def _decoded(path: Path) -> Iterator[np.ndarray]:
    av = require("av", extra="video", what=f"reading {path.suffix}")

    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            yield frame.to_ndarray(format="rgb24")  # (H, W, 3) uint8


def read_video(path: Union[str, Path], max_frames: Optional[int] = None) -> np.ndarray:
    """The first ``max_frames`` frames (all when None) of an MP4/WebM/... file as uint8 (T, H, W, 3).

    Decoding stops after ``max_frames``, and the frames are refused before decoding when they would not
    fit in memory (count from the container, or duration × frame rate when it does not say).
    """
    path = Path(path)
    require_pyav(f"reading {path.suffix}")
    av = require("av", extra="video", what=f"reading {path.suffix}")

    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise InputError(f"{path}: no video stream")
            stream = container.streams.video[0]
            count = stream.frames or math.ceil(
                float((stream.duration or 0) * (stream.time_base or 0) * (stream.average_rate or 0))
            )
            width, height = stream.codec_context.width, stream.codec_context.height
        wanted = min(count, max_frames) if count and max_frames else (count or max_frames or 0)
        # uint8 frames (1 byte a value), their float32 copy and one converted float32 copy (4 + 4)
        check_memory(
            f"{path}: {wanted:,} frames of {width}×{height}", 9 * 3 * wanted * width * height, advice="choose fewer data.frames"
        )
        frames = []
        for frame in _decoded(path):
            frames.append(frame)
            if max_frames is not None and len(frames) >= max_frames:
                break
    except InputError:
        raise
    except (av.error.FFmpegError, OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable video ({type(exc).__name__}: {first_line(exc)})") from None
    if not frames:
        raise InputError(f"{path}: the video holds no frames")
    return np.stack(frames)  # (T, H, W, 3)
