"""Turntable videos of a trained radiance field: the camera circles the scene, one rendered view per frame.

    python -m inr.export.radiance_turntable --ckpt runs/nerf/version_0/checkpoints/last.ckpt --out turntable.gif
    python -m inr.export.radiance_turntable --ckpt last.ckpt --out turntable.mp4 --frames 90 --elevation 35 --resolution 128 --fps 30

The model is rebuilt from its run's ``config.yaml`` (as ``inr.export.mesh`` does); the camera (intrinsics),
depth range, scene box, background and orbit radius are those the field was trained with, stored in its
checkpoint. Written by ``inr.export.video.write_video`` (``.gif``, ``.mp4``, ``.webm``); the file appears whole or
not at all. (``inr.export.turntable`` is the mesh preview of ``inr-mesh --turntable``.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from inr.data.cameras import turntable_poses
from inr.errors import EXIT_INPUT, InputError
from inr.export.video import WRITABLE, write_video


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


def main(argv: Optional[list[str]] = None) -> Path:
    """``python -m inr.export.radiance_turntable``: checkpoint -> video; bad input -> one line, exit 2."""
    parser = argparse.ArgumentParser(
        prog="python -m inr.export.radiance_turntable", description="Render a turntable video of a trained radiance field."
    )
    parser.add_argument("--ckpt", required=True, help="checkpoint of a RadianceFieldFitting run")
    parser.add_argument("--out", required=True, help="output video: .gif, .mp4 or .webm")
    parser.add_argument("--config", default=None, help="the run's config.yaml (default: next to checkpoints/)")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--elevation", type=float, default=30.0, help="camera elevation in degrees")
    parser.add_argument("--radius", type=float, default=None, help="camera distance (default: the training cameras')")
    parser.add_argument("--resolution", type=int, default=None, help="frame width in pixels (default: the training views')")
    parser.add_argument("--fps", type=float, default=20.0)
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        if out.suffix.lower() not in WRITABLE:
            raise InputError(f"{out}: unsupported video extension {out.suffix!r}; use one of {', '.join(WRITABLE)}")
        if args.fps <= 0 or (args.radius is not None and args.radius <= 0):
            raise InputError("--fps and --radius must be positive")
        from inr.run.model_loader import load_model

        model = load_model(args.ckpt, args.config)
        frames = turntable_frames(model, args.frames, args.elevation, args.radius, args.resolution)
        write_video(out, frames, args.fps)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None
    except OSError as exc:
        print(f"error: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None
    print(f"turntable: {len(frames)} frames of {frames.shape[2]}×{frames.shape[1]} -> {out}")
    return out


if __name__ == "__main__":
    main()
