"""A rendered field as files, what ``inr-train predict`` writes (into ``<run>/predictions`` or ``--out``):

- every field: ``field.npy``, float32 (*shape, C), the layout the data loaders read;
- a 1-D field (a signal): ``field.png``, each channel plotted over v;
- a 2-D field (an image): ``image.png``, 8-bit, with 1, 3 or 4 channels as rendered;
- a video: ``frames/frame_0000.png``… and ``video.<mp4|webm|gif>``;
- a volume: ``slices/slice_0000.png``… along the first axis and ``slices.<mp4|webm|gif>``, a sweep through them;
- the views of a radiance field (channels colour, depth, accumulation): ``frames/frame_0000.png``… and
  ``video.<ext>`` of the colour, ``depth.<ext>`` (near: bright, far and empty: dark, scaled over the pixels the
  field covers) and ``accumulation.<ext>`` (the opacity along each ray), as nerfstudio's render writes them.

PNGs and videos show values in [0, 1]; a field that leaves [0, 1] (a signed distance, a raw regression) is
shown mapped linearly from its own [min, max], and the ``.npy`` keeps the values. The files are staged in a
hidden folder inside the output folder and moved into place when all are written: each output is whole or
absent, and an interrupted or failed render leaves the folder as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Literal, Optional

import numpy as np
from torch import Tensor

from inr.errors import InputError
from inr.io.files import atomic_write
from inr.io.video import pyav_available, require_pyav, to_uint8, write_video

KINDS = ("signal", "image", "video", "volume", "views")
VIDEO_CHOICES = ("auto", "mp4", "webm", "gif", "none")


def display_range(values: np.ndarray) -> tuple[float, float]:
    """[0, 1] when the values lie in it, else their own [min, max] (a constant field: [v − 0.5, v + 0.5]).

    Example:
        >>> display_range(np.array([0.2, 0.9])), display_range(np.array([-2.0, 2.0]))
        ((0.0, 1.0), (-2.0, 2.0))
    """
    lo, hi = float(values.min()), float(values.max())
    if lo >= 0.0 and hi <= 1.0:
        return 0.0, 1.0
    return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)


def choose_video(video: str) -> Optional[str]:
    """The video format to write: ``auto`` is MP4 with the video extra and an animated GIF without it (imageio,
    always available); MP4/WebM without the extra are refused (before anything is rendered)."""
    if video not in VIDEO_CHOICES:
        raise InputError(f"--video: unknown format {video!r}; choose one of {', '.join(VIDEO_CHOICES)}")
    if video == "auto":
        return "mp4" if pyav_available() else "gif"
    if video in ("mp4", "webm"):
        require_pyav(f"--video {video}")
    return None if video == "none" else video


FRAME_FOLDERS = {"video": ("frames", "frame"), "volume": ("slices", "slice"), "views": ("frames", "frame")}


def check_frame_folder(out: Path, kind: str) -> None:
    """Refuse, before anything is rendered, an output folder whose ``frames/`` or ``slices/`` exists and holds
    anything but an earlier prediction's numbered PNGs (those alone are replaced): predict never deletes files
    it did not write."""
    if kind not in FRAME_FOLDERS:
        return
    folder, stem = FRAME_FOLDERS[kind]
    target = out / folder
    if not target.exists() and not target.is_symlink():
        return
    if target.is_symlink() or not target.is_dir():
        raise InputError(f"--out {out}: {target} exists and is not a folder of an earlier prediction; choose another --out")
    ours = re.compile(rf"{stem}_\d{{4,}}\.png")
    foreign = sorted(p.name for p in target.iterdir() if not (ours.fullmatch(p.name) and p.is_file()))
    if foreign:
        raise InputError(
            f"--out {out}: {target} holds files predict did not write ({', '.join(foreign[:3])}"
            f"{', …' if len(foreign) > 3 else ''}); predict replaces that folder, so choose another --out or move them"
        )


def _png(path: Path, pixels: np.ndarray) -> None:
    import imageio.v3 as iio

    with atomic_write(path) as f:
        iio.imwrite(f, pixels[..., 0] if pixels.shape[-1] == 1 else pixels, extension=".png")


def _plot(path: Path, field: np.ndarray) -> None:
    """(C, N) -> a line plot of each channel over v = i / N."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3))
    ax = fig.add_subplot()
    v = np.arange(field.shape[1]) / field.shape[1]
    for c, row in enumerate(field):
        ax.plot(v, row, linewidth=0.8, label=f"channel {c}")
    ax.set_xlabel("v")
    if len(field) > 1:
        ax.legend()
    fig.tight_layout()
    with atomic_write(path) as f:
        fig.savefig(f, format="png", dpi=110)


def depth_display(depth: np.ndarray, opacity: np.ndarray) -> np.ndarray:
    """Depth (V, H, W) shown in [0, 1]: near bright, far dark, scaled over the pixels whose accumulated opacity
    exceeds ½ (empty pixels: 0), so the object, not the far plane, spans the range.

    Example:
        >>> depth_display(np.array([[[2.0, 4.0, 9.0]]]), np.array([[[1.0, 1.0, 0.0]]])).round(2).tolist()
        [[[1.0, 0.0, 0.0]]]
    """
    covered = opacity > 0.5
    if not covered.any():
        return np.zeros_like(depth)
    near, far = float(depth[covered].min()), float(depth[covered].max())
    shown = 1.0 - (depth - near) / max(far - near, 1e-12)
    return np.where(covered, np.clip(shown, 0.0, 1.0), 0.0)


def _views(stage: Path, values: np.ndarray, video: Optional[str], fps: float) -> list[str]:
    """The files of a radiance field's views, values (C + 2, V, H, W): colour, then depth and accumulation."""
    colour, depth, opacity = values[:-2], values[-2], values[-1]
    frames = to_uint8(np.moveaxis(np.clip(colour, 0.0, 1.0), 0, -1))  # (C, V, H, W) -> (V, H, W, C)
    (stage / "frames").mkdir()
    for i, frame in enumerate(frames):
        _png(stage / "frames" / f"frame_{i:04d}.png", frame)
    names = ["frames"]
    if video is not None:
        grey = lambda x: np.repeat(to_uint8(x)[..., None], 3, axis=-1)  # (V, H, W) -> (V, H, W, 3)
        for name, clip in (
            ("video", frames),
            ("depth", grey(depth_display(depth, opacity))),
            ("accumulation", grey(np.clip(opacity, 0, 1))),
        ):
            write_video(stage / f"{name}.{video}", clip, fps=fps)
            names.append(f"{name}.{video}")
    return names


def write_field(
    field: Tensor, out: Path, kind: Literal["signal", "image", "video", "volume"], video: Optional[str] = None, fps: float = 8.0
) -> list[Path]:
    """Write ``field`` (C, *shape) as the files of ``kind`` into ``out`` (see the module docstring);
    ``video``: ``mp4`` | ``webm`` | ``gif`` | None. Returns the paths written (folders for frame sets)."""
    if kind not in KINDS:
        raise ValueError(f"unknown field kind {kind!r}")
    check_frame_folder(out, kind)
    values = field.detach().float().cpu().numpy()  # (C, *shape)
    lo, hi = display_range(values)
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(dir=out, prefix=".predict-"))
    try:
        names = ["field.npy"]
        with atomic_write(stage / "field.npy") as f:
            np.save(f, np.moveaxis(values, 0, -1))  # (C, *shape) -> (*shape, C)
        shown = (values - lo) / (hi - lo)
        if kind == "views":
            names += _views(stage, values, video, fps)
        elif kind == "signal":
            _plot(stage / "field.png", values)
            names.append("field.png")
        elif kind == "image":
            _png(stage / "image.png", to_uint8(np.moveaxis(shown, 0, -1)))  # (C, H, W) -> (H, W, C)
            names.append("image.png")
        else:
            frames = to_uint8(np.moveaxis(shown if shown.shape[0] in (1, 3) else shown[:1], 0, -1))  # (T, H, W, C)
            folder, stem = FRAME_FOLDERS[kind]
            (stage / folder).mkdir()
            for i, frame in enumerate(frames):
                _png(stage / folder / f"{stem}_{i:04d}.png", frame)
            names.append(folder)
            if video is not None:
                name = f"{'video' if kind == 'video' else 'slices'}.{video}"
                write_video(stage / name, frames, fps=fps)
                names.append(name)
        for name in names:  # into place, each whole: a folder replaces an earlier prediction's (check_frame_folder)
            target = out / name
            if target.is_dir() and not target.is_symlink():
                check_frame_folder(out, kind)  # still only numbered PNGs: moved into the stage, removed with it
                os.replace(target, stage / f".previous-{name}")
            os.replace(stage / name, target)
        return [out / name for name in names]
    finally:
        shutil.rmtree(stage, ignore_errors=True)
