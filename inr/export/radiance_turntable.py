"""Turntable frames of a trained radiance field: the camera circles the scene, one rendered view per frame.

The camera (intrinsics), depth range, scene box, background and orbit radius are those the field was trained
with, stored in its checkpoint. The command that writes them as a video is ``python -m inr.run.turntable``.
(``inr.export.turntable`` is the mesh preview of ``inr-mesh --turntable``.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Optional

import numpy as np
import torch

from inr.data.cameras import turntable_poses
from inr.errors import EXIT_INPUT, InputError, check_memory

MAX_FRAMES = 100_000  # an hour at 25 fps; more is a typo, and rendering it would take days


@torch.no_grad()
def turntable_frames(
    model,
    frames: int = 60,
    elevation: float = 30.0,
    radius: Optional[float] = None,
    resolution: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> np.ndarray:
    """``frames`` views of ``model`` (a ``RadianceFieldFitting``) from a circle at ``elevation`` degrees and
    ``radius`` (default: the training cameras' mean distance), as uint8 (T, H, W, 3); ``resolution`` sets the
    width (height in proportion). Sized before rendering (the frames as bytes, one view's float buffers and
    its ray chunk); rendered view by view, ``progress(done, total)`` called after each."""
    if not 1 <= frames <= MAX_FRAMES:
        raise InputError(f"--frames must be between 1 and {MAX_FRAMES:,}, got {frames:,}")
    if not hasattr(model, "render_view"):
        raise InputError(
            f"a turntable needs a radiance field (RadianceFieldFitting); this checkpoint holds a {type(model).__name__}"
        )
    intrinsics = model.intrinsics
    if resolution is not None:
        if resolution < 8:
            raise InputError(f"--resolution must be ≥ 8 pixels, got {resolution}")
        intrinsics = intrinsics.resized(max(1, round(intrinsics.height * resolution / intrinsics.width)), resolution)
    height, width = intrinsics.height, intrinsics.width
    # the uint8 frames, plus one view's colour, depth and opacity (float32, twice: rendered and stacked) and the
    # samples of one render chunk (points, directions, outputs: about 16 floats per sample)
    samples = int(getattr(getattr(model, "renderer", None), "samples", 64)) * 2
    n_bytes = (
        frames * height * width * 3 + 2 * 5 * 4 * height * width + 16 * 4 * samples * min(model.render_chunk, height * width)
    )
    check_memory(
        f"a turntable of {frames:,} frames of {width:,}×{height:,}",
        n_bytes,
        advice="choose fewer --frames or a smaller --resolution",
    )
    radius = float(model.orbit_radius) if radius is None else radius
    poses = turntable_poses(frames, elevation, radius)
    model.eval()
    out = np.empty((frames, height, width, 3), dtype=np.uint8)
    for t, pose in enumerate(poses):
        rgb = model.render_view(pose, intrinsics)["rgb"]  # (3, H, W)
        out[t] = (rgb.permute(1, 2, 0).cpu().numpy() * 255).round().astype(np.uint8)
        if progress is not None:
            progress(t + 1, frames)
    return out


if __name__ == "__main__":  # the command this module was before the re-layout: a script calling it must not succeed silently
    print(
        "error: python -m inr.export.radiance_turntable is no longer a command; run python -m inr.run.turntable with the same options",
        file=sys.stderr,
    )
    raise SystemExit(EXIT_INPUT)
