"""Sets of images to score a method over, as the paper's Table 1 does: scikit-image's bundled photographs, the
generated text images, or any folder of images.

    paths = natural_set(Path("out/images"))         # the 8 photographs written as PNGs, ready for ImageDataModule
    paths = text_set(Path("out/images"), 8, 512)     # text images, seeds 0..7
    paths = image_folder("my_photos/")               # every PNG/JPEG/TIFF/BMP in it, sorted by name

The photographs (scikit-image's ``skimage.data``, public domain or CC0 per its documentation) stand in for the
paper's 32 DIV2K crops, which cannot be redistributed here; ``--images DIR`` of the Table 1 command takes the
paper's own images where a user has them (docs/spectral.md says where a public copy is).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import imageio.v3 as iio
import numpy as np

from inr.data.text import save_text_image
from inr.errors import InputError
from inr.extras import require
from inr.io.files import atomic_write

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")


def _skimage(name: str, part: int | None = None) -> Callable[[], np.ndarray]:
    def load() -> np.ndarray:
        photos = require("skimage.data", extra="photos", what="scikit-image's photographs")
        image = getattr(photos, name)()
        return image[part] if part is not None else image

    return load


# scikit-image's photographs, in table order: natural scenes, textures and a microscopy image, colour and grey
NATURAL: dict[str, Callable[[], np.ndarray]] = {
    "astronaut": _skimage("astronaut"),
    "camera": _skimage("camera"),
    "cat": _skimage("chelsea"),
    "coins": _skimage("coins"),
    "grass": _skimage("grass"),
    "gravel": _skimage("gravel"),
    "immunohistochemistry": _skimage("immunohistochemistry"),
    "motorcycle_left": _skimage("stereo_motorcycle", 0),
}


def natural_set(directory: Path, names: tuple[str, ...] = tuple(NATURAL)) -> list[Path]:
    """Write the named photographs as 8-bit PNGs under ``directory`` (each whole or not at all); their paths. A file
    already there is used only if its pixels are the photograph's: another image under its name is refused in one
    line, never scored as the photograph."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        if name not in NATURAL:
            raise InputError(f"unknown image {name!r}; the natural set holds {', '.join(NATURAL)}")
        path, pixels = directory / f"{name}.png", np.asarray(NATURAL[name]())
        if not path.is_file():
            with atomic_write(path, "wb") as f:
                f.write(iio.imwrite("<bytes>", pixels, extension=".png"))
        elif not same_pixels(path, pixels):
            raise InputError(f"{path}: not scikit-image's {name} (its pixels differ): remove it, or choose another folder")
        paths.append(path)
    return paths


def same_pixels(path: Path, pixels: np.ndarray) -> bool:
    """Whether the image file ``path`` decodes to exactly ``pixels`` (an unreadable file does not)."""
    try:
        return np.array_equal(iio.imread(path), pixels)
    except Exception:  # imageio raises many types for files it cannot decode
        return False


def text_set(directory: Path, count: int, size: int) -> list[Path]:
    """``count`` generated text images (seeds 0..count−1) of ``size``² under ``directory``; their paths."""
    if count < 1:
        raise InputError(f"the text set needs at least one image, got {count}")
    directory.mkdir(parents=True, exist_ok=True)
    return [save_text_image(directory / f"text_{seed}.png", size, seed) for seed in range(count)]


def image_folder(directory: str | Path) -> list[Path]:
    """Every image file directly in ``directory``, sorted by name; refused when there is none."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"--images {folder}: not a directory")
    paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS and p.is_file())
    if not paths:
        raise InputError(f"--images {folder}: no image files ({', '.join(IMAGE_EXTENSIONS)}) in it")
    return paths
