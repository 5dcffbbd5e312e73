"""How wide the latent codec's two networks should be on an image of a given size: each width's rate–distortion
curve and its BD-rate against AVIF (Pillow's default, speed 6) on the same crop, measured in one run, with where
the file's bits went (the networks' weights apart from the latents).

    python benchmarks/codec_latent_widths.py IMAGE [IMAGE ...] [--crop 256] [--steps 400]
        [--widths 16x16,8x8] [--lambdas 0.03,0.012,0.005,0.002]

A width "SxA" is the synthesis's hidden width S and the entropy model's A. Each is trained for --steps steps (the
presets' networks and schedule, ``inr.codec.latent_fit``) at every λ. Prints one row per image and width: the
points (bpp / PSNR dB), the mean share of the file the networks' weights take, and the BD-rate against AVIF's
8-point ladder (Akima, ``inr.experiments.rd_bd``; negative: fewer bits than AVIF at equal PSNR), then the mean
BD-rate per width over the images.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from inr.codec.latent_encode import encode_latent_image
from inr.codec.latent_fit import Preset
from inr.errors import InputError
from inr.experiments.rd import load
from inr.experiments.rd_bd import bd_rate
from inr.experiments.rd_curve import curve
from inr.io.command_line import CommandParser
from inr.run.command import command


def widths_of(text: str) -> list[tuple[int, int]]:
    """ "16x16,8x8" -> [(16, 16), (8, 8)]; one line for anything else."""
    out = []
    for part in text.split(","):
        try:
            synthesis, arm = (int(v) for v in part.lower().split("x"))
        except ValueError:
            raise InputError(f"--widths {text!r}: comma-separated SxA pairs of integers, e.g. 16x16,8x8") from None
        if not (1 <= synthesis <= 64 and 1 <= arm <= 64):
            raise InputError(f"--widths {part}: each width 1 … 64")
        out.append((synthesis, arm))
    return out


def lambdas_of(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise InputError(f"--lambdas {text!r}: comma-separated positive numbers") from None
    if not values or not all(v > 0 and math.isfinite(v) for v in values):
        raise InputError(f"--lambdas {text!r}: comma-separated positive numbers")
    return values


def width_curve(pixels: np.ndarray, synthesis: int, arm: int, steps: int, lambdas: list[float]) -> dict[str, list[float]]:
    """bpp, PSNR (the decoder's) and the networks' share of each file, one point per λ."""
    image = torch.from_numpy(pixels.astype(np.float32) / 255.0)
    out: dict[str, list[float]] = {"bpp": [], "psnr": [], "weights share": []}
    for lam in lambdas:
        coded = encode_latent_image(image, lam, Preset(f"{synthesis}x{arm}", steps, synthesis, arm))
        weights = coded.parts["synthesis weights"] + coded.parts["entropy-model weights"]
        out["bpp"].append(coded.bpp)
        out["psnr"].append(coded.psnr)
        out["weights share"].append(weights / (8 * len(coded.data)))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("images", nargs="+", help="image files (their centre --crop pixels are coded)")
    parser.add_argument("--crop", type=int, default=256)
    parser.add_argument("--steps", type=int, default=400, help="training steps of every encode")
    parser.add_argument("--widths", default="16x16,8x8", help="synthesis x entropy-model widths, comma-separated")
    parser.add_argument("--lambdas", default="0.03,0.012,0.005,0.002", help="the λ ladder, comma-separated")
    args = parser.parse_args(argv)

    def body() -> None:
        widths, lambdas = widths_of(args.widths), lambdas_of(args.lambdas)
        if args.steps < 1:
            raise InputError(f"--steps {args.steps}: at least 1")
        images = {Path(p).name: load(Path(p), args.crop) for p in args.images}  # every image read before any encode
        deltas: dict[tuple[int, int], list[float]] = {w: [] for w in widths}
        print(f"{args.crop}² centre crops, {args.steps} steps, λ {', '.join(f'{v:g}' for v in lambdas)}")
        for name, pixels in images.items():
            avif = curve(pixels, "avif")
            for synthesis, arm in widths:
                points = width_curve(pixels, synthesis, arm, args.steps, lambdas)
                delta = bd_rate(avif, points)
                deltas[(synthesis, arm)].append(delta.value)
                shown = " ".join(f"{b:.3f}/{p:.2f}" for b, p in zip(points["bpp"], points["psnr"]))
                print(
                    f"{name} {synthesis}x{arm}: {shown}; weights {100 * np.mean(points['weights share']):.0f} % of the file; "
                    f"BD-rate vs avif {delta.value:+.1f} %{'' if math.isfinite(delta.value) else f' ({delta.reason})'}",
                    flush=True,
                )
        for (synthesis, arm), values in deltas.items():
            print(f"mean over {len(values)} images, {synthesis}x{arm}: BD-rate vs avif {np.mean(values):+.1f} %")

    command(body)


if __name__ == "__main__":
    main()
