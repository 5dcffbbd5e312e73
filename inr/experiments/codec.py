"""Rate–distortion of the coordinate-network codec beside JPEG, WebP and AVIF: the same images, the same rates, one
score (PSNR and MS-SSIM of the decoded 8-bit image, bits from the file's size), measured in the same run.

    inr-codec compare DIR --bpp 0.1,0.2,0.3,0.5,1 --resolution 192 --steps 300 --out runs/codec
    inr-codec compare kodak4/,colour-photographs --init inits/ --methods siren,siren+init,jpeg,webp,avif
    python -m inr.experiments.codec --images DIR --bpp 0.3 --methods siren,jpeg,webp,avif

``--images`` names one set or several, comma-separated: a directory of images, ``photographs`` (scikit-image's
eight) or ``colour-photographs`` (its four colour ones). Each image is centre-cropped to ``--resolution`` pixels
square (no resampling), or coded whole with ``--whole``. For each rate, the images of one size train as one stacked
run (``inr.tasks.members``) of the registry's method at the network size whose file, estimated at 8 bits a weight,
fits the rate (``inr.codec.search.size_for_budget``); each member's network is then encoded at every bit depth and
both quantisers, and its file is the best-scoring one that fits the rate, decoded from its bytes. With ``--init DIR``
(inits made by ``inr-codec learn-init``), a row ``<method>+init`` trains the same sizes from the learned init of each
size and codes the change from it (an image the init was learned on is refused). The classical codecs give the file
of the highest quality that fits the same rate (``inr.codec.classical``); a rate below every file a codec can write
leaves its row empty. Rows: one per method, image and rate; the tables: per set, rate and method, mean ± std over the
images; ``rd.png``: PSNR and MS-SSIM against the files' bits per pixel. ``--estimate-only`` times a few steps of every
rate's stacked run at its own network size, and the scoring and the classical codecs of one image.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from inr.codec.architecture import Architecture, codec_methods
from inr.codec.classical import CODECS, at_rate
from inr.codec.sizes import default_depth, ladder, parse_rates, size_for_budget
from inr.errors import InputError
from inr.experiments.comparison import Baseline, Comparison, Context, Member, chosen_methods, fit_context, loaded, parse
from inr.experiments.comparison import main as run_main
from inr.experiments.rd_curve import MS_SSIM_MIN_SIDE
from inr.experiments.results import load_results
from inr.experiments.runner import Column, difference_note, paired, summarise
from inr.experiments.stats import LEVEL
from inr.io.allocator import retain_freed_memory
from inr.io.files import atomic_write
from inr.io.progress import format_seconds
from inr.methods.registry import Resolved
from inr.run.command import command

if TYPE_CHECKING:  # the codec's fitting, coding and scoring are imported by the hooks that use them: --help needs none
    import torch

    from inr.codec.fit import Pixels
    from inr.codec.init import Init

INIT_SUFFIX = "+init"  # a row trained from the learned init of its size: siren+init
COLOUR_PHOTOGRAPHS = ("astronaut", "cat", "immunohistochemistry", "motorcycle_left")
TARGET_RATE = 0.3  # the target: above JPEG at rates up to this (COIN's claim)


def base_method(name: str) -> str:
    """The registry's method of a row: ``siren+init`` -> ``siren``."""
    return name.removesuffix(INIT_SUFFIX)


@dataclass(frozen=True)
class CodecProtocol:
    """Images (paths) and the set each belongs to, their crop side (or whole), the rates, the training steps, the
    seeds, the directory of learned inits and the digests of those the rows use."""

    seeds: tuple[int, ...]
    steps: int
    resolution: int
    rates: tuple[float, ...]
    images: tuple[str, ...]
    sets: tuple[str, ...] = ()
    whole: bool = False
    init: str = ""
    init_digests: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signal:
    """One image of a set at one rate."""

    image: str
    rate: float
    set: str = ""


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


def image_sets(text: str, out: Path) -> tuple[list[Path], list[str]]:
    """``--images``: the paths of every set, comma-separated, and each image's set name (a directory's name,
    ``photographs`` or ``colour-photographs``)."""
    from inr.data.image_sets import image_folder, natural_set

    paths, sets = [], []
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        if entry == "photographs":
            found, name = natural_set(out / "images"), "photographs"
        elif entry == "colour-photographs":
            found, name = natural_set(out / "images", COLOUR_PHOTOGRAPHS), "colour photographs"
        else:
            found, name = image_folder(entry), Path(entry).resolve().name
        paths += found
        sets += [name] * len(found)
    if not paths:
        raise InputError(f"--images {text!r}: no set named")
    if len(set(paths)) < len(paths):
        raise InputError(f"--images {text!r}: an image is named twice")
    return paths, sets


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
        Column("set", "signal", "s"),
        Column("method", "method", "s"),
        Column("rate asked (bpp)", "target_bpp", ".2f", spread=False),
        Column("bpp", "bpp", ".3f"),
        Column("PSNR (dB)", "psnr"),
        Column("MS-SSIM", "ms_ssim", ".4f"),
        Column("encode s", "seconds", ".2f"),
        Column("decode s", "decode_seconds", ".3f"),
    )

    def __init__(self) -> None:
        # caches of what the hooks read (a miss reads the file): the images, cropped, and the learned inits
        self._images: dict[tuple[str, int, bool], torch.Tensor] = {}
        self._inits: dict[tuple[Architecture, int, int], Init] = {}

    def arguments(self, parser) -> None:
        parser.add_argument(
            "--images",
            type=str,
            default="photographs",
            help="comma-separated sets: directories of images, photographs or colour-photographs",
        )
        parser.add_argument("--bpp", type=str, default="0.1,0.2,0.3,0.5,1", help="comma-separated rates (bits per pixel)")
        parser.add_argument("--whole", action="store_true", help="code the images whole instead of a --resolution crop")
        parser.add_argument(
            "--init",
            type=Optional[str],
            default=None,
            help="a directory of learned inits (inr-codec learn-init): rows <method>+init",
        )

    def available(self, args: Any) -> tuple[str, ...]:
        learned = tuple(f"{m}{INIT_SUFFIX}" for m in self.methods) if getattr(args, "init", None) else ()
        return self.methods + learned + self.baseline_names

    def protocol(self, args: Any) -> CodecProtocol:
        self._images, self._inits = {}, {}  # read afresh by each run
        if args.paper:
            raise InputError("--paper: the codec comparison has no paper sizes; give --steps and --resolution")
        if args.init is not None and not Path(args.init).is_dir():
            raise InputError(f"--init {args.init}: not a directory of learned inits (inr-codec learn-init writes one)")
        # the photographs are written where the run keeps its files; an estimate writes them to a scratch folder
        paths, sets = image_sets(args.images, getattr(args, "scratch", None) or Path(self.out_dir(args)))
        side = 0 if args.whole else args.resolution or self.resolution
        return CodecProtocol(
            args.seed_list,
            args.steps or self.steps,
            side,
            parse_rates(args.bpp),
            tuple(str(p) for p in paths),
            tuple(sets),
            bool(args.whole),
            str(Path(args.init).resolve()) if args.init is not None else "",
        )

    def signals(self, p: CodecProtocol) -> list[Signal]:
        sets = p.sets or ("",) * len(p.images)
        return [Signal(image, rate, name) for rate in p.rates for image, name in zip(p.images, sets)]

    def label(self, p: CodecProtocol, signal: Any) -> Optional[str]:
        if signal is None:
            return None
        where = f"{signal.set}/" if signal.set else ""
        return f"{where}{Path(signal.image).stem} @ {signal.rate:g} bpp"

    def image(self, p: CodecProtocol, path: str) -> torch.Tensor:
        key = (path, p.resolution, p.whole)
        if key not in self._images:
            from inr.codec.encode import read_codec_image

            image = read_codec_image(path)
            self._images[key] = image if p.whole else centre_crop(image, p.resolution, path)
        return self._images[key]

    def data(self, ctx: Context) -> Pixels:
        from inr.codec.fit import Pixels

        return Pixels([self.image(ctx.p, ctx.signal.image)])  # its one image (H, W, C) in [0, 1]

    def stacked_data(self, ctx: Context) -> Pixels:
        from inr.codec.fit import Pixels

        return Pixels([self.image(ctx.p, m.signal.image) for m in ctx.group])

    def check(self, p: CodecProtocol) -> Pixels:
        for path in p.images:
            self.image(p, path)  # every image read (and cropped) before anything is written
        return self.data(Context(p, Member(self.signals(p)[0], p.seeds[0])))

    def arch(self, name: str, rate: float, seed: int, shape: tuple[int, ...]) -> Architecture:
        """The network size of method ``name`` at ``rate`` for images of ``shape`` (``search.size_for_budget``)."""
        height, width, channels = shape
        method = base_method(name)
        rungs = ladder(method, default_depth(method), seed)
        try:
            return size_for_budget(rungs, rate * height * width, min(height, width), channels)
        except InputError as exc:
            raise InputError(f"--bpp {rate:g} for {width}×{height} images: {exc}") from None

    def init_of(self, p: CodecProtocol, arch: Architecture, shape: tuple[int, ...]) -> Init:
        """The learned init of ``arch`` in ``--init`` (read once)."""
        key = (arch, min(shape[:2]), shape[2])
        if key not in self._inits:
            from inr.codec.init import init_in

            self._inits[key] = init_in(p.init, arch, key[1], key[2])
        return self._inits[key]

    def sized(self, ctx: Context) -> tuple[Architecture, Optional[Init]]:
        """The row's network size at its rate (``arch``) and, for a learned row, its init: found once per fit and
        kept in the row's state for its other hooks (``spec``, ``model``, ``predict``), whichever asks first."""
        if "arch" not in ctx.state:
            shape = tuple(ctx.data.images[0].shape)
            arch = self.arch(ctx.name, ctx.signal.rate, ctx.seed, shape)
            ctx.state["arch"] = arch
            ctx.state["init"] = self.init_of(ctx.p, arch, shape) if ctx.name.endswith(INIT_SUFFIX) else None
        return ctx.state["arch"], ctx.state["init"]

    def prepare(self, p: CodecProtocol, names: list[str], data: Any) -> CodecProtocol:
        """Every row's network size found (a rate below the smallest file is refused now), and each learned row's
        inits read and checked against the images (the digests go into the protocol)."""
        models = [n for n in names if n not in self.baseline_names]
        shapes = {tuple(self.image(p, path).shape) for path in p.images}
        for name in models:
            for shape in shapes:
                for rate in p.rates:
                    self.arch(name, rate, p.seeds[0], shape)
        learned = [n for n in models if n.endswith(INIT_SUFFIX)]
        if not learned:
            return p
        from inr.codec.encode import read_codec_image

        digests = set()
        for path in p.images:
            shape, whole = tuple(self.image(p, path).shape), read_codec_image(path)
            for name in learned:
                for rate in p.rates:
                    init = self.init_of(p, self.arch(name, rate, p.seeds[0], shape), shape)
                    init.check_unseen(whole, path)
                    digests.add(init.digest.hex())
        return replace(p, init_digests=tuple(sorted(digests)))

    def groups(self, p: CodecProtocol, name: str, members: list[Member]) -> list[list[Member]]:
        # one stacked run per rate, seed and image size, its members the images, where the method stacks
        from inr.codec.fit import stacks

        arch = Architecture(base_method(name), 8, default_depth(base_method(name)))
        if not stacks(arch, min(self.image(p, p.images[0]).shape[:2]), 3):
            return [[m] for m in members]
        key = lambda m: (m.signal.rate, m.seed, tuple(self.image(p, m.signal.image).shape))  # noqa: E731
        keys = list(dict.fromkeys(key(m) for m in members))
        return [[m for m in members if key(m) == k] for k in keys]

    def spec(self, ctx: Context) -> Resolved:
        # the rows of one group share the size (``sized``: kept in the row's state for model and predict)
        from inr.codec.encode import arch_label

        shape = tuple(ctx.data.images[0].shape)
        arch, init = self.sized(ctx)
        learned = f", from the learned init {init.digest.hex()}" if init is not None else ""
        return replace(arch.resolve(min(shape[:2]), ctx.p.steps), describe=arch_label(arch) + learned)

    def model(self, ctx: Context):
        from inr.codec.fit import fit_task

        height, width, channels = ctx.data.images[0].shape
        arch, init = self.sized(ctx)
        return fit_task(arch, min(height, width), channels, ctx.p.steps, 1, init)

    def stacked_model(self, ctx: Context):
        from inr.codec.fit import fit_task

        height, width, channels = ctx.data.images[0].shape
        arch, init = self.sized(ctx)
        return fit_task(arch, min(height, width), channels, ctx.p.steps, len(ctx.group), init)

    def predict(self, ctx: Context, model) -> Result:
        from inr.codec.coding import decode
        from inr.codec.encode import SCORED_PER_QUANTISER, arch_label
        from inr.codec.fit import Fitted
        from inr.codec.search import best_under, choices

        arch, init = self.sized(ctx)
        image = ctx.data.images[0]  # (H, W, C)
        budget = ctx.signal.rate * image.shape[0] * image.shape[1]
        fitted = Fitted(model.encoder, model.network, 0.0)
        found = choices(arch, fitted, image, budget=budget, keep=SCORED_PER_QUANTISER, init=init)
        best = best_under(found, budget)
        if best is None:
            return Result(None, float("nan"), float("nan"))
        start = time.perf_counter()
        decode(best.data, init=init)
        seconds = time.perf_counter() - start
        quantiser = "per channel" if best.per_channel else "per tensor"
        return Result(best.pixels, best.size_bits, seconds, f"{arch_label(arch)}, {best.bits} bits {quantiser}")

    def score(self, ctx: Context, prediction: Any) -> dict[str, Any]:
        import torch
        from torchmetrics.functional.image import multiscale_structural_similarity_index_measure

        from inr.metrics import psnr

        rate = {"target_bpp": ctx.signal.rate}
        if prediction is None or prediction.pixels is None:
            return {**rate, "psnr": float("nan"), "ms_ssim": float("nan"), "bpp": float("nan")}
        target = ctx.data.images[0].to(torch.float64)  # (H, W, C)
        decoded = torch.from_numpy(prediction.pixels.astype(np.float64) / 255.0)
        out = {**rate, "psnr": psnr(decoded, target), "bpp": prediction.size_bits / (target.shape[0] * target.shape[1])}
        if min(target.shape[:2]) >= MS_SSIM_MIN_SIDE:  # torchmetrics refuses five scales below it
            out["ms_ssim"] = float(
                multiscale_structural_similarity_index_measure(
                    decoded.permute(2, 0, 1)[None], target.permute(2, 0, 1)[None], data_range=1.0
                )
            )
        if np.isfinite(prediction.decode_seconds):
            out["decode_seconds"] = prediction.decode_seconds
        return out

    def baselines(self, ctx: Context) -> list[Baseline]:
        pixels = np.round(ctx.data.images[0].numpy() * 255.0).astype(np.uint8)
        rate = ctx.signal.rate

        def make(codec: str):
            def run() -> Result:
                coded = at_rate(pixels, codec, rate)
                if coded is None:
                    return Result(None, float("nan"), float("nan"))
                return Result(coded.pixels, coded.size_bits, coded.decode_seconds, f"quality {coded.quality}")

            return run

        return [Baseline(codec.upper(), make(codec), "highest quality within the rate", 0, codec) for codec in CODECS]

    # --- the tables, the notes and the figure --------------------------------------------------------------
    def set_names(self, p: CodecProtocol) -> dict[str, str]:
        """Each row's signal label -> its set."""
        return {self.label(p, s): s.set for s in self.signals(p)}

    def summary(self, p: CodecProtocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = [c.key for c in self.columns if c.spec != "s"]
        sets = self.set_names(p)
        out = []
        for name in dict.fromkeys(p.sets or ("",)):
            for rate in p.rates:
                chosen = [r for r in rows if r.get("target_bpp") == rate and sets.get(r.get("signal"), "") == name]
                for row in summarise(chosen, keys):
                    row["signal"] = name or None  # the set, in the table's first column
                    out.append(row)
        return out

    def title(self, p: CodecProtocol) -> str:
        counts = {name: p.sets.count(name) for name in dict.fromkeys(p.sets)} if p.sets else {"": len(p.images)}
        sets = ", ".join(f"{n} {name}".strip() for name, n in counts.items())
        size = "whole" if p.whole else f"cropped to {p.resolution}²"
        return f"Codec: {sets} images {size}, rates {', '.join(f'{r:g}' for r in p.rates)} bpp, {p.steps} steps"

    def notes(self, p: CodecProtocol, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        text = (
            "bpp: the file's bytes × 8 / pixels (every header byte included); PSNR and MS-SSIM of the decoded 8-bit image "
            "against the crop; a row's mean is over the images that have a file within the rate (n of them); encode s: a "
            "codec row's fit (its stacked run's seconds over its members, the bit-depth search apart), a classical row's "
            "search over qualities."
        )
        sets = self.set_names(p)
        parts = [text]
        rule = f"paired per image; two-sided paired t-test at {100 * LEVEL:g} %, the rule of docs/results.md"
        gaps = target_gaps(rows, sets, p.rates)  # each row paired with JPEG's per image
        if gaps:
            parts.append(f"Against the target (above JPEG at rates up to {TARGET_RATE:g} bpp; {rule}):\n" + "\n".join(gaps))
        gains = init_gains(rows, sets, p.rates)
        if gains:
            parts.append(f"The learned init's gain at the same {p.steps} steps ({rule}):\n" + "\n".join(gains))
        return "\n\n".join(parts)

    def finish(self, p: CodecProtocol, rows: list[dict[str, Any]], out: Path) -> None:
        figure = rd_figure(self.summary(p, rows), self.title(p))
        with atomic_write(out / "rd.png", "wb") as f:
            figure.savefig(f, format="png", dpi=110)


def paired_lines(
    rows: list[dict[str, Any]],
    method: str,
    other: str,
    sets: dict[str, str],
    rates: tuple[float, ...],
    other_rows: Optional[list[dict[str, Any]]] = None,
) -> list[str]:
    """``method``'s PSNR against ``other``'s in each set and at each rate, paired per image over the images where
    both have a file within the rate, judged by the rule every comparison's verdicts follow (``runner.difference_note``:
    the mean ± std over n pairs from so many images, the paired t-test, the verdict). ``other_rows``: ``other``'s rows
    from another run of the same images and rates (default: ``rows``); named ``<other> (other run)`` where it is
    ``method`` too.

    Example:
        >>> rows = [{"method": m, "signal": f"s/{i} @ 0.2 bpp", "seed": seed, "target_bpp": 0.2, "psnr": v + i}
        ...         for i in range(3) for m, v, seed in (("siren", 21.0, 0), ("JPEG", 22.0, None))]
        >>> paired_lines(rows, "siren", "JPEG", {f"s/{i} @ 0.2 bpp": "s" for i in range(3)}, (0.2,))
        ['- s, 0.2 bpp: siren − JPEG: -1.00 ± 0.00 dB over 3 pairs from 3 signals (siren above in 0; -1.00 to -1.00; p < 0.001): JPEG above siren']
    """
    theirs_name = f"{other} (other run)" if other_rows is not None and other == method else other
    theirs = [{**r, "method": theirs_name} for r in (other_rows or rows) if r["method"] == other]
    mine = [r for r in rows if r["method"] == method]
    lines = []
    for name in dict.fromkeys(sets.values()):
        for rate in rates:
            chosen = [
                r
                for r in mine + theirs
                if r.get("target_bpp") == rate and sets.get(r.get("signal")) == name and np.isfinite(r.get("psnr", np.nan))
            ]
            if paired(chosen, method, theirs_name, "psnr").n == 0:
                continue
            where = f"{name}, " if name else ""
            lines.append(f"- {where}{rate:g} bpp: {difference_note(chosen, method, theirs_name, 'psnr', 'dB')}")
    return lines


def target_gaps(rows: list[dict[str, Any]], sets: dict[str, str], rates: tuple[float, ...]) -> list[str]:
    """The target's sentences: each coordinate-network row against JPEG at the rates up to ``TARGET_RATE``."""
    methods = dict.fromkeys(r["method"] for r in rows if r["kind"] == "model")
    low = tuple(r for r in rates if r <= TARGET_RATE)
    return [line for m in methods for line in paired_lines(rows, m, "JPEG", sets, low)]


def init_gains(rows: list[dict[str, Any]], sets: dict[str, str], rates: tuple[float, ...]) -> list[str]:
    """Each ``<method>+init`` row against ``<method>``'s at every rate (the learned init's gain, same steps)."""
    methods = dict.fromkeys(r["method"] for r in rows if r["kind"] == "model")
    return [
        line
        for m in methods
        if base_method(m) != m and base_method(m) in methods
        for line in paired_lines(rows, m, base_method(m), sets, rates)
    ]


def compare_runs(first: str, method: str, second: str, other: str) -> str:
    """``method`` of one run's results.json against ``other`` of another's, paired per image (the same images and
    rates, e.g. a learned init at fewer steps against the random draw at more):

        python -c "from inr.experiments.codec import compare_runs as c; print(c('a/results.json', 'siren+init', 'b/results.json', 'siren'))"
    """
    a, b = load_results(first), load_results(second)
    sets = {r["signal"]: r["signal"].rpartition("/")[0] for r in a.rows + b.rows}
    rates = tuple(dict.fromkeys(r["target_bpp"] for r in a.rows))
    return "\n".join(paired_lines(a.rows, method, other, sets, rates, other_rows=b.rows))


def rd_figure(summary: list[dict[str, Any]], title: str):
    """PSNR and MS-SSIM against the files' mean bits per pixel, one line per method, one row of panels per set."""
    from matplotlib.figure import Figure

    sets = list(dict.fromkeys(r.get("signal") for r in summary))
    colours = {m: f"C{i}" for i, m in enumerate(dict.fromkeys(r["method"] for r in summary))}  # one per method
    fig = Figure(figsize=(10, 3.6 * len(sets)), layout="constrained")
    axes = fig.subplots(len(sets), 2, squeeze=False)
    for i, name in enumerate(sets):
        rows = [r for r in summary if r.get("signal") == name]
        for method in dict.fromkeys(r["method"] for r in rows):
            points = sorted(
                (r["bpp"], r.get("psnr", np.nan), r.get("ms_ssim", np.nan))
                for r in rows
                if r["method"] == method and np.isfinite(r.get("bpp", np.nan))
            )
            if not points:
                continue
            bpp, psnrs, ssims = (np.array(v, dtype=float) for v in zip(*points))
            style = "o-" if next(r["kind"] for r in rows if r["method"] == method) == "model" else "s--"
            axes[i, 0].plot(bpp, psnrs, style, color=colours[method], label=method, markersize=4)
            axes[i, 1].plot(bpp, ssims, style, color=colours[method], label=method, markersize=4)
        for ax, ylabel in zip(axes[i], ("PSNR (dB)", "MS-SSIM")):
            ax.set(xlabel="bits per pixel (the files' mean)", ylabel=ylabel, title=f"{name or 'images'}")
            ax.grid(alpha=0.3)
        axes[i, 0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return fig


def estimate(c: CodecComparison, p: CodecProtocol, names: list[str]) -> float:
    """Expected seconds of the whole run: each model row's stacked run at each rate timed for a few steps at its
    own network size and member count (``estimate.step_seconds``), × steps; the scoring of one member's files and the
    classical codecs of one image at each rate timed once, × images."""
    from inr.methods.training import step_seconds

    models = [n for n in names if n not in c.baseline_names]
    baselines = [n for n in names if n in c.baseline_names]
    total, parts = 0.0, []
    for name in models:
        for group in c.groups(p, name, c.members(p, name)):
            ctx, members = fit_context(c, p, name, group)
            model = c.stacked_model(ctx) if len(group) > 1 else c.model(ctx)
            step = step_seconds(model, ctx.data)
            single = replace(members[0], data=loaded(c.data(members[0])))
            start = time.perf_counter()
            c.predict(single, model.member(0) if len(group) > 1 else model)
            scoring = time.perf_counter() - start
            total += step * p.steps + scoring * len(group)
            parts.append(
                f"{name} @ {ctx.signal.rate:g} bpp ({c.sized(ctx)[0].label()}, {len(group)} members): {1000 * step:.0f} ms/step"
            )
    for rate in p.rates if baselines else ():
        ctx = Context(p, Member(Signal(p.images[0], rate), p.seeds[0]))
        ctx.data = c.data(ctx)
        start = time.perf_counter()
        for b in c.baselines(ctx):
            if b.key in baselines:
                b.make()
        total += (time.perf_counter() - start) * len(p.images)
    print(
        f"expected time: about {format_seconds(total)} for {len(models)} model rows and {len(baselines)} classical codecs × "
        f"{len(p.images)} images × {len(p.rates)} rates × {p.steps} steps (an estimate: {'; '.join(parts)})",
        file=sys.stderr,
        flush=True,
    )
    return total


COMPARISON = CodecComparison()


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """``python -m inr.experiments.codec`` (``inr-codec compare``); ``--estimate-only`` prints this comparison's own
    estimate (``estimate``: every rate at its own network size) instead of the generic one."""
    argv = list(sys.argv[1:] if argv is None else argv)

    def estimate_only() -> Optional[list[dict[str, Any]]]:
        args = parse(COMPARISON, argv)
        if not args.estimate_only:
            return None
        from inr.io.threads import torch_threads
        from inr.methods.training import silence_lightning

        with torch_threads(args.threads), tempfile.TemporaryDirectory(prefix="inr-codec-estimate-") as scratch:
            silence_lightning()
            retain_freed_memory()
            names = chosen_methods(COMPARISON, args)
            args.scratch = Path(scratch)  # an estimate writes nothing under --out (protocol reads it)
            p = COMPARISON.protocol(args)
            COMPARISON.check(p)
            estimate(COMPARISON, COMPARISON.prepare(p, names, None), names)
        return []

    done = command(estimate_only)
    return run_main(COMPARISON, argv) if done is None else done


if __name__ == "__main__":
    main()
