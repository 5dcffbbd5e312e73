"""Rate–distortion curves of the classical anchors (and any codec of ``rd_codecs``) on a set of images, with their
BD-rates against one anchor:

    python -m inr.experiments.rd --images KODAK/ --crop 256 --codecs jpeg,webp,avif,avif-slow,heif --out rd/ --anchor avif

codes every image (its centre ``--crop`` pixels square, or ``--whole``) at each codec's settings and writes, once
everything is measured, one JSON per codec in CompressAI's layout (``<codec>.json``: the mean curve, each image's
curve, the settings: ``rd_results``), ``bd.md`` (each codec's BD-rate and BD-PSNR against ``--anchor``, per image
then averaged and of the mean curves: ``rd_bd``) and ``rd.png`` (PSNR against bpp, the mean curves). Each file is
written whole or not at all; bad input (a missing image, an unknown codec, a crop larger than an image) is one line
and exit 2, before anything is coded or written. ``--keep-files`` keeps every coded file as well,
``files/<codec>/<image>_<point>.<suffix>`` (each written whole as it is made), to decode or take apart later
(``benchmarks/codec_latent_bits.py`` for the latent codec's).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

from inr.errors import InputError
from inr.experiments.rd_codecs import get
from inr.experiments.rd_curve import curve
from inr.experiments.rd_report import bd_table, rd_figure
from inr.experiments.rd_results import document, write
from inr.io.files import atomic_write, refuse_overwriting
from inr.run.command import ExperimentParser, command

DEFAULT_CODECS = "jpeg,webp,avif,avif-slow,heif"


def image_paths(given: list[str]) -> list[Path]:
    """``--images``: each a directory (its image files, sorted) or an image file; comma-separated lists too."""
    from inr.data.image_sets import image_folder

    paths: list[Path] = []
    for text in given:
        for item in filter(None, text.split(",")):
            path = Path(item)
            if path.is_dir():
                paths += image_folder(path)
            elif path.is_file():
                paths.append(path)
            else:
                raise InputError(f"--images {item}: no such file or directory")
    names = [p.name for p in paths]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"--images: {', '.join(repeated)} given twice; each image is named by its file name")
    return paths


def load(path: Path, crop: Optional[int]) -> np.ndarray:
    """An image as the codec reads it, 8-bit (H, W, C ∈ {1, 3}); its centre ``crop`` × ``crop`` pixels unless None."""
    from inr.codec.encode import read_codec_image

    image = read_codec_image(path).numpy()  # (H, W, C) in [0, 1]; a file that is no image: one InputError line
    pixels = np.round(image * 255.0).astype(np.uint8)
    if crop is None:
        return pixels
    height, width = pixels.shape[:2]
    if crop > min(height, width):
        raise InputError(f"--crop {crop}: {path} is {width}×{height}, smaller than the crop; choose a smaller --crop or --whole")
    top, left = (height - crop) // 2, (width - crop) // 2
    return pixels[top : top + crop, left : left + crop]


def codec_names(text: str, anchor: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise InputError("--codecs: no codec named")
    for name in names:
        try:
            get(name)
        except InputError as exc:
            raise InputError(f"--codecs: {exc}") from None
    if len(set(names)) != len(names):
        raise InputError(f"--codecs {text}: a codec named twice")
    if anchor not in names:
        raise InputError(f"--anchor {anchor}: not among --codecs {','.join(names)}")
    return names


def measure(
    images: dict[str, np.ndarray], codecs: list[str], crop: Optional[int], files: Optional[Path] = None
) -> dict[str, dict[str, Any]]:
    """Each codec's ``rd_results`` document over ``images`` (name -> 8-bit pixels), progress on stderr; with
    ``files``, every coded file kept there as it is made (``kept_file``)."""
    docs = {}
    for name in codecs:
        entry = get(name)
        per_image = {}
        for image, pixels in images.items():
            start = time.perf_counter()
            keep = (
                None
                if files is None
                else lambda point, data, image=image, entry=entry: kept_file(files, entry, image, point, data)
            )
            per_image[image] = curve(pixels, name, keep=keep)
            seconds = time.perf_counter() - start
            print(f"{name} {image}: {len(entry.points)} points, {seconds:.1f} s", file=sys.stderr, flush=True)
        size = "whole images" if crop is None else f"{crop}² centre crops"
        settings = {
            "point": entry.point,
            "points": list(entry.points),
            "images": list(images),
            "crop": crop if crop is not None else "whole",
            **entry.settings(),
        }
        description = f"{entry.description}; mean over {len(images)} images ({size})"
        docs[name] = document(name, description, per_image, settings)
    return docs


def kept_file(folder: Path, entry: Any, image: str, point: float, data: bytes) -> Path:
    """One coded file, written whole: ``folder``/<codec>/<image's stem>_<point><the codec's suffix>.

    Example:
        >>> import tempfile; from inr.experiments.rd_codecs import get
        >>> folder = Path(tempfile.mkdtemp())
        >>> kept_file(folder, get("webp"), "kodim05.png", 80, b"RIFF").relative_to(folder).as_posix()
        'webp/kodim05_80.webp'
    """
    path = folder / entry.name / f"{Path(image).stem}_{point:g}{entry.suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as f:
        f.write(data)
    return path


def main(argv: Optional[list[str]] = None) -> None:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--images", nargs="+", required=True, help="image files or directories of them")
    parser.add_argument("--crop", type=int, default=256, help="code each image's centre crop of this side")
    parser.add_argument("--whole", action="store_true", help="code the images whole instead of a --crop crop")
    parser.add_argument("--codecs", default=DEFAULT_CODECS, help="codecs to measure, comma-separated")
    parser.add_argument("--anchor", default="avif", help="the codec the BD-rates are measured against")
    parser.add_argument("--out", required=True, help="the directory the JSONs, bd.md and rd.png are written to")
    parser.add_argument(
        "--keep-files", action="store_true", help="keep every coded file, OUT/files/<codec>/<image>_<point>.<suffix>"
    )
    args = parser.parse_args(argv)

    def body() -> None:
        if not args.whole and args.crop < 1:
            raise InputError(f"--crop {args.crop}: a side must be at least 1 pixel")
        crop = None if args.whole else args.crop
        codecs = codec_names(args.codecs, args.anchor)
        paths = image_paths(args.images)
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise InputError(f"--out {out}: is a file, not a directory")
        refuse_overwriting(out, paths, flag="--out", directory=True)
        images = {p.name: load(p, crop) for p in paths}  # every image read (and cropped) before anything is coded
        docs = measure(images, codecs, crop, out / "files" if args.keep_files else None)
        out.mkdir(parents=True, exist_ok=True)
        for name, doc in docs.items():
            write(out / f"{name}.json", doc)
        table = bd_table(docs, args.anchor)
        with atomic_write(out / "bd.md", "w") as f:
            f.write(table)
        rd_figure(docs, out / "rd.png", f"{len(images)} images, {'whole' if crop is None else f'{crop}² crops'}")
        print(table, end="")

    command(body)


if __name__ == "__main__":
    main()
