"""Text images as targets: random strings in random sizes and colours on white, drawn with Pillow's built-in
font, like the text dataset of Tancik et al. 2020; ``TextImageDataModule`` serves one as a grid.

Run ``python -m inr.data.text --out text.png [--size 512] [--seed 0]`` to write one to a PNG.
"""
from __future__ import annotations

import argparse
import random
import string
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFont
from torch import Tensor

from inr.data.module import GridDataModule
from inr.errors import InputError

ALPHABET = string.ascii_letters + string.digits + ".,;:!?-'"
# Font heights as fractions of the image side: at 512 px, 14–56 px text (small print to headline).
FONT_FRACTION = (0.028, 0.11)


def _font(pixels: int) -> ImageFont.ImageFont:
    """Pillow's built-in font at ``pixels`` height (a scalable FreeType face since Pillow 10.1)."""
    try:
        return ImageFont.load_default(size=pixels)
    except (TypeError, ImportError, OSError):  # Pillow without FreeType: the fixed bitmap font only
        return ImageFont.load_default()


def random_line(rng: random.Random, length: int) -> str:
    """A line of random words (2–9 characters each) drawn from ``ALPHABET``."""
    words, total = [], 0
    while total < length:
        word = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 9)))
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


def render_text_image(size: Union[int, tuple[int, int]] = 512, seed: int = 0) -> Tensor:
    """A text image (H, W, 3) float32 in [0, 1]: lines of random strings on white, top to bottom, each with
    a random font size (``FONT_FRACTION`` of the height), a random dark colour and a random left offset
    (lines may run off the right edge). The same (size, seed) gives the same image for a given Pillow.

    Example:
        >>> img = render_text_image(64, seed=1)
        >>> tuple(img.shape), float(img.max()), bool((img < 0.5).any())
        ((64, 64, 3), 1.0, True)
    """
    height, width = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
    if min(height, width) < 8:
        raise InputError(f"text image size must be at least 8 pixels, got {height}×{width}")
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    y = rng.uniform(0.0, 0.04) * height
    while y < height:
        pixels = max(6, round(rng.uniform(*FONT_FRACTION) * height))
        # dark enough to read on white: every channel at most 180 of 255, at least one at most 90
        colour = [rng.randint(0, 180) for _ in range(3)]
        colour[rng.randrange(3)] = rng.randint(0, 90)
        x = rng.uniform(-0.05, 0.25) * width
        draw.text((x, y), random_line(rng, 2 * width // pixels + 2), font=_font(pixels), fill=tuple(colour))
        y += pixels * rng.uniform(1.05, 1.6)
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
        batch_size: Optional[int] = None,
        steps_per_epoch: Optional[int] = None,
        eval_chunk: int = 65536,
        seed: int = 0,
    ) -> None:
        super().__init__(split=split, batch_size=batch_size, steps_per_epoch=steps_per_epoch, eval_chunk=eval_chunk, seed=seed)
        self.resolution, self.text_seed = resolution, text_seed

    def describe(self) -> str:
        return f"text image (seed {self.text_seed})"

    def load_values(self) -> Tensor:
        size = [self.resolution] * 2 if isinstance(self.resolution, int) else list(self.resolution)
        if len(size) != 2 or min(size) < 8:
            raise InputError(f"data.resolution must be an int or [height, width] ≥ 8, got {self.resolution}")
        self.check_size(size[0] * size[1], 3, 2)
        return render_text_image((size[0], size[1]), self.text_seed)  # (H, W, 3)


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="Write a random text image (PNG).")
    parser.add_argument("--out", required=True, help="output .png path")
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(save_text_image(args.out, args.size, args.seed))


if __name__ == "__main__":
    main()
