"""Text images as targets, like the text set of Tancik et al. 2020: lines of random words in random fonts, sizes
and colours on white; ``TextImageDataModule`` serves one as a grid.

The fonts are the DejaVu faces that matplotlib ships (Sans, Serif, Sans Mono; regular and bold), so a clean
machine renders the same images without downloading anything. Sizes are fractions of the image height and
glyphs are drawn at ``SUPERSAMPLING`` times the size and box-filtered down, so one seed gives the same layout
at every resolution, anti-aliased like a rendered page rather than a pixel font.

Run ``python -m inr.data.text --out text.png [--size 512] [--seed 0]`` to write one to a PNG.
"""

from __future__ import annotations

import colorsys
import random
import string
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFont
from torch import Tensor

from inr.data.module import GridDataModule
from inr.errors import InputError
from inr.io.command_line import CommandParser
from inr.sizes import grid_size

ALPHABET = string.ascii_letters + string.digits
FONT_FACES = (
    "DejaVuSans.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSansMono-Bold.ttf",
)
# Calibrated so that the CPU protocol (256², train on [::2, ::2], 300 steps) separates the mappings as the paper's
# text set does at 512² (docs/spectral.md has the measurements): letter heights of 9–18 % of the image, so even
# at 256² the thinnest strokes span about two training pixels; 3–5 lines with a gap of at least half a line.
FONT_FRACTION = (0.09, 0.18)
LINE_GAP = (0.5, 1.2)  # blank space between lines, in units of the line's font size
# Colours: any hue, saturated, and dark enough to stand out from white (HSV value ≤ 0.85).
SATURATION, VALUE = (0.5, 1.0), (0.15, 0.85)
SUPERSAMPLING = 4  # glyphs rendered at 4× and box-filtered: coverage anti-aliasing at every target size


@cache
def font_directory() -> Optional[Path]:
    """Where matplotlib keeps its bundled TrueType fonts (None without matplotlib)."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is a dependency of the package
        return None
    return Path(matplotlib.get_data_path()) / "fonts" / "ttf"


@lru_cache(maxsize=256)
def load_font(face: str, pixels: int) -> ImageFont.ImageFont:
    """The TrueType face ``face`` at ``pixels`` size; Pillow's built-in face if it cannot be opened."""
    directory = font_directory()
    try:
        if directory is None:
            raise OSError("no font directory")
        return ImageFont.truetype(str(directory / face), pixels)
    except OSError:
        return ImageFont.load_default(size=pixels)


def random_line(rng: random.Random, length: int) -> str:
    """A line of random words (2–8 characters each) drawn from ``ALPHABET``, at least ``length`` characters."""
    words, total = [], 0
    while total < length:
        word = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 8)))
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


def random_colour(rng: random.Random) -> tuple[int, int, int]:
    """A saturated colour of random hue, dark enough to read on white, as 8-bit RGB."""
    r, g, b = colorsys.hsv_to_rgb(rng.random(), rng.uniform(*SATURATION), rng.uniform(*VALUE))
    return round(255 * r), round(255 * g), round(255 * b)


def render_text_image(size: Union[int, tuple[int, int]] = 512, seed: int = 0) -> Tensor:
    """A text image (H, W, 3) float32 in [0, 1]: lines of random words on white, top to bottom, each with a
    random face (``FONT_FACES``), size (``FONT_FRACTION`` of the height), colour and left offset; lines may run
    off the right edge. The same (size, seed) gives the same image for a given Pillow and matplotlib.

    Example:
        >>> img = render_text_image(64, seed=1)
        >>> tuple(img.shape), float(img.max()), bool((img < 0.5).any())
        ((64, 64, 3), 1.0, True)
    """
    height, width = grid_size(size, 2, name="text image size", minimum=8)
    rng = random.Random(seed)
    big_h, big_w = SUPERSAMPLING * height, SUPERSAMPLING * width
    image = Image.new("RGB", (big_w, big_h), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    y = rng.uniform(0.0, 0.05) * big_h
    while True:
        pixels = max(SUPERSAMPLING * 4, round(rng.uniform(*FONT_FRACTION) * big_h))
        if y + 0.8 * pixels > big_h:  # a line that would be cut off at the bottom is not started
            break
        font = load_font(rng.choice(FONT_FACES), pixels)
        x = rng.uniform(-0.05, 0.15) * big_w
        draw.text((x, y), random_line(rng, 2 * big_w // pixels + 2), font=font, fill=random_colour(rng))
        y += pixels * (1.0 + rng.uniform(*LINE_GAP))
    image = image.reduce(SUPERSAMPLING)  # box filter: each output pixel is the mean of a 4×4 block
    return torch.from_numpy(np.asarray(image, dtype=np.float32) / 255.0)  # (H, W, 3)


def save_text_image(path: Union[str, Path], size: Union[int, tuple[int, int]] = 512, seed: int = 0) -> Path:
    """Render a text image and write it as an 8-bit PNG (readable by ``ImageDataModule``)."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise InputError(f"{path}: text images are written as PNG; use a .png name")
    pixels = (render_text_image(size, seed).numpy() * 255.0).round().astype(np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)
    return path


class TextImageDataModule(GridDataModule):
    """A generated text image as a 2D grid of colours; coordinates (y, x) = (row / H, col / W).

    Args:
        resolution: side of the square image, or [h, w].
        text_seed: which random text (independent of ``seed``, the seed of the batch draws).
        split, batch_size, steps_per_epoch, eval_chunk, seed: as in ``GridDataModule``.

    Example:
        >>> dm = TextImageDataModule(resolution=32, split="every_other")
        >>> dm.shape, dm.out_channels, dm.train_shape
        ((32, 32), 3, (16, 16))
    """

    def __init__(
        self,
        resolution: Union[int, list[int]] = 256,
        text_seed: int = 0,
        split: str = "every_other",
        **kwargs: Any,
    ) -> None:
        super().__init__(split=split, **kwargs)
        self.resolution, self.text_seed = resolution, text_seed

    def describe(self) -> str:
        return f"text image (seed {self.text_seed})"

    def load_values(self) -> Tensor:
        size = grid_size(self.resolution, 2, minimum=8)
        self.check_size(size[0] * size[1], 3, 2)
        return render_text_image((size[0], size[1]), self.text_seed)  # (H, W, 3)


def main(argv: Optional[list[str]] = None) -> None:
    parser = CommandParser(prog="python -m inr.data.text", description="Write a random text image (PNG).")
    parser.add_argument("--out", required=True, help="output .png path")
    parser.add_argument("--size", type=int, default=512, help="side of the square image in pixels")
    parser.add_argument("--seed", type=int, default=0, help="seed of the words, fonts, colours and places")
    args = parser.parse_args(argv)
    print(save_text_image(args.out, args.size, args.seed))


if __name__ == "__main__":
    main()
