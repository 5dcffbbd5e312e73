"""Where in frequency a latent file's error lies, beside AVIF's at the same rate: the relative error per radial band
Δ_b = ‖F[decoded − image]‖_b / ‖F[image]‖_b (``inr.spectral.bands.band_relative_error``, 8 linear bands up to the
Nyquist frequency, DC apart) of the latent file and of the AVIF file (Pillow's default, speed 6) of the highest
quality whose size is at most the latent file's.

    python benchmarks/codec_latent_bands.py IMAGE FILE.inr [--crop 256]

FILE.inr: the image (centre-cropped to --crop, as ``inr.experiments.rd`` crops) coded with
``inr-codec encode --method latents``. Prints one row per band: its edges in cycles per image, Δ_b of both files.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from inr.codec.classical import at_rate
from inr.codec.coding import decode, read_file
from inr.codec.encode import read_codec_image
from inr.errors import InputError
from inr.io.command_line import CommandParser
from inr.run.command import command
from inr.spectral.bands import band_relative_error

BANDS = 8


def centre_crop(pixels: np.ndarray, side: int) -> np.ndarray:
    h, w = pixels.shape[:2]
    if side > min(h, w):
        raise InputError(f"--crop {side}: larger than the image's {w}×{h}")
    top, left = (h - side) // 2, (w - side) // 2
    return pixels[top : top + side, left : left + side]


def band_errors(decoded: np.ndarray, image: np.ndarray) -> np.ndarray:
    as_channels = lambda a: torch.from_numpy(a.astype(np.float64) / 255.0).permute(2, 0, 1)  # noqa: E731
    errors, _ = band_relative_error(as_channels(decoded), as_channels(image), num_bands=BANDS)
    return errors.numpy()


def main(argv: list[str] | None = None) -> None:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image")
    parser.add_argument("file")
    parser.add_argument("--crop", type=int, default=256)
    args = parser.parse_args(argv)

    def body() -> None:
        image = np.round(read_codec_image(args.image).numpy() * 255).astype(np.uint8)
        image = centre_crop(image, args.crop) if args.crop else image
        data = read_file(args.file)
        latent = decode(data, args.file)
        if latent.shape != image.shape:
            raise InputError(
                f"{args.file}: a {latent.shape[1]}×{latent.shape[0]} image, not the {image.shape[1]}×{image.shape[0]} crop"
            )
        bpp = 8 * len(data) / (image.shape[0] * image.shape[1])
        avif = at_rate(image, "avif", bpp)
        if avif is None:
            raise InputError(f"AVIF writes no file of at most {bpp:.4f} bpp for {args.image}")
        psnr = lambda a: 10 * math.log10(255**2 / np.mean((a.astype(float) - image) ** 2))  # noqa: E731
        print(
            f"{Path(args.image).name}: latent {bpp:.4f} bpp {psnr(latent):.2f} dB; AVIF q{avif.quality} "
            f"{avif.size_bits / image.shape[0] / image.shape[1]:.4f} bpp {psnr(avif.pixels):.2f} dB"
        )
        nyquist = image.shape[0] / 2
        print("| band (cycles per image) | latent Δ_b | AVIF Δ_b |")
        print("|---|---|---|")
        for b, (mine, theirs) in enumerate(zip(band_errors(latent, image), band_errors(avif.pixels, image))):
            print(f"| {b * nyquist / BANDS:.0f}–{(b + 1) * nyquist / BANDS:.0f} | {mine:.3f} | {theirs:.3f} |")

    command(body)


if __name__ == "__main__":
    main()
