"""``inr-codec``: images to ``.inr`` files and back, and the rate–distortion comparison with JPEG, WebP and AVIF.

    inr-codec encode image.png -o image.inr --method latents --lambda 0.005   # latent grids (or --bpp / --psnr)
    inr-codec encode a.png b.png -o coded/ --method latents --lambda 0.02,0.003   # stacked: a file per image and λ
    inr-codec encode image.png -o image.inr --bpp 0.3        # a SIREN's weights (COIN); or --psnr 30, --params 3000
    inr-codec decode image.inr -o out.png
    inr-codec compare DIR --bpp 0.1,0.2,0.3,0.5,1 --out runs/codec   # = python -m inr.experiments.codec --images DIR
    inr-codec learn-init PHOTOS -o inits/ --bpp 0.1,0.2,0.3,0.5,1   # learned inits (inr.codec.learn)
    inr-codec encode image.png -o image.inr --bpp 0.3 --init inits/    # coded against a learned init
    inr-codec decode image.inr -o out.png --init inits/

Bad input (a missing image, a target no file can meet, an unwritable output, a damaged file) is one ``error:``
line and exit 2, before any training where it can be known then; outputs are written whole or not at all.

Each subcommand imports what it runs when it runs: ``--help`` loads no torch, and ``decode`` no Lightning and no
training (``benchmarks/startup.py`` measures both; tests/codec/test_golden.py checks what a decode imports).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Optional

from inr.codec.architecture import Architecture, codec_methods
from inr.codec.bounds import MAX_DECODE_WORK
from inr.codec.output_files import check_output, write_bytes
from inr.codec.sizes import default_depth, ladder, parse_rates, size_for_budget
from inr.errors import EXIT_INPUT, InputError
from inr.io.command_line import CommandParser
from inr.io.files import refuse_overwriting
from inr.io.progress import reporting
from inr.run.command import command

if TYPE_CHECKING:
    import numpy as np

    from inr.codec.search import Choice

LEARN_HELP = "meta-learn inits the encoder and decoder share (one per network size)"
ENCODE_EPILOG = """time and quality:
  Each network trains --steps full-batch steps over every pixel, so the time grows with steps × pixels × the
  network's size: a --bpp target trains up to three widths, --psnr trains wider ones until one reaches it,
  --params one. More steps raise the PSNR (quickly at first, slowly after a few hundred); a wider network pays
  only at a higher rate. A 768×512 photograph at the defaults can take hours on a 2-core CPU, a 192² crop at
  300 steps seconds. The command prints its expected time (a few steps timed on a crop, scaled) before it
  trains, and refuses past --budget-minutes."""


class Parser(CommandParser):
    """A bad argument is one line on stderr and exit 2 (argparse's own prints the usage block first); ``--config``
    and ``--print_config`` after a subcommand, as every command takes them."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT)


def png_bytes(pixels: np.ndarray) -> bytes:
    """An 8-bit PNG of (H, W, C) pixels (a gray image as one channel)."""
    import imageio.v3 as iio

    return iio.imwrite("<bytes>", pixels[:, :, 0] if pixels.shape[2] == 1 else pixels, extension=".png")


def describe(choice: Choice, pixels: int) -> str:
    """``7,412 bytes = 0.905 bpp, PSNR 27.31 dB; siren 4 × 24 at 8 bits, a step per channel``."""
    quantiser = "a step per output channel" if choice.per_channel else "a step per tensor"
    init = f", the change from the learned init {choice.init.digest.hex()}" if choice.init is not None else ""
    return (
        f"{len(choice.data):,} bytes = {choice.size_bits / pixels:.4f} bpp, PSNR {choice.psnr:.2f} dB; "
        f"{choice.arch.label()} at {choice.bits} bits, {quantiser}{init}"
    )


def encode_command(args: argparse.Namespace) -> None:
    if args.method == "latents":
        from inr.codec.latent_command import latent_encode_command

        return latent_encode_command(args)
    from inr.codec.encode import Target, encode_images, read_codec_image  # the training: Lightning loads here

    if len(args.image) > 1:
        raise InputError(
            f"{len(args.image)} images: a network's file codes one image at a time (--method latents codes several as stacked members)"
        )
    (args.image,) = args.image
    if args.lam is not None:
        raise InputError("--lambda: the rate's weight of --method latents; a network's file takes --bpp, --psnr or --params")

    kinds = [(k, v) for k, v in (("bpp", args.bpp), ("psnr", args.psnr), ("params", args.params)) if v is not None]
    target = Target(*kinds[0])
    target.check()
    out = Path(args.output)
    check_output(out, "encode")
    refuse_overwriting(out, [args.image, args.init])
    image = read_codec_image(args.image)
    if args.init is not None and not Path(args.init).exists():
        raise InputError(f"--init {args.init}: no such file or directory")
    if not args.budget_minutes > 0:
        raise InputError(f"--budget-minutes {args.budget_minutes:g}: the minutes the encode may take, > 0")
    start = time.perf_counter()
    (choice,) = encode_images(
        [image],
        target,
        method=args.method,
        depth=args.depth,
        steps=args.steps,
        seed=args.seed,
        bits=args.bits,
        finetune_steps=args.finetune_steps,
        init=args.init,
        sources=[str(args.image)],
        budget=args.budget_minutes * 60,
    )
    write_bytes(out, choice.data)
    seconds = time.perf_counter() - start
    print(f"wrote {out}: {describe(choice, image.shape[0] * image.shape[1])}; encoded in {seconds:.1f} s")


def decode_command(args: argparse.Namespace) -> None:
    from inr.codec.coding import decode, read_file  # torch, the table's classes and the range coder; no training

    out = Path(args.output)
    check_output(out, "decode")
    refuse_overwriting(out, [args.file, args.init])
    if not args.max_work > 0:
        raise InputError(f"--max-work {args.max_work:g}: a number of multiply-adds > 0, e.g. 1e13")
    start = time.perf_counter()
    with reporting(f"decoding {args.file}"):
        pixels = decode(read_file(args.file), source=str(args.file), init=args.init, max_work=args.max_work)
    seconds = time.perf_counter() - start
    write_bytes(out, png_bytes(pixels))
    height, width, channels = pixels.shape
    print(f"wrote {out}: {width}×{height}, {'gray' if channels == 1 else 'RGB'}; decoded in {seconds:.2f} s")


def learn_command(args: argparse.Namespace) -> None:
    from inr.codec.learn import learn_inits
    from inr.methods.meta import MetaSettings

    if args.method not in codec_methods():
        raise InputError(f"--method {args.method!r}: unknown; an image network is one of {', '.join(codec_methods())}")
    depth = args.depth if args.depth is not None else default_depth(args.method)
    settings = MetaSettings(
        resolution=args.resolution, steps=args.steps, inner_steps=args.inner_steps, outer_lr=args.outer_lr, seed=args.seed
    )
    settings.check()
    rungs = ladder(args.method, depth, args.seed)
    if args.bpp is not None:
        side = args.resolution
        archs = [size_for_budget(rungs, rate * side * side, side, 3) for rate in parse_rates(args.bpp)]
    else:
        widths = parse_widths(args.width)
        archs = [Architecture(args.method, w, depth, args.seed) for w in widths]
        for arch in archs:
            arch.check("--width")
    paths = learn_inits(archs, args.photos, args.test, settings, Path(args.output))
    print(f"wrote {len(paths)} init(s) to {args.output}: {', '.join(p.name for p in paths)}")


def parse_widths(text: str) -> list[int]:
    """``16,24`` -> [16, 24]; one line for anything else."""
    try:
        widths = [int(w) for w in text.split(",") if w.strip()]
    except ValueError:
        raise InputError(f"--width {text!r}: comma-separated whole numbers, e.g. 16,24") from None
    if not widths:
        raise InputError(f"--width {text!r}: at least one width")
    return widths


def build_parser(learn_options: bool = True) -> Parser:
    """The command's parser; ``learn_options``: with the learn-init subcommand's options (``main`` leaves them out
    of a command line that does not name it, so that a decode or a ``--help`` imports no meta-training)."""
    parser = Parser(
        prog="inr-codec",
        description="Images to .inr files (latent grids and an entropy model, or a fitted network; quantised and range-coded) and back.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    enc = sub.add_parser(
        "encode",
        help="fit a network to an image and write it as a .inr file",
        description="Fit coordinate networks to an image and write the best file that meets the target.",
        epilog=ENCODE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    enc.add_argument(
        "image",
        nargs="+",
        help="PNG/JPEG/TIFF/BMP (gray or colour; alpha composited onto white); --method latents: several of one size",
    )
    enc.add_argument(
        "-o", "--output", required=True, help="the .inr file to write (several: a directory, a file per image and λ)"
    )
    target = enc.add_mutually_exclusive_group(required=True)
    target.add_argument("--bpp", type=float, help="at most this many bits per pixel (file size × 8 / pixels)")
    target.add_argument("--psnr", type=float, help="the smallest file reaching this PSNR (dB)")
    target.add_argument("--params", type=float, help="a network of at most this many weights")
    target.add_argument(
        "--lambda",
        dest="lam",
        help="--method latents: the rate's weight λ of D + λ·R (e.g. 0.001); several, comma-separated, train as one stacked run",
    )
    enc.add_argument(
        "--method",
        default="siren",
        help=f"latents (latent grids + entropy model), or a network a file may name: {', '.join(codec_methods())} (default: %(default)s)",
    )
    enc.add_argument(
        "--preset",
        default="medium",
        help="--method latents: fast, medium or slow (encode time for quality; default: %(default)s)",
    )
    enc.add_argument(
        "--levels", type=int, default=None, help="--method latents: latent grids (default: 7, fewer for small images)"
    )
    enc.add_argument(
        "--prior",
        action="store_true",
        help="--method latents: start from the shipped decoder prior and code the change from it (5 %% fewer bits on four photographs, level on four Kodak crops, worse on textured ones: docs/codec.md)",
    )
    enc.add_argument("--depth", type=int, default=None, help="network depth (default: the registry's, 4 for siren)")
    enc.add_argument("--steps", type=int, default=1000, help="full-batch training steps per network (default: %(default)s)")
    enc.add_argument("--bits", type=int, default=None, help="bits per weight (default: searched, 4…16)")
    enc.add_argument(
        "--finetune-steps", type=int, default=0, help="steps of quantisation-aware fine-tuning (default: %(default)s)"
    )
    enc.add_argument("--seed", type=int, default=0, help="seed of the network's initialisation (default: %(default)s)")
    enc.add_argument("--init", default=None, help="a learned init (file), or a directory of them: code the change from it")
    enc.add_argument(
        "--budget-minutes",
        type=float,
        default=60.0,
        help="refuse, before training, an encode expected to take longer (default: %(default)g)",
    )
    enc.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's)")
    dec = sub.add_parser("decode", help="decode a .inr file to a PNG")
    dec.add_argument("file", help="the .inr file")
    dec.add_argument("-o", "--output", required=True, help="the PNG to write")
    dec.add_argument("--init", default=None, help="the learned init (file or directory) a file coded against one needs")
    dec.add_argument(
        "--max-work",
        type=float,
        default=MAX_DECODE_WORK,
        help="refuse a file whose network, evaluated at every pixel, takes more multiply-adds than this (default: "
        "%(default).0e, a few minutes here; the refusal gives the file's estimate)",
    )
    dec.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's)")
    if learn_options:
        add_learn_init(sub)
    else:  # another subcommand runs: learn-init's name and help line only, nothing of the meta-training loaded
        sub.add_parser("learn-init", help=LEARN_HELP, add_help=False)
    sub.add_parser("compare", help="rate–distortion beside JPEG, WebP and AVIF: inr-codec compare DIR --help", add_help=False)
    return parser


def add_learn_init(sub: argparse._SubParsersAction) -> None:
    """The learn-init subcommand and its options."""
    from inr.methods.meta import MetaSettings  # the meta-training's settings, stated once: its defaults are these flags'

    meta = MetaSettings()
    learn = sub.add_parser("learn-init", help=LEARN_HELP)
    learn.add_argument("photos", help="a directory of photographs to crop (none of the images you will code)")
    learn.add_argument("-o", "--output", required=True, help="the directory of inits to write (one file per size)")
    sizes = learn.add_mutually_exclusive_group(required=True)
    sizes.add_argument("--bpp", type=str, help="the sizes inr-codec compare trains at these rates (comma-separated)")
    sizes.add_argument("--width", type=str, help="network widths (comma-separated)")
    learn.add_argument("--test", default=None, help="photographs scored while learning (default: scikit-image's coffee, rocket)")
    learn.add_argument("--method", default="siren", help="a network a file may name, as for encode (default: %(default)s)")
    learn.add_argument("--depth", type=int, default=None, help="network depth (default: the registry's)")
    learn.add_argument(
        "--resolution",
        type=int,
        default=meta.resolution,
        help="crop side R: the side of the images to code (default: %(default)s)",
    )
    learn.add_argument("--steps", type=int, default=meta.steps, help="outer (Reptile) steps per init (default: %(default)s)")
    learn.add_argument(
        "--inner-steps",
        type=int,
        default=meta.inner_steps,
        help="steps of the codec's fit per crop and outer step (default: %(default)s)",
    )
    learn.add_argument(
        "--outer-lr", type=float, default=meta.outer_lr, help="the outer Adam's learning rate (default: %(default)g)"
    )
    learn.add_argument(
        "--seed", type=int, default=meta.seed, help="seed of the networks and of the crops drawn (default: %(default)s)"
    )
    learn.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's)")


def main(argv: Optional[list[str]] = None) -> None:
    """Parse, run the subcommand; ``InputError`` -> one ``error:`` line and exit 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:  # the comparison stands above the codec: inr.commands hands it on
        print(
            "inr-codec: error: compare is the comparison's command: inr-codec compare, or python -m inr.experiments.codec",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_INPUT)
    args = build_parser(learn_options="learn-init" in argv).parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            print(f"inr-codec: error: --threads {args.threads}: at least 1", file=sys.stderr)
            raise SystemExit(EXIT_INPUT)
    body = {"encode": encode_command, "decode": decode_command, "learn-init": learn_command}[args.command]
    from inr.io.threads import torch_threads  # torch: past the parse, so that --help never loads it

    with torch_threads(args.threads):
        command(lambda: body(args))
