"""The paper's Table 1 as the paper reports it: every mapping scored over a set of signals and several seeds, mean ± std.

    python -m inr.experiments.table1 --kind natural --seeds 3          # 8 photographs × 3 seeds, 128², 300 steps
    python -m inr.experiments.table1 --kind text --seeds 3             # 8 generated text images × 3 seeds
    python -m inr.experiments.table1 --kind natural --images DIR       # the paper's own images, or any folder
    python -m inr.experiments.table1 --kind ct --seeds 3               # 4 Shepp–Logan phantoms × 3 seeds, 128²
    python -m inr.experiments.table1 --kind natural --paper --estimate-only   # 512², 2000 steps: for a GPU

Images: each mapping (none, basic, positional, Gaussian; the registry's settings for the kind,
``inr.methods.registry``) trains once, as one stacked model whose members are every image × every seed
(``ImageFitting(member_encoders=..., member_seeds=...)``: member k is exactly the single run of its image and
seed), with the 2D image protocol (train on pixels [::2, ::2], score the held-out [1::2, 1::2]). Bilinear and
bicubic interpolation of the same training pixels are scored over the same images. CT: each phantom's 20
projections are fitted by one stacked model whose members are the seeds (they share the phantom's
measurements), beside filtered back-projection and grid optimisation of the same measurements
(``inr.experiments.problems``).

Prints ``method | PSNR (dB) | SSIM | train PSNR (dB) | n | paper PSNR (dB) | seconds`` (mean ± sample standard
deviation over every image and seed), the paper's row, and the paired differences (per image and seed) of
neighbouring mappings and of the best mapping against each baseline, called by the rule of docs/results.md. Writes ``results.md``, ``results.json`` (every member's scores) and the images
it used (``images/``, each checked against its source before it is used again) under ``--out``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from jsonargparse import ArgumentParser

from inr.errors import InputError
from inr.experiments import comparison
from inr.experiments.comparison import Baseline, Comparison, Context, Member
from inr.experiments.runner import Column, prepare_out
from inr.methods.protocols import PROTOCOLS, paper_row
from inr.methods.registry import MAPPING_METHODS, METHODS, Setting

# the data, the tasks, the measurements and the baselines are imported by the hooks that read or train them: the
# command line needs no Lightning

# CPU-sized defaults: the image comparison's 128² and 300 steps; CT at 128², where the mappings separate
# (docs/inverse.md), with the notebook's 1000 steps
CPU = {"natural": (128, 300), "text": (128, 300), "ct": (128, 1000)}
DEFAULT_COUNT = {"text": 8, "ct": 4}  # natural: every photograph of the set (image_sets.NATURAL)
COLUMNS = (
    Column("method", "method", "s"),
    Column("PSNR (dB)", "psnr", ".2f"),
    Column("SSIM", "ssim", ".3f"),
    Column("train PSNR (dB)", "train_psnr", ".2f"),
    Column("n", "n", "d"),
    Column("paper PSNR (dB)", "paper_psnr", ".2f", spread=False),
    Column("seconds per member", "seconds", ".0f", spread=False),
)


@dataclass(frozen=True)
class TableProtocol:
    """The table's protocol: the kind, its signals (image files, or phantom seeds), grid, steps, seeds and width;
    ``folder`` the images' folder (given, or where the built-in set is written) and the label of the set."""

    seeds: tuple[int, ...]
    steps: int
    kind: str
    resolution: int
    signals: tuple[Any, ...]
    folder: Optional[str]
    label: str
    width: int = 256
    builtin: bool = False


class Table1(Comparison):
    name, doc = "table1", __doc__
    methods = tuple(n for n, m in METHODS.items() if 2 in m.dims)
    default_methods = MAPPING_METHODS
    columns = COLUMNS
    seeds = 3
    stack = True

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--kind",
            type=Literal["natural", "text", "ct"],
            required=True,
            help="photographs, generated text images or CT phantoms",
        )
        parser.add_argument(
            "--images", type=Optional[str], default=None, help="a folder of images instead of the built-in set (natural, text)"
        )
        parser.add_argument(
            "--count", type=Optional[int], default=None, help="text images or phantoms in the set (null: 8 / 4; natural: all 8)"
        )
        parser.add_argument("--width", type=int, default=256, help="hidden width of the MLP (the paper's)")

    def protocol(self, args: Any) -> TableProtocol:
        from inr.data.image_sets import NATURAL, image_folder

        if args.kind == "ct" and args.images is not None:
            raise InputError("--images applies to the image kinds; CT uses generated phantoms (--count)")
        for key in ("count", "width"):
            if getattr(args, key) is not None and getattr(args, key) < 1:
                raise InputError(f"--{key} is too small: {getattr(args, key)}")
        count = args.count or DEFAULT_COUNT.get(args.kind, len(NATURAL))
        resolution, steps = CPU[args.kind]
        paper = PROTOCOLS[args.kind]
        resolution = args.resolution or (paper.resolution if args.paper else resolution)
        if resolution < 8:
            raise InputError(f"--resolution is too small: {resolution}")
        # the built-in images are written under --out (a scratch folder when only the time is estimated)
        folder = args.images or str(Path(tempfile.mkdtemp() if args.estimate_only else self.out_dir(args)) / "images")
        if args.kind == "ct":
            signals, label = tuple(range(count)), f"{count} Shepp–Logan phantoms, {resolution}², 20 angles"
        elif args.images is not None:
            signals = tuple(str(p) for p in image_folder(args.images))
            label = f"{len(signals)} images from {args.images}"
        elif args.kind == "natural":
            signals = tuple(str(Path(folder) / f"{name}.png") for name in tuple(NATURAL)[:count])
            label = f"{len(signals)} photographs of scikit-image"
        else:
            signals, label = (
                tuple(str(Path(folder) / f"text_{seed}.png") for seed in range(count)),
                f"{count} generated text images",
            )
        steps = args.steps or (paper.steps if args.paper else steps)
        folder = None if args.kind == "ct" else folder
        builtin = args.kind != "ct" and args.images is None
        return TableProtocol(args.seed_list, steps, args.kind, resolution, signals, folder, label, args.width, builtin)

    def check(self, p: TableProtocol) -> Any:
        """The built-in images written (or checked against their sources), then every image read: a bad one fails
        here, before anything trains."""
        from inr.data.image_sets import natural_set, text_set

        if p.builtin and p.kind == "natural":
            natural_set(prepare_out(p.folder, "--out images"), tuple(Path(s).stem for s in p.signals))
        elif p.builtin:
            text_set(prepare_out(p.folder, "--out images"), len(p.signals), max(p.resolution, 256))
        for signal in p.signals[1:] if p.kind != "ct" else ():
            comparison.loaded(self.data(Context(p, Member(signal, p.seeds[0]))))
        return super().check(p)

    def signals(self, p: TableProtocol) -> tuple[Any, ...]:
        return p.signals

    def label(self, p: TableProtocol, signal: Any) -> Optional[str]:
        return f"phantom {signal}" if isinstance(signal, int) else Path(signal).stem

    def groups(self, p: TableProtocol, name: str, members: list[Member]) -> list[list[Member]]:
        """Images: one stacked run over every image × seed; CT: one per phantom, a member per seed."""
        if p.kind != "ct":
            return [members]
        return [[m for m in members if m.signal == signal] for signal in p.signals]

    def data(self, ctx: Context) -> Any:
        from inr.data import ImageDataModule
        from inr.experiments import problems

        p = ctx.p
        if p.kind == "ct":
            return problems.Measurement("ct", p.resolution).data(seed=ctx.signal)
        return ImageDataModule(path=str(ctx.signal), resolution=p.resolution, split="every_other")

    def stacked_data(self, ctx: Context) -> Any:
        from inr.data import ImageDataModule

        p = ctx.p
        if p.kind == "ct":
            return self.data(ctx)  # the members share the phantom's measurements
        return ImageDataModule(path=[str(m.signal) for m in ctx.group], resolution=p.resolution, split="every_other")

    def setting(self, ctx: Context) -> Setting:
        p = ctx.p
        train_side = p.resolution if p.kind == "ct" else p.resolution // 2  # CT fits the whole grid
        return Setting(
            in_dim=2,
            train_side=train_side,
            protocol=PROTOCOLS[p.kind],
            width=p.width,
            init="paper",
            seed=ctx.seed,
            steps=p.steps,
        )

    def task(self, ctx: Context) -> tuple[type, dict[str, Any]]:
        from inr.tasks import ImageFitting, InverseFitting

        kind = ctx.p.kind
        return (InverseFitting if kind == "ct" else ImageFitting), {"out_channels": 1 if kind == "ct" else 3}

    def predict(self, ctx: Context, model: Any) -> Any:
        return model.render().cpu()

    def score(self, ctx: Context, prediction: Any) -> dict[str, Any]:
        from inr.experiments import problems
        from inr.experiments.baselines import score_prediction

        data = ctx.data
        if ctx.p.kind == "ct":
            return problems.score(prediction, data.values_grid())
        return {
            k: v for k, v in score_prediction(prediction, data.values_grid(), data).items() if k in ("psnr", "ssim", "train_psnr")
        }

    def extra(self, ctx: Context) -> dict[str, Any]:
        paper = PROTOCOLS[ctx.p.kind].test_psnr.get(ctx.name)
        return {} if paper is None else {"paper_psnr": paper}

    def baselines(self, ctx: Context) -> list[Baseline]:
        from inr.experiments import problems
        from inr.experiments.baselines import interpolations

        p, data = ctx.p, ctx.data
        if p.kind == "ct":
            name, make = problems.classical("ct", data)
            return [
                Baseline(name, make),
                Baseline("grid optimisation", lambda: problems.grid_optimisation(data, p.steps), steps=p.steps),
            ]
        return [Baseline(n, make, s) for n, (make, s) in interpolations(data, (0.0, 1.0)).items() if n != "constant"]

    def title(self, p: TableProtocol) -> str:
        return (
            f"Table 1, {p.kind}: {p.label}, seeds {p.seeds[0]}–{p.seeds[-1]}, {p.resolution}², {p.steps} steps; "
            "mean ± sample std over every signal and seed"
        )

    def notes(self, p: TableProtocol, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        return paper_row(p.kind)

    def pairs(self, p: TableProtocol, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return comparison.neighbours_and_best(summary)

    def size(self, p: TableProtocol) -> str:
        return f"at {p.resolution}²"


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the table; print and write it; return every member's row (models, then baselines)."""
    return comparison.main(Table1(), argv)


if __name__ == "__main__":
    main()
