"""The expected time of coding a folder of images with the latent codec: a few training steps of a preset timed on
the first image (where training runs: a GPU when torch sees one), times the preset's steps, the λ ladder the
rate–distortion run measures and the images (``benchmarks/codec_latent_kodak.sh`` prints it before its run).

    python -m inr.codec.latent_estimate KODAK_DIR --preset slow
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from inr.errors import InputError
from inr.io.command_line import CommandParser
from inr.run.command import command

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")
LADDER_POINTS = 4  # the rate–distortion run's λ's (inr.experiments.rd_codecs.LATENT_LAMBDAS)


def main(argv: Optional[list[str]] = None) -> None:
    parser = CommandParser(prog="python -m inr.codec.latent_estimate", description=__doc__.split("\n\n")[0])
    parser.add_argument("images", help="a folder of images")
    parser.add_argument("--preset", default="slow", help="fast, medium or slow (default: %(default)s)")
    args = parser.parse_args(argv)

    def body() -> None:
        from inr.codec.encode import read_codec_image
        from inr.codec.latent_encode import preset_of, step_seconds
        from inr.io.progress import format_seconds

        preset = preset_of(args.preset)
        folder = Path(args.images)
        paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES) if folder.is_dir() else []
        if not paths:
            raise InputError(f"{folder}: no folder of images")
        seconds = step_seconds(read_codec_image(paths[0]), preset) * preset.steps
        total = seconds * LADDER_POINTS * len(paths)
        print(
            f"{len(paths)} images × {LADDER_POINTS} λ × {preset.steps} steps ({preset.name}): "
            f"about {format_seconds(seconds)} per file, {format_seconds(total)} in all here"
        )

    command(body)


if __name__ == "__main__":
    main()
