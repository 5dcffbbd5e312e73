"""Each coded file decoded on the CPU alone, in two fresh processes (CUDA hidden): at one thread and at THREADS,
and whether the two decodes are the same pixels: the check that a file encoded elsewhere (on a GPU) decodes to
the same image on any CPU, at any thread count.

    python benchmarks/codec_cpu_decode.py FILE.inr [FILE.inr ...] [--threads N]

FILE.inr: any file of ``inr-codec encode`` (either method). Each decode is ``python -m inr.codec decode FILE -o
PNG --threads T`` in a process of its own with ``CUDA_VISIBLE_DEVICES`` empty; its seconds are the process's
wall time, start-up included. Prints one Markdown row per file: its bytes, the two decodes' seconds, the image's
size and "same" or "DIFFERENT". Exit 1 when any file decodes to different pixels or fails to decode (its
decoder's line is printed); 0 when every file decodes the same at both thread counts.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import imageio.v3 as iio
import numpy as np

from inr.io.command_line import CommandParser


def decode_on_cpu(path: str, png: Path, threads: int) -> tuple[float, str]:
    """(wall seconds, the decoder's error line or "") of one decode in a fresh CPU-only process."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, "-m", "inr.codec", "decode", path, "-o", str(png), "--threads", str(threads)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    lines = done.stderr.strip().splitlines()
    return seconds, "" if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")


def same_pixels(a: Path, b: Path) -> bool:
    """Whether two images hold the same pixels (shape and every value)."""
    x, y = iio.imread(a), iio.imread(b)
    return x.shape == y.shape and bool(np.array_equal(x, y))


def main(argv: list[str] | None = None) -> int:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="the second decode's threads")
    args = parser.parse_args(argv)
    if args.threads < 1:
        print(f"error: --threads {args.threads}: at least 1", file=sys.stderr)
        return 2
    print(f"| file | bytes | decode s, 1 thread | decode s, {args.threads} threads | image | pixels |")
    print("|---|---:|---:|---:|---|---|")
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        for i, path in enumerate(args.files):
            one, many = Path(folder) / f"{i}_1.png", Path(folder) / f"{i}_n.png"
            t1, error = decode_on_cpu(path, one, 1)
            tn, error = (math.nan, error) if error else decode_on_cpu(path, many, args.threads)
            name, size = Path(path).name, os.path.getsize(path) if os.path.exists(path) else 0
            if error:
                failed += 1
                print(f"| {name} | {size:,} | {t1:.2f} | — | — | {error} |")
                continue
            same = same_pixels(one, many)
            failed += not same
            shape = iio.imread(one).shape
            print(f"| {name} | {size:,} | {t1:.2f} | {tn:.2f} | {shape[1]}×{shape[0]} | {'same' if same else 'DIFFERENT'} |")
    print(f"\n{len(args.files) - failed} of {len(args.files)} files decode to the same pixels at 1 and {args.threads} threads")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
