"""``inr-mesh``: the level-set mesh of a trained 3D field, from a checkpoint and its run's config.

inr-mesh --ckpt runs/volume/version_0/checkpoints/last.ckpt --out mesh.ply   # or python -m inr.run.mesh
python -m inr.run.mesh --ckpt last.ckpt --config runs/volume/version_0/config.yaml --resolution 256 --level 0.5
inr-mesh --ckpt last.ckpt --out mesh.glb --turntable mesh.mp4          # GLB (or .stl) and a turntable video of it
inr-mesh --ckpt runs/nerf/version_0/checkpoints/last.ckpt --out scene.glb --level 20   # a radiance field: σ ≥ 20
inr-mesh --ckpt runs/nerf/version_0/checkpoints/last.ckpt --points scene.ply           # its point cloud

A radiance field is meshed where its density σ crosses ``--level`` (default: ln 2 / voxel, one voxel half
opaque), with the field's colours (``inr.export.radiance_mesh``); the threshold used is printed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Union

from inr.errors import EXIT_INPUT, InputError
from inr.io.command_line import CommandParser
from inr.io.files import refuse_overwriting
from inr.io.progress import reporting
from inr.run.program import add_trust_argument, program_name

# The meshing, video and checkpoint-loading modules (torch, Lightning) load in main once the arguments are read,
# so that --help and a refused argument answer in a moment.


def check_video_target(path: Union[str, Path], frames: int) -> None:
    """Refuse a turntable request that could only fail after meshing: its extension, the extra, the frame count."""
    from inr.io.video import ENCODERS, WRITABLE, require_pyav

    suffix = Path(path).suffix.lower()
    if suffix not in WRITABLE:
        raise InputError(
            f"--turntable {path}: unsupported video extension {Path(path).suffix!r}; use one of {', '.join(WRITABLE)}"
        )
    if suffix in ENCODERS:
        require_pyav(f"--turntable {suffix}")
    if frames < 1:
        raise InputError(f"--frames must be at least 1, got {frames}")


def main(argv: Optional[list[str]] = None) -> Path:
    """``inr-mesh`` / ``python -m inr.run.mesh``: checkpoint -> mesh file; bad input -> one line, exit 2."""
    prog = program_name("inr-mesh", "python -m inr.run.mesh")
    parser = CommandParser(
        prog=prog,
        description="Mesh the level set of a trained 3D field.",
        run_config="the run's config.yaml (default: next to checkpoints/)",
    )
    parser.add_argument("--ckpt", required=True, help="checkpoint of a VolumeFitting (or other 3-D) run")
    parser.add_argument("--out", default=None, help="output mesh: .ply, .obj, .stl or .glb")
    parser.add_argument("--points", default=None, help="a radiance field: its point cloud of σ ≥ --level, .ply or .glb")
    parser.add_argument("--resolution", type=int, default=128, help="render grid per axis (default 128)")
    parser.add_argument(
        "--level",
        type=float,
        default=None,
        help="iso-level (default: the model's, 0.5 or 0 for a distance); a radiance field's density threshold "
        "(default ln 2 / voxel: one voxel half opaque)",
    )
    parser.add_argument("--chunk", type=int, default=None, help="coordinates per forward pass")
    parser.add_argument("--turntable", default=None, help="also a turntable video of the mesh (.mp4, .webm or .gif)")
    parser.add_argument("--frames", type=int, default=36, help="frames of the turntable (default 36, one per 10°)")
    add_trust_argument(parser)
    args = parser.parse_args(argv)
    if args.out is None and args.points is None:
        parser.error("give --out (a mesh) or --points (a radiance field's point cloud)")
    from inr.export.mesh import MESH_EXTENSIONS, POINT_EXTENSIONS, extract_mesh, mesh_report, write_mesh, write_points
    from inr.export.radiance_mesh import is_radiance_field, radiance_mesh, radiance_points
    from inr.export.turntable import turntable_frames
    from inr.io.video import write_video
    from inr.run.model_loader import load_model

    written = []
    try:
        if args.out is not None and Path(args.out).suffix.lower() not in MESH_EXTENSIONS:
            raise InputError(
                f"{args.out}: unsupported mesh extension {Path(args.out).suffix!r}; use {', '.join(MESH_EXTENSIONS)}"
            )
        if args.points is not None and Path(args.points).suffix.lower() not in POINT_EXTENSIONS:
            raise InputError(
                f"{args.points}: unsupported point-cloud extension {Path(args.points).suffix!r}; use {' or '.join(POINT_EXTENSIONS)}"
            )
        if args.resolution < 2:
            raise InputError(f"--resolution must be at least 2, got {args.resolution}")
        if args.chunk is not None and args.chunk < 1:
            raise InputError(f"--chunk must be at least 1 coordinate, got {args.chunk}")
        if args.turntable is not None:
            if args.out is None:
                raise InputError("--turntable shows the mesh: give --out too")
            check_video_target(args.turntable, args.frames)
        for flag, path in (("--out", args.out), ("--points", args.points), ("--turntable", args.turntable)):
            refuse_overwriting(path, [args.ckpt, args.config], flag)
        model = load_model(args.ckpt, args.config, trust=args.trust, imported=False)
        radiance = is_radiance_field(model)
        if args.points is not None and not radiance:
            raise InputError(
                f"--points: a point cloud of density needs a radiance field; this checkpoint holds a {type(model).__name__}"
            )
        with reporting(f"mesh: sampling the field at {args.resolution}³"):
            if radiance and args.out is not None:
                geometry = radiance_mesh(model, args.resolution, args.level, args.chunk)
                verts, faces, colors = geometry.verts, geometry.faces, geometry.colors
            elif args.out is not None:
                verts, faces = extract_mesh(model, args.resolution, args.level, chunk=args.chunk)
                colors = None
            if args.points is not None:
                cloud = radiance_points(model, args.resolution, args.level, args.chunk)
        if args.out is not None:
            written.append(f"mesh: {mesh_report(verts, faces)} -> {write_mesh(args.out, verts, faces, colors)}")
            if radiance:
                written.append(f"mesh: {geometry.describe()}")
        if args.points is not None:
            written.append(
                f"points: {len(cloud.points):,} samples of {cloud.describe()} -> {write_points(args.points, cloud.points, cloud.colors)}"
            )
        if args.turntable is not None:
            write_video(args.turntable, turntable_frames(verts, faces, args.frames), fps=12)
            written.append(f"turntable: {args.frames} frames -> {args.turntable}")
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None
    except OSError as exc:
        print(f"error: cannot write {exc.filename or args.out or args.points}: {exc.strerror or exc}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None
    for line in written:
        print(line)
    return Path(args.out if args.out is not None else args.points)


if __name__ == "__main__":
    main()
