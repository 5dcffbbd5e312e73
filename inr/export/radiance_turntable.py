"""Turntable frames of a trained radiance field: the camera circles the scene, one rendered view per frame.

The camera (intrinsics), depth range, scene box, background and orbit radius are those the field was trained
with, stored in its checkpoint. The command that writes them as a video is ``python -m inr.run.turntable``.
(``inr.export.turntable`` is the mesh preview of ``inr-mesh --turntable``.)
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from inr.data.cameras import turntable_poses
from inr.errors import InputError


@torch.no_grad()
def turntable_frames(
    model, frames: int = 60, elevation: float = 30.0, radius: Optional[float] = None, resolution: Optional[int] = None
) -> np.ndarray:
    """``frames`` views of ``model`` (a ``RadianceFieldFitting``) from a circle at ``elevation`` degrees and
    ``radius`` (default: the training cameras' mean distance), as uint8 (T, H, W, 3); ``resolution`` sets the
    width (height in proportion)."""
    if frames < 1:
        raise InputError(f"--frames must be ≥ 1, got {frames}")
    if not hasattr(model, "render_view"):
        raise InputError(
            f"a turntable needs a radiance field (RadianceFieldFitting); this checkpoint holds a {type(model).__name__}"
        )
    intrinsics = model.intrinsics
    if resolution is not None:
        if resolution < 8:
            raise InputError(f"--resolution must be ≥ 8 pixels, got {resolution}")
        intrinsics = intrinsics.resized(max(1, round(intrinsics.height * resolution / intrinsics.width)), resolution)
    radius = float(model.orbit_radius) if radius is None else radius
    poses = turntable_poses(frames, elevation, radius)
    model.eval()
    rgb = model.render_views(poses, intrinsics)["rgb"]  # (T, 3, H, W)
    return (rgb.permute(0, 2, 3, 1).cpu().numpy() * 255).round().astype(np.uint8)
