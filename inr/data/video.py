"""Video as a target: frames of a video file (GIF; MP4, WebM, ... with the ``video`` extra) or an image
sequence on a (t, y, x) grid, ``VideoDataModule``.

Frame f of T, pixel (row, col) of H×W sits at v = (f/T, row/H, col/W) (the core grid convention), so time
is just a third axis and the 3D grid machinery (lazy coordinates, chunked renders, the central-slice
images) applies unchanged. Frames are converted like images (``inr.data.image``: integers scaled into
[0, 1], alpha composited onto white, ``channels`` rgb/gray/keep). The ``every_other`` split thins all three
axes, as the core does: training sees the even frames at the even pixels, the test the odd frames at the
odd pixels, so the held-out score measures interpolation in time and in space together.
"""

from __future__ import annotations

import glob
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Optional, Union

import imageio.v3 as iio
import numpy as np
import torch
from torch import Tensor

from inr.data.image import (
    DEFAULT_IMAGE,
    IMAGE_EXTENSIONS,
    check_image_size,
    convert_channels,
    image_header,
    pillow_mode,
    read_image,
    resize_image,
    to_unit_float,
)
from inr.data.module import GridDataModule
from inr.data.paths import check_file, resolve_data_path
from inr.data.volume import FULL_BATCH_LIMIT, refuse_large_full_batch
from inr.errors import InputError, check_memory
from inr.io.bounded import first_line
from inr.io.video import EXTRA_HINT, READABLE, read_video
from inr.sizes import grid_size

VIDEO_EXTENSIONS = (".gif", *READABLE)


def read_gif(path: Union[str, Path], channels: str = "rgb") -> Tensor:
    """Every frame of an animated GIF as float32 (T, H, W, C) in [0, 1].

    GIF encoders usually merge consecutive identical frames, so T counts distinct frames.
    """
    path = Path(path)
    check_file(path, (".gif",), "video", "use .gif or a folder of images")
    check_image_size(path, what="frames")  # frames counted from the file, none decoded: a GIF frame may be 1 pixel
    if pillow_mode(path) is None:  # Pillow reads GIFs: the file is none (imageio would try each of its plugins first)
        raise InputError(f"{path}: not a readable GIF (its contents are no GIF Pillow reads)")
    try:
        frames = np.asarray(iio.imread(path, index=None))  # (T, H, W[, C])
    except Exception as exc:  # imageio raises many types for undecodable files
        raise InputError(f"{path}: not a readable GIF ({type(exc).__name__}: {first_line(exc)})") from None
    if frames.ndim == 3:
        frames = frames[..., None]
    unit = to_unit_float(frames, str(path))
    return torch.from_numpy(np.stack([convert_channels(f, channels, str(path)) for f in unit]))


def read_movie(path: Union[str, Path], channels: str = "rgb", max_frames: Optional[int] = None) -> Tensor:
    """The first ``max_frames`` frames (all when None) of an MP4/WebM/MOV/MKV/AVI file as float32
    (T, H, W, C) in [0, 1]; needs the ``video`` extra (PyAV)."""
    path = Path(path)
    check_file(path, READABLE, "video", f"use one of {', '.join(VIDEO_EXTENSIONS)} or a folder of images")
    unit = to_unit_float(read_video(path, max_frames), str(path))  # (T, H, W, 3) uint8 -> [0, 1]
    return torch.from_numpy(np.stack([convert_channels(f, channels, str(path)) for f in unit]))


def sequence_files(pattern: Union[str, Path]) -> list[Path]:
    """The frames of an image sequence: the images in a folder, or the files a glob pattern matches, sorted by name."""
    pattern = str(pattern)
    if Path(pattern).is_dir():
        files = sorted(p for p in Path(pattern).iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS)
    else:
        files = sorted(Path(p) for p in glob.glob(pattern))
    if not files:
        raise InputError(f"{pattern}: no image files found for an image sequence")
    return files


def read_sequence(pattern: Union[str, Path], channels: str = "rgb") -> Tensor:
    """Frames of an image sequence (see ``sequence_files``) as float32 (T, H, W, C); all frames one size."""
    files = sequence_files(pattern)
    headers = [image_header(p) for p in files]
    pixels = sum(h[0] * h[1] * h[2] for h in headers if h is not None)
    if headers[0] is not None:  # the frames as float32 RGB, in their list and stacked: 2 × 12 bytes a pixel
        _, height, width, _, _ = headers[0]
        check_memory(
            f"{pattern}: {len(files)} frame{'s' if len(files) > 1 else ''} of {width}×{height} (their headers)",
            24 * pixels,
            advice="use fewer frames",
        )
    frames = [read_image(p, channels) for p in files]
    sizes = {tuple(f.shape) for f in frames}
    if len(sizes) > 1:
        raise InputError(f"{pattern}: frames differ in size {sorted(sizes)}; an image sequence needs one size")
    return torch.stack(frames)


PAN_WINDOW = 0.6  # the built-in clip's window, a fraction of the image side


def pan_clip(
    frames: int, window: float = PAN_WINDOW, travel: float = 0.1, resize: Optional[Callable[[Tensor], Tensor]] = None
) -> Tensor:
    """A built-in clip: a square window of ``window``·side of ``data/astronaut.png`` moving diagonally by
    ``travel``·side in total, as float32 (T, S, S, 3) — a slow camera pan over a real photograph.

    The default moves the window by about 0.7 pixel per frame once the clip is resized to 64×64 and 16
    frames, so the odd frames held out by ``every_other`` lie within about 1.4 pixels of a trained frame.
    """
    image = read_image(DEFAULT_IMAGE, "rgb")  # (H, W, 3)
    side = min(image.shape[:2])
    size = int(round(window * side))
    if not 0 <= travel <= 1 - window:
        raise InputError(f"pan travel must lie in [0, {1 - window:g}] for a window of {window:g}, got {travel}")
    starts = np.linspace(0, travel * side, frames).round().astype(int)
    resize = resize or (lambda frame: frame)
    return torch.stack([resize(image[s : s + size, s : s + size]) for s in starts])


class VideoDataModule(GridDataModule):
    """A clip as a (T, H, W) grid of colours: an animated GIF, an image sequence, or the built-in pan.

    Args:
        path: a ``.gif``, an ``.mp4``/``.webm``/``.mov``/``.mkv``/``.avi`` (with the ``video`` extra), a
            folder of images, or a glob pattern such as ``frames/*.png``; ``None``: the built-in pan over
            ``data/astronaut.png`` (see ``pan_clip``). Only the frames kept are decoded.
        resolution: frame size: ``None`` (native), an int r (centre square crop, then r×r) or [h, w].
        frames: most frames to keep (after ``frame_stride``); for the built-in clip, how many to make.
        frame_stride: keep every ``frame_stride``-th frame.
        channels: ``rgb`` | ``gray`` | ``keep``, as for images.
        full_batch_limit: most training points allowed with ``batch_size: null``.
        split, batch_size, steps_per_epoch, eval_chunk, seed: as in ``GridDataModule`` (``every_other``
            thins t, y and x).

    Example:
        >>> dm = VideoDataModule(resolution=16, frames=8)
        >>> dm.shape, dm.out_channels, dm.train_shape
        ((8, 16, 16), 3, (4, 8, 8))
    """

    def __init__(
        self,
        path: Optional[str] = None,
        resolution: Union[int, list[int], None] = 64,
        frames: Optional[int] = 16,
        frame_stride: int = 1,
        channels: Literal["rgb", "gray", "keep"] = "rgb",
        full_batch_limit: int = FULL_BATCH_LIMIT,
        split: str = "every_other",
        **kwargs: Any,
    ) -> None:
        super().__init__(split=split, **kwargs)
        if frame_stride < 1:
            raise InputError(f"data.frame_stride must be ≥ 1, got {frame_stride}")
        if frames is not None and frames < 2:  # a negative count would slice frames off the end
            raise InputError(f"data.frames must be ≥ 2 (or null: every frame), got {frames}")
        self.path = str(resolve_data_path(path)) if path is not None else None
        self.resolution, self.frames, self.frame_stride = resolution, frames, frame_stride
        self.channels, self.full_batch_limit = channels, full_batch_limit

    def describe(self) -> str:
        return str(self.path) if self.path is not None else "built-in pan clip"

    def _read(self) -> Tensor:
        if self.path is None:
            if self.frames is None:
                raise InputError("data.frames must be ≥ 2 for the built-in clip, got None")
            # sized at the kept resolution before any frame is made; each frame is resized as it is cut
            if self.resolution is not None:
                side = grid_size(self.resolution, 2)
            else:  # the window of the source image, read from its header
                side = (round(PAN_WINDOW * min(iio.improps(DEFAULT_IMAGE).shape[:2])),) * 2
            self.check_size(self.frames * math.prod(side), 3, 3)
            resize = (lambda f: resize_image(f, self.resolution)) if self.resolution is not None else None
            clip = pan_clip(self.frames, resize=resize)
            return convert_channels_clip(clip, self.channels, self.describe())
        path = Path(self.path)
        if path.suffix.lower() == ".gif":
            return read_gif(path, self.channels)
        if path.suffix.lower() in READABLE:
            return read_movie(path, self.channels, self.frames * self.frame_stride if self.frames is not None else None)
        if path.is_dir() or any(c in str(path) for c in "*?["):
            return read_sequence(path, self.channels)
        if path.suffix and not path.exists():
            raise InputError(f"{path}: file not found")
        raise InputError(
            f"{path}: unsupported video source {path.suffix!r}; use one of {', '.join(VIDEO_EXTENSIONS)} "
            f"({EXTRA_HINT} for all but .gif), a folder of images or a glob pattern"
        )

    def load_values(self) -> Tensor:
        clip = self._read()[:: self.frame_stride]
        if self.frames is not None:
            clip = clip[: self.frames]
        if len(clip) < 2:
            raise InputError(f"{self.describe()}: {len(clip)} frame(s) after frames/frame_stride; a video needs at least 2")
        if self.resolution is not None:
            size = grid_size(self.resolution, 2)
            self.check_size(len(clip) * math.prod(size), clip.shape[-1], 3)
            clip = torch.stack([resize_image(f, self.resolution) for f in clip])  # (T, h, w, C)
        if min(clip.shape[1:3]) < 2:
            raise InputError(f"{self.describe()}: frames of {clip.shape[2]}×{clip.shape[1]} are too small to fit")
        if float(clip.max() - clip.min()) == 0.0:
            raise InputError(f"{self.describe()}: every frame is one constant colour; nothing to fit")
        return clip.contiguous()  # (T, H, W, C)

    def setup(self, stage: str) -> None:
        super().setup(stage)
        refuse_large_full_batch(self, self.full_batch_limit)


def convert_channels_clip(clip: Tensor, channels: str, source: str) -> Tensor:
    """``convert_channels`` of ``inr.data.image`` applied to every frame of (T, H, W, C)."""
    return torch.from_numpy(np.stack([convert_channels(f.numpy(), channels, source) for f in clip]))
