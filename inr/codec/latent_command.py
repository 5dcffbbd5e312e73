"""``inr-codec encode --method latents``: one image at one λ (or searched for --bpp / --psnr) into one file, or
several images of one size and several λ's as stacked members (``latent_stack``), one file each:

    inr-codec encode photo.png -o photo.inr --method latents --lambda 0.005
    inr-codec encode a.png b.png -o coded/ --method latents --lambda 0.02,0.003   # coded/a_lambda0.02.inr, …
    inr-codec encode a.png b.png -o coded/ --method latents --bpp 0.5             # coded/a.inr, coded/b.inr

Members: every image at every λ (a target: every image, each searched for its own λ, each round stacked). With one
member ``-o`` is the file (or a directory to write ``<stem>.inr`` in); with several it is an existing directory and a file is ``<stem>.inr`` (one λ or a
target) or ``<stem>_lambda<λ>.inr``. Every output is checked before any training, and each is written whole.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from inr.codec.output_files import check_output, write_bytes
from inr.errors import InputError
from inr.io.files import refuse_overwriting
from inr.io.progress import reporting


def parse_lambdas(text: str) -> list[float]:
    """``0.02,0.003`` -> [0.02, 0.003]; one line for anything else (a λ must be a finite number > 0).

    Example:
        >>> parse_lambdas("0.02, 3e-3")
        [0.02, 0.003]
    """
    try:
        lams = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InputError(f"--lambda {text}: comma-separated numbers > 0, e.g. 0.02,0.003") from None
    if not lams:
        raise InputError(f"--lambda {text!r}: at least one λ")
    for lam in lams:
        if not (math.isfinite(lam) and lam > 0):
            raise InputError(f"--lambda {lam:g}: the rate's weight, a number > 0 (e.g. 0.001)")
    if len(set(lams)) < len(lams):
        raise InputError(f"--lambda {text}: a λ named twice")
    return lams


def member_outputs(images: list[str], lams: list[float], output: str) -> list[Path]:
    """The file of each member (image-major: every λ of the first image, then the next image's), refused in one line
    where it cannot be written: with several members ``output`` must be a writable directory, and two images of one
    name would write one file."""
    out = Path(output)
    if len(images) * max(1, len(lams)) == 1:
        out = out / f"{Path(images[0]).stem}.inr" if out.is_dir() else out
        check_output(out, "encode")
        refuse_overwriting(out, images)
        return [out]
    if not out.is_dir():
        raise InputError(
            f"-o {out}: several files to write ({len(images)} image(s) × {max(1, len(lams))} λ); give an existing directory"
        )
    stems = [Path(image).stem for image in images]
    twice = sorted({s for s in stems if stems.count(s) > 1})
    if twice:
        raise InputError(f"-o {out}: two images named {twice[0]!r} would write one file; rename one")
    if len(lams) <= 1:
        paths = [out / f"{stem}.inr" for stem in stems]
    else:
        paths = [out / f"{stem}_lambda{lam:g}.inr" for stem in stems for lam in lams]
    for path in paths:
        check_output(path, "encode")
        refuse_overwriting(path, images)
    return paths


def latent_encode_command(args: argparse.Namespace) -> None:
    """``--method latents``: the latent-grid codec at each λ, or searched for a --bpp / --psnr target; several
    members (images × λ's) trained as one stacked run."""
    from inr.codec.encode import Target, read_codec_image
    from inr.codec.latent_encode import (
        MAX_FITS,
        encode_latent_image,
        encode_latent_images,
        encode_to_target,
        encode_to_targets,
        preset_of,
        step_seconds,
    )
    from inr.codec.latent_stack import check_members

    if args.params is not None:
        raise InputError("--params: the latent codec has no network size to choose; give --lambda, --bpp or --psnr")
    if args.init is not None:
        raise InputError("--init: learned inits are SIREN's; the latent codec takes none")
    preset = preset_of(args.preset)
    if args.levels is not None and not 1 <= args.levels <= 12:
        raise InputError(f"--levels {args.levels}: 1 … 12 latent grids")
    lams = parse_lambdas(args.lam) if args.lam is not None else []
    if not lams:
        kind, value = ("bpp", args.bpp) if args.bpp is not None else ("psnr", args.psnr)
        Target(kind, value).check()
    outputs = member_outputs(args.image, lams, args.output)
    stacked = len(outputs) > 1
    if stacked and args.prior:
        raise InputError("--prior: one image at one λ (or target) at a time; stacked members start without the prior")
    if not args.budget_minutes > 0:
        raise InputError(f"--budget-minutes {args.budget_minutes:g}: the minutes the encode may take, > 0")
    images = [read_codec_image(path) for path in args.image]
    members = [(image, lam) for image in images for lam in lams] if lams else [(image, None) for image in images]
    if stacked:
        check_members([m[0] for m in members], [lam or 1.0 for _, lam in members])
    fits = 1 if lams else MAX_FITS
    # a stacked step does every member's arithmetic: on a CPU about the members' steps one after another
    expected = step_seconds(images[0], preset, args.levels) * preset.steps * fits * len(members)
    what = args.image[0] if len(args.image) == 1 else f"{len(args.image)} images"
    count = f" × {len(members)} members stacked" if stacked else ""
    print(
        f"{what}: {preset.name} preset, {preset.steps} steps × {fits} fit(s){count}: about {expected / 60:.1f} min here",
        file=sys.stderr,
    )
    if expected > args.budget_minutes * 60:
        raise InputError(
            f"the encode is expected to take {expected / 60:.1f} min, more than --budget-minutes {args.budget_minutes:g}; try --preset fast"
        )
    start = time.perf_counter()

    def say(k: int, line: str) -> None:
        print(f"{args.image[k]}: {line}" if len(images) > 1 else line, file=sys.stderr)

    with reporting(f"training on {what}"):
        if lams and not stacked:
            coded = [encode_latent_image(images[0], lams[0], preset, args.levels, args.seed, use_prior=args.prior)]
        elif lams:
            images_of = [m[0] for m in members]
            coded = encode_latent_images(images_of, [m[1] for m in members], preset, args.levels, [args.seed] * len(members))
        elif not stacked:
            coded = [
                encode_to_target(
                    images[0],
                    kind,
                    value,
                    preset,
                    levels=args.levels,
                    seed=args.seed,
                    say=lambda line: say(0, line),
                    use_prior=args.prior,
                )
            ]
        else:
            coded = encode_to_targets(images, kind, value, preset, levels=args.levels, seed=args.seed, say=say)
    seconds = time.perf_counter() - start
    for out, c in zip(outputs, coded):
        write_bytes(out, c.data)
        s = c.spec
        print(
            f"wrote {out}: {len(c.data):,} bytes = {c.bpp:.4f} bpp, PSNR {c.psnr:.2f} dB; latents at λ {c.lam:g}, "
            f"{s.levels} grids, synthesis {s.synthesis} wide ({s.synthesis_macs()} multiply-adds a pixel); encoded in {seconds:.1f} s"
            + (f" (the {len(outputs)} files together)" if stacked else "")
        )
