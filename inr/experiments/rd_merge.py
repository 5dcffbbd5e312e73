"""Rate–distortion runs of the same codecs on different images, merged into one: a long run split by image over
several processes or machines (``python -m inr.experiments.rd`` on each part) gives the table and figure of the
whole, each codec's per-image curves joined and its mean curve recomputed over all of them.

    python -m inr.experiments.rd_merge runs/rd_part1 runs/rd_part2 --anchor avif --out runs/rd

A codec may be in some parts only (the anchors measured once, a new codec in parts of its own). An image measured
twice for one codec must have the same rates and PSNRs in both (a deterministic encoder run twice; the first
part's timings are kept), else it is refused; so is a codec whose settings differ between parts, and one that lacks
an image the anchor has: every BD-rate compares the same images.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

from inr.errors import InputError
from inr.experiments.rd_report import bd_table, rd_figure
from inr.experiments.rd_results import document, read, write
from inr.io.files import atomic_write, refuse_overwriting
from inr.run.command import ExperimentParser, command


def configuration(doc: dict[str, Any]) -> dict[str, Any]:
    """A run's settings less the images it measured."""
    return {k: v for k, v in doc.get("settings", {}).items() if k != "images"}


def merged(parts: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """One document per codec from each part's documents (codec -> ``rd_results`` document)."""
    out = {}
    names = list(dict.fromkeys(name for part in parts for name in part))
    for name in names:
        docs = [part[name] for part in parts if name in part]
        per_image: dict[str, Any] = {}
        for doc in docs:
            if configuration(doc) != configuration(docs[0]):
                raise InputError(f"{name}: run with other settings in another part; merge only runs of one configuration")
            for image, curve in doc["per_image"].items():
                if image in per_image:
                    if any(curve[m] != per_image[image][m] for m in ("bpp", "psnr")):
                        raise InputError(f"{name}: image {image} is in two parts with different results")
                    continue
                per_image[image] = curve
        settings = {**docs[0].get("settings", {}), "images": list(per_image)}
        # a part's description counts its own images; the merged document's counts all of them
        description = re.sub(r"mean over \d+ images", f"mean over {len(per_image)} images", docs[0].get("description", name))
        out[name] = document(name, description, per_image, settings)
    return out


def check_images(docs: dict[str, dict[str, Any]], anchor: str) -> None:
    """Refuse a codec that lacks an image of the anchor's."""
    wanted = set(docs[anchor]["per_image"])
    for name, doc in docs.items():
        missing = sorted(wanted - set(doc["per_image"]))
        if missing:
            raise InputError(f"{name}: no results for {', '.join(missing)}, which the anchor {anchor} has")


def main(argv: Optional[list[str]] = None) -> None:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("parts", nargs="+", help="directories written by python -m inr.experiments.rd")
    parser.add_argument("--anchor", default="avif", help="the codec the BD-rates are measured against")
    parser.add_argument("--out", required=True, help="the directory the merged JSONs, bd.md and rd.png are written to")
    args = parser.parse_args(argv)

    def body() -> None:
        folders = [Path(p) for p in args.parts]
        parts = []
        for folder in folders:
            files = sorted(folder.glob("*.json")) if folder.is_dir() else []
            if not files:
                raise InputError(f"{folder}: no rate–distortion JSON files (a directory written by python -m inr.experiments.rd)")
            parts.append({f.stem: read(f) for f in files})
        docs = merged(parts)
        if args.anchor not in docs:
            raise InputError(f"--anchor {args.anchor}: not among the merged codecs {', '.join(docs)}")
        check_images(docs, args.anchor)
        out = Path(args.out)
        refuse_overwriting(out, folders, flag="--out", directory=True)
        table = bd_table(docs, args.anchor)
        out.mkdir(parents=True, exist_ok=True)
        for name, doc in docs.items():
            write(out / f"{name}.json", doc)
        with atomic_write(out / "bd.md", "w") as f:
            f.write(table)
        images = len(next(iter(docs.values()))["per_image"])
        rd_figure(docs, out / "rd.png", f"{images} images (merged from {len(parts)} runs)")
        print(table, end="")

    command(body)


if __name__ == "__main__":
    main()
