"""Rate–distortion of the coordinate-network codec beside JPEG, WebP and AVIF: the same images, the same rates, one
score (PSNR and MS-SSIM of the decoded 8-bit image, bits from the file's size), measured in the same run.

    inr-codec compare DIR --bpp 0.1,0.2,0.3,0.5,1 --resolution 256 --steps 300 --out runs/codec
    python -m inr.experiments.codec --images DIR --bpp 0.3 --methods siren,jpeg,webp,avif

Each image of DIR (or scikit-image's photographs with ``--images photographs``) is centre-cropped to
``--resolution`` pixels square (no resampling). For each rate, the images train as one stacked run
(``inr.tasks.members``) of the registry's method at the network size whose file, estimated at 8 bits a weight,
fits the rate (``inr.codec.search``); each member's network is then encoded at every bit depth and both quantisers,
and its file is the best-scoring one that fits the rate, decoded from its bytes. The classical codecs give the
file of the highest quality that fits the same rate (``inr.codec.classical``); a rate below every file a codec can
write leaves its row empty. Rows: one per method, image and rate; the table: per method and rate, mean ± std over
the images.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from torchmetrics.functional.image import multiscale_structural_similarity_index_measure

from inr.codec.architecture import Architecture, codec_methods
from inr.codec.classical import CODECS, at_rate
from inr.codec.coding import decode
from inr.codec.encode import SCORED_PER_QUANTISER, arch_label, default_depth, read_codec_image
from inr.codec.fit import Fitted, Pixels, fit_task, stacks
from inr.codec.search import best_under, choices, estimated_bits, ladder, rungs_for_budget, weights_of
from inr.data.image_sets import image_folder, natural_set
from inr.errors import InputError
from inr.experiments.comparison import Baseline, Comparison, Member
from inr.experiments.comparison import main as run_main
from inr.experiments.methods import Resolved
from inr.experiments.runner import Column, summarise
from inr.metrics import psnr

# a rate estimates its network at 8 bits a weight (the middle of ``search.BIT_GUESSES``); the files span 4…16 bits
GUESS_BITS = 8
MS_SSIM_SIDE = 161  # five scales of an 11-pixel window need a side above (11 − 1) · 2⁴


def parse_rates(text: str) -> tuple[float, ...]:
    """``0.1,0.3`` -> (0.1, 0.3), each in (0, 24].

    Example:
        >>> parse_rates("0.1, 0.3,1")
        (0.1, 0.3, 1.0)
    """
    try:
        rates = tuple(float(r) for r in text.split(",") if r.strip())
    except ValueError:
        raise InputError(f"--bpp {text!r}: comma-separated numbers, e.g. 0.1,0.3,1") from None
    if not rates or any(not 0 < r <= 24 or not np.isfinite(r) for r in rates):
        raise InputError(f"--bpp {text!r}: every rate must lie in (0, 24] bits per pixel")
    return tuple(dict.fromkeys(rates))


@dataclass(frozen=True)
class CodecProtocol:
    """Images (paths), their crop side, the rates, the training steps and the seeds."""

    seeds: tuple[int, ...]
    steps: int
    resolution: int
    rates: tuple[float, ...]
    images: tuple[str, ...]


@dataclass(frozen=True)
class Signal:
    """One image at one rate."""

    image: str
    rate: float


@dataclass
class Result:
    """What a row scores: a file's decoded pixels, its size, and the decoder's seconds (None: no file fits)."""

    pixels: Optional[np.ndarray]
    size_bits: float
    decode_seconds: float
    setting: str = ""


def centre_crop(image: torch.Tensor, side: int, source: str) -> torch.Tensor:
    """The centre ``side`` × ``side`` pixels of (H, W, C); refused when the image is smaller."""
    height, width = image.shape[:2]
    if height < side or width < side:
        raise InputError(f"{source}: {width}×{height} is smaller than the {side}² crop (--resolution)")
    top, left = (height - side) // 2, (width - side) // 2
    return image[top : top + side, left : left + side].contiguous()


class CodecComparison(Comparison):
    name = "codec"
    doc = __doc__
    prog = "inr-codec compare"
    methods = codec_methods()
    default_methods = ("siren", *CODECS)
    baseline_names = CODECS
    stack = True
    steps = 300
    resolution = 256
    headline = ("psnr", "bpp")
    columns = (
        Column("method", "method", "s"),
        Column("rate asked (bpp)", "target_bpp", ".2f", spread=False),
        Column("bpp", "bpp", ".3f"),
        Column("PSNR (dB)", "psnr"),
        Column("MS-SSIM", "ms_ssim", ".4f"),
        Column("encode s", "seconds", ".2f"),
        Column("decode s", "decode_seconds", ".3f"),
    )

    def arguments(self, parser) -> None:
        parser.add_argument("--images", type=str, default="photographs", help="a directory of images, or photographs")
        parser.add_argument("--bpp", type=str, default="0.1,0.2,0.3,0.5,1", help="comma-separated rates (bits per pixel)")

    def protocol(self, args: Any) -> CodecProtocol:
        if args.paper:
            raise InputError("--paper: the codec comparison has no paper sizes; give --steps and --resolution")
        if args.images == "photographs":
            paths = natural_set(Path(self.out_dir(args)) / "images")
        else:
            paths = image_folder(args.images)
        side = args.resolution or self.resolution
        return CodecProtocol(args.seed_list, args.steps or self.steps, side, parse_rates(args.bpp), tuple(str(p) for p in paths))

    def signals(self, p: CodecProtocol) -> list[Signal]:
        return [Signal(image, rate) for rate in p.rates for image in p.images]

    def label(self, signal: Any) -> Optional[str]:
        return None if signal is None else f"{Path(signal.image).stem} @ {signal.rate:g} bpp"

    def image(self, p: CodecProtocol, path: str) -> torch.Tensor:
        return centre_crop(read_codec_image(path), p.resolution, path)

    def data(self, p: CodecProtocol, member: Member) -> Pixels:
        data = Pixels([self.image(p, member.signal.image)])
        data.rate, data.image = member.signal.rate, data.images[0]  # (H, W, C) in [0, 1]
        return data

    def stacked_data(self, p: CodecProtocol, group: list[Member]) -> Pixels:
        data = Pixels([self.image(p, m.signal.image) for m in group])
        data.rate = group[0].signal.rate
        return data

    def check(self, p: CodecProtocol) -> Pixels:
        shapes = {tuple(self.image(p, path).shape) for path in p.images}
        if len(shapes) > 1:
            raise InputError(f"--images: the crops differ in channels {sorted(shapes)}; one run codes images of one kind")
        return self.data(p, Member(self.signals(p)[0], p.seeds[0]))

    def arch(self, p: CodecProtocol, name: str, rate: float, seed: int, channels: int) -> Architecture:
        """The network size of method ``name`` at ``rate``: the largest whose file, estimated at ``GUESS_BITS``,
        fits; below every such size, the search's smallest candidate."""
        budget = rate * p.resolution**2
        rungs = ladder(name, default_depth(name), seed)
        fitting = [a for a in rungs if estimated_bits(weights_of(a, p.resolution, channels), GUESS_BITS) <= budget]
        return fitting[-1] if fitting else rungs_for_budget(rungs, budget, p.resolution, channels)[0]

    def members(self, p: CodecProtocol, name: str) -> list[Member]:
        self._method = name  # ``groups`` follows for the same method (comparison.run builds its plan so)
        return super().members(p, name)

    def groups(self, p: CodecProtocol, members: list[Member]) -> list[list[Member]]:
        # one stacked run per rate and seed, its members the images, where the method stacks; else one run each
        arch = Architecture(self._method, 8, default_depth(self._method))
        if not stacks(arch, p.resolution, 3):
            return [[m] for m in members]
        keys = list(dict.fromkeys((m.signal.rate, m.seed) for m in members))
        return [[m for m in members if (m.signal.rate, m.seed) == key] for key in keys]

    def spec(self, p: CodecProtocol, name: str, member: Member, data: Pixels) -> Resolved:
        # the rows of one group share the size; model, stacked_model and predict of the group read it here
        self._arch = self.arch(p, name, member.signal.rate, member.seed, data.out_channels)
        return replace(self._arch.resolve(p.resolution, p.steps), describe=arch_label(self._arch))

    def model(self, p: CodecProtocol, spec: Resolved, data: Pixels):
        return fit_task(self._arch, p.resolution, data.out_channels, p.steps, 1)

    def stacked_model(self, p: CodecProtocol, specs: list[Resolved], seeds: list[int], data: Pixels):
        return fit_task(self._arch, p.resolution, data.out_channels, p.steps, len(specs))

    def predict(self, p: CodecProtocol, model, data: Pixels) -> Result:
        budget = data.rate * p.resolution**2
        fitted = Fitted(model.encoder, model.network, 0.0)
        best = best_under(choices(self._arch, fitted, data.image, budget=budget, keep=SCORED_PER_QUANTISER), budget)
        if best is None:
            return Result(None, float("nan"), float("nan"))
        start = time.perf_counter()
        decode(best.data)
        seconds = time.perf_counter() - start
        quantiser = "per channel" if best.per_channel else "per tensor"
        return Result(best.pixels, best.size_bits, seconds, f"{arch_label(self._arch)}, {best.bits} bits {quantiser}")

    def score(self, p: CodecProtocol, prediction: Any, data: Pixels) -> dict[str, Any]:
        rate = {"target_bpp": data.rate}
        if prediction is None or prediction.pixels is None:
            return {**rate, "psnr": float("nan"), "ms_ssim": float("nan"), "bpp": float("nan")}
        target = data.image.to(torch.float64)  # (H, W, C)
        decoded = torch.from_numpy(prediction.pixels.astype(np.float64) / 255.0)
        out = {**rate, "psnr": psnr(decoded, target), "bpp": prediction.size_bits / (target.shape[0] * target.shape[1])}
        if min(target.shape[:2]) >= MS_SSIM_SIDE:
            out["ms_ssim"] = float(
                multiscale_structural_similarity_index_measure(
                    decoded.permute(2, 0, 1)[None], target.permute(2, 0, 1)[None], data_range=1.0
                )
            )
        if np.isfinite(prediction.decode_seconds):
            out["decode_seconds"] = prediction.decode_seconds
        return out

    def baselines(self, p: CodecProtocol, data: Pixels) -> list[Baseline]:
        pixels = np.round(data.image.numpy() * 255.0).astype(np.uint8)

        def make(codec: str):
            def run() -> Result:
                coded = at_rate(pixels, codec, data.rate)
                if coded is None:
                    return Result(None, float("nan"), float("nan"))
                return Result(coded.pixels, coded.size_bits, coded.decode_seconds, f"quality {coded.quality}")

            return run

        return [Baseline(codec.upper(), make(codec), "highest quality within the rate", 0, codec) for codec in CODECS]

    def summary(self, p: CodecProtocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = [c.key for c in self.columns if c.spec != "s"]
        out = []
        for rate in p.rates:
            for row in summarise([r for r in rows if r.get("target_bpp") == rate], keys):
                out.append(row)
        return out

    def title(self, p: CodecProtocol) -> str:
        return (
            f"Codec: {len(p.images)} images cropped to {p.resolution}², rates {', '.join(f'{r:g}' for r in p.rates)} bpp, "
            f"{p.steps} steps"
        )

    def notes(self, p: CodecProtocol, summary: list[dict[str, Any]]) -> str:
        return (
            "bpp: the file's bytes × 8 / pixels (every header byte included); PSNR and MS-SSIM of the decoded 8-bit image "
            "against the crop; a row's mean is over the images that have a file within the rate (n of them)."
        )


COMPARISON = CodecComparison()


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """``python -m inr.experiments.codec`` (``inr-codec compare``)."""
    return run_main(COMPARISON, argv)


if __name__ == "__main__":
    main()
