"""The networks a codec comparison trains for a folder of whole images at given rates, so that their inits can be
learned first (``benchmarks/codec_kodak.sh``):

    python -m inr.experiments.codec_sizes KODAK/ --bpp 0.1,0.2,0.3,0.5,1        # prints: 512 40,56,64,80,128

prints the images' shorter side and the widths, comma-separated — the ``--resolution`` and ``--width`` of
``inr-codec learn-init``. The width at a rate r for an H × W image is the search's one network per rate
(``inr.codec.search.size_for_budget`` on r·H·W bits), as ``inr-codec compare --whole`` picks it.
"""

from __future__ import annotations

from typing import Optional

from inr.codec.encode import read_codec_image
from inr.codec.search import parse_rates
from inr.data.image_sets import image_folder
from inr.errors import InputError
from inr.experiments.codec import CodecComparison
from inr.run.command import ExperimentParser, command


def widths_for(directory: str, rates: str, method: str = "siren") -> tuple[int, list[int]]:
    """(the images' shorter side, the sorted distinct widths of ``method`` the comparison trains at ``rates``)."""
    shapes = {tuple(read_codec_image(path).shape) for path in image_folder(directory)}  # (H, W, C) each
    sides = {min(shape[:2]) for shape in shapes}
    if len(sides) > 1:
        raise InputError(f"{directory}: images of shorter sides {sorted(sides)}; an init is learned for one side")
    comparison = CodecComparison()
    widths = {comparison.arch(method, rate, 0, shape).width for shape in shapes for rate in parse_rates(rates)}
    return sides.pop(), sorted(widths)


def main(argv: Optional[list[str]] = None) -> None:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("images", help="a directory of the images to code")
    parser.add_argument("--bpp", required=True, help="rates in bits per pixel, comma-separated")
    parser.add_argument("--method", default="siren", help="a method of the registry")
    args = parser.parse_args(argv)

    def body() -> None:
        side, widths = widths_for(args.images, args.bpp, args.method)
        print(side, ",".join(str(w) for w in widths))

    command(body)


if __name__ == "__main__":
    main()
