"""Where a latent file's bits go, read from the file alone (no encode): each latent level, the two networks'
weights, the range-coded streams, the scale codes, the header and CRC (``inr.codec.latent_coding.file_bits``).

    python benchmarks/codec_latent_bits.py FILE.inr [FILE.inr ...]

FILE.inr: written by ``inr-codec encode --method latents``. Prints, per file, its size and bits per pixel, then a
Markdown table with one row per part: its bits, kbits, share of the file and bits per pixel. The rows marked
"estimate" are what each part costs under the file's own integer tables (a latent level's Σ −log2 P, level 0 the
finest grid) or coded alone (a network's weights); those marked "bytes" are the file's own byte counts, which add
up to the file exactly. A missing, damaged or foreign file is one ``error:`` line and exit 2.
"""

from __future__ import annotations

from pathlib import Path

from inr.codec.coding import read_file
from inr.codec.latent_coding import STREAMS, file_bits
from inr.codec.latent_file import unpack
from inr.io.command_line import CommandParser
from inr.run.command import command

COUNTED = (*STREAMS, "scale codes", "header and CRC")  # file_bits' parts that are byte counts


def table(path: str) -> list[str]:
    """The lines printed for one file."""
    data = read_file(path)
    bits = file_bits(data, path)
    spec = unpack(data, path)[0].spec
    pixels = spec.height * spec.width
    total = 8 * len(data)
    lines = [
        f"{Path(path).name}: {len(data):,} bytes, {spec.width}×{spec.height}, {total / pixels:.4f} bpp "
        f"({spec.levels} levels, networks {spec.synthesis} and {spec.arm} wide)",
        "",
        "| part | counted as | bits | kbits | share of the file | bpp |",
        "|---|---|---|---|---|---|",
    ]
    for name, value in bits.items():
        kind = "bytes" if name in COUNTED else "estimate"
        lines.append(f"| {name} | {kind} | {value:,.0f} | {value / 1000:.2f} | {value / total:.1%} | {value / pixels:.4f} |")
    lines.append(f"| file | bytes | {total:,} | {total / 1000:.2f} | 100.0% | {total / pixels:.4f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args(argv)

    def body() -> None:
        for i, path in enumerate(args.files):
            print(("\n" if i else "") + "\n".join(table(path)))

    command(body)


if __name__ == "__main__":
    main()
