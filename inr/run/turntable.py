"""``python -m inr.run.turntable``: a turntable video of a trained radiance field, from a checkpoint.

    python -m inr.run.turntable --ckpt runs/nerf/version_0/checkpoints/last.ckpt --out turntable.gif
    python -m inr.run.turntable --ckpt last.ckpt --out turntable.mp4 --frames 90 --elevation 35 --resolution 128 --fps 30

The model is rebuilt from its run's ``config.yaml`` as data (``inr.run.model_loader``); the frames are
``inr.export.radiance_turntable.turntable_frames``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from inr.errors import EXIT_INPUT, InputError
from inr.export.radiance_turntable import turntable_frames
from inr.io.command_line import CommandParser
from inr.io.files import refuse_overwriting
from inr.io.video import WRITABLE, write_video
from inr.run.model_loader import load_model
from inr.run.program import add_trust_argument


def show_progress(done: int, total: int) -> None:
    """``turntable: frame t/T`` on stderr, redrawn in place (at most about a hundred times per video)."""
    if done == total or done % max(1, total // 100) == 0:
        print(f"\rturntable: frame {done}/{total}", end="\n" if done == total else "", file=sys.stderr, flush=True)


def main(argv: Optional[list[str]] = None) -> Path:
    """``python -m inr.export.radiance_turntable``: checkpoint -> video; bad input -> one line, exit 2."""
    parser = CommandParser(
        prog="python -m inr.run.turntable",
        description="Render a turntable video of a trained radiance field.",
        run_config="the run's config.yaml (default: next to checkpoints/)",
    )
    parser.add_argument("--ckpt", required=True, help="checkpoint of a RadianceFieldFitting run")
    parser.add_argument("--out", required=True, help="output video: .gif, .mp4 or .webm")
    parser.add_argument("--frames", type=int, default=60, help="frames of one turn (default 60)")
    parser.add_argument("--elevation", type=float, default=30.0, help="camera elevation in degrees")
    parser.add_argument("--radius", type=float, default=None, help="camera distance (default: the training cameras')")
    parser.add_argument("--resolution", type=int, default=None, help="frame width in pixels (default: the training views')")
    parser.add_argument("--fps", type=float, default=20.0, help="frames per second of the video (default 20)")
    add_trust_argument(parser)
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        if out.suffix.lower() not in WRITABLE:
            raise InputError(f"{out}: unsupported video extension {out.suffix!r}; use one of {', '.join(WRITABLE)}")
        if args.fps <= 0 or (args.radius is not None and args.radius <= 0):
            raise InputError("--fps and --radius must be positive")
        refuse_overwriting(out, [args.ckpt, args.config], "--out")
        model = load_model(args.ckpt, args.config, trust=args.trust, imported=False)
        frames = turntable_frames(model, args.frames, args.elevation, args.radius, args.resolution, progress=show_progress)
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
