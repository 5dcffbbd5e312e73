"""The paper's Table 1 as the paper reports it: every mapping scored over a set of signals and several seeds, mean ± std.

    python -m inr.experiments.table1 --kind natural --seeds 3          # 8 photographs × 3 seeds, 128², 300 steps
    python -m inr.experiments.table1 --kind text --seeds 3             # 8 generated text images × 3 seeds
    python -m inr.experiments.table1 --kind natural --images DIR       # the paper's own images, or any folder
    python -m inr.experiments.table1 --kind ct --seeds 3               # 4 Shepp–Logan phantoms × 3 seeds, 128²
    python -m inr.experiments.table1 --kind natural --paper --estimate-only   # 512², 2000 steps: for a GPU

Images: each mapping (none, basic, positional, Gaussian; the registry's settings for the kind,
``inr.experiments.methods``) trains once, as one stacked model whose members are every image × every seed
(``ImageFitting(member_encoders=..., member_seeds=...)``: member k is exactly the single run of its image and
seed), with the 2D image protocol (train on pixels [::2, ::2], score the held-out [1::2, 1::2]). Bilinear and
bicubic interpolation of the same training pixels are scored over the same images. CT: each phantom's 20
projections are fitted by one stacked model whose members are the seeds (they share the phantom's
measurements), beside filtered back-projection and grid optimisation of the same measurements.

Prints ``method | PSNR (dB) | SSIM | train PSNR (dB) | n | paper PSNR (dB) | seconds`` (mean ± sample standard
deviation over every image and seed), the paper's row, and for each pair of neighbouring rows whether their
difference exceeds the spread. Writes ``results.md``, ``results.json`` (every member's scores) and the images
it used under ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

import lightning as L

from inr.data import CTDataModule, ImageDataModule
from inr.data.image_sets import NATURAL, image_folder, natural_set, text_set
from inr.experiments import inverse
from inr.experiments.baselines import baseline_rows, score_prediction
from inr.experiments.estimate import estimate_seconds
from inr.experiments.methods import MAPPING_METHODS, METHODS, Setting, method_names
from inr.experiments.protocols import PROTOCOLS, paper_row
from inr.experiments.runner import (
    Column,
    ExperimentParser,
    RowProgress,
    command,
    difference_note,
    fit_row,
    format_seconds,
    markdown_table,
    prepare_out,
    silence_lightning,
    summarise,
    write_results,
)
from inr.io.allocator import retain_freed_memory
from inr.io.threads import torch_threads
from inr.tasks import ImageFitting, InverseFitting

KINDS = ("natural", "text", "ct")
# CPU-sized defaults: the image comparison's 128² and 300 steps; CT at 128², where the mappings separate
# (docs/inverse.md), with the notebook's 1000 steps
CPU = {"natural": (128, 300), "text": (128, 300), "ct": (128, 1000)}
DEFAULT_COUNT = {"text": 8, "ct": 4}
COLUMNS = (
    Column("method", "method", "s"),
    Column("PSNR (dB)", "psnr", ".2f"),
    Column("SSIM", "ssim", ".3f"),
    Column("train PSNR (dB)", "train_psnr", ".2f"),
    Column("n", "n", "d"),
    Column("paper PSNR (dB)", "paper_psnr", ".2f", spread=False),
    Column("seconds per member", "seconds", ".0f", spread=False),
)
NUMERIC = ("psnr", "ssim", "train_psnr", "paper_psnr", "seconds")


@dataclass(frozen=True)
class Table:
    """The table's protocol: the kind, grid, steps, seeds and the signals' labels."""

    kind: str
    resolution: int
    steps: int
    seeds: tuple[int, ...]
    width: int = 256
    seed: int = 0  # the probe's, for the time estimate

    @property
    def protocol(self):
        return PROTOCOLS[self.kind]

    def setting(self, seed: int) -> Setting:
        train_side = self.resolution if self.kind == "ct" else self.resolution // 2  # CT fits the whole grid
        init = "paper"
        return Setting(in_dim=2, train_side=train_side, protocol=self.protocol, width=self.width, init=init, seed=seed)


def member_parts(name: str, table: Table, members: list[tuple[Any, int]]):
    """Per member (signal, seed): its encoder from the registry with that seed; the shared network and optimiser."""
    specs = [METHODS[name].resolve(table.setting(seed)) for _, seed in members]
    encoders = [spec.build()[0] for spec in specs]
    _, network, optimizer = specs[0].build()
    return encoders, network, optimizer, specs[0]


def image_rows(name: str, table: Table, paths: list[Path], out: Path) -> list[dict[str, Any]]:
    """One stacked run of ``name`` over every image × seed; one row per member, scored like the baselines."""
    members = [(path, seed) for path in paths for seed in table.seeds]
    encoders, network, optimizer, spec = member_parts(name, table, members)
    L.seed_everything(0, verbose=False)
    task = ImageFitting(
        member_encoders=encoders,
        member_seeds=[seed for _, seed in members],
        network=network,
        optimizer=optimizer,
        out_channels=3,
    )
    data = ImageDataModule(path=[str(p) for p, _ in members], resolution=table.resolution, split="every_other")
    seconds = fit_row(task, data, table.steps, label=f"{name}, {len(members)} members")
    rows = []
    for k, (path, seed) in enumerate(members):
        single = task.member(k)
        dm = ImageDataModule(path=str(path), resolution=table.resolution, split="every_other")
        dm.setup("fit")
        scores = score_prediction(single.render(), dm.values_grid(), dm)
        rows.append(member_row(name, spec.lr, path.stem, seed, scores, seconds / len(members), table))
    return rows


def member_row(name: str, lr: float, signal: str, seed: Optional[int], scores: dict, seconds: float, table: Table) -> dict:
    return {
        "method": name,
        "kind": "model",
        "signal": signal,
        "seed": seed,
        "lr": lr,
        "psnr": scores.get("test_psnr", scores.get("psnr")),
        "ssim": scores.get("test_ssim", scores.get("ssim")),
        "train_psnr": scores.get("train_psnr"),
        "paper_psnr": PROTOCOLS[table.kind].test_psnr.get(name),
        "seconds": seconds,
        "steps": table.steps,
    }


def image_baselines(table: Table, paths: list[Path]) -> list[dict[str, Any]]:
    """Bilinear and bicubic interpolation of each image's training pixels (no training, no seeds)."""
    rows = []
    for path in paths:
        dm = ImageDataModule(path=str(path), resolution=table.resolution, split="every_other")
        dm.setup("fit")
        for r in baseline_rows(dm):
            if r["method"] == "constant":
                continue
            rows.append({**member_row(r["method"], float("nan"), path.stem, None, r, 0.0, table), "kind": "baseline"})
            rows[-1].update({"seconds": float("nan"), "steps": 0, "paper_psnr": None})
    return rows


def ct_rows(name: str, table: Table, phantom: int, dm: CTDataModule) -> list[dict[str, Any]]:
    """One stacked run of ``name`` on one phantom's projections, a member per seed, scored on the whole grid."""
    members = [(phantom, seed) for seed in table.seeds]
    encoders, network, optimizer, spec = member_parts(name, table, members)
    L.seed_everything(0, verbose=False)
    task = InverseFitting(
        member_encoders=encoders,
        member_seeds=list(table.seeds),
        network=network,
        optimizer=optimizer,
        out_channels=dm.out_channels,
    )
    seconds = fit_row(task, dm, table.steps, label=f"{name}, phantom {phantom}")
    truth = dm.values_grid()
    rows = []
    for k, seed in enumerate(table.seeds):
        scores = inverse.score(task.member(k).render().cpu(), truth)
        rows.append(member_row(name, spec.lr, f"phantom {phantom}", seed, scores, seconds / len(members), table))
    return rows


def ct_baselines(table: Table, phantom: int, dm: CTDataModule) -> list[dict[str, Any]]:
    rows = []
    name, make = inverse.classical("ct", dm)
    methods = {
        name: make,
        "grid optimisation": lambda: inverse.baselines.grid_optimisation(
            dm.operator.cpu(), dm.measurements, dm.out_channels, table.steps, inverse.GRID_LR
        ),
    }
    for method, build in methods.items():
        start = time.perf_counter()
        scores = inverse.score(build(), dm.values_grid())
        row = member_row(method, float("nan"), f"phantom {phantom}", None, scores, time.perf_counter() - start, table)
        rows.append({**row, "kind": "baseline", "paper_psnr": None, "steps": table.steps if "grid" in method else 0})
    return rows


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--kind", choices=KINDS, required=True, help="photographs, generated text images or CT phantoms")
    parser.add_argument("--images", default=None, help="a folder of images instead of the built-in set (natural, text)")
    parser.add_argument("--count", type=int, default=None, help="text images or phantoms in the set (default 8 / 4)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..S−1 per signal (network init, Gaussian B)")
    parser.add_argument("--resolution", type=int, default=None, help="grid side (default 128; --paper: the paper's)")
    parser.add_argument("--steps", type=int, default=None, help="training steps (default 300, CT 1000; --paper: the paper's)")
    parser.add_argument("--methods", default=",".join(MAPPING_METHODS), help="comma-separated methods of the registry")
    parser.add_argument("--width", type=int, default=256, help="hidden width of the MLP (the paper: 256)")
    parser.add_argument("--paper", action="store_true", help="the paper's resolution and steps: a GPU job")
    parser.add_argument("--estimate-only", action="store_true", help="print the expected time and stop")
    parser.add_argument("--out", default="outputs/table1", help="output directory")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    try:
        args.names = method_names(args.methods, tuple(n for n, m in METHODS.items() if 2 in m.dims))
    except ValueError as exc:
        parser.error(f"--methods: {exc}")
    for key in ("count", "seeds", "resolution", "steps", "width", "threads"):
        value = getattr(args, key)
        if value is not None and value < (8 if key == "resolution" else 1):
            parser.error(f"--{key} is too small: {value}")
    if args.kind == "ct" and args.images is not None:
        parser.error("--images applies to the image kinds; CT uses generated phantoms (--count)")
    return args


def table_from_args(args: argparse.Namespace) -> Table:
    resolution, steps = CPU[args.kind]
    paper = PROTOCOLS[args.kind]
    return Table(
        kind=args.kind,
        resolution=args.resolution or (paper.resolution if args.paper else resolution),
        steps=args.steps or (paper.steps if args.paper else steps),
        seeds=tuple(range(args.seeds)),
        width=args.width,
    )


def estimate(args: argparse.Namespace, table: Table, members: int) -> None:
    """The expected time of the whole table: each method's single-model step, measured on a short probe of one
    signal (a stacked step costs about K single steps on a CPU: benchmarks/stacked.py), × members × steps."""
    probe_table = replace(table, seeds=(0,))

    def make_data():
        if args.kind == "ct":
            return CTDataModule(resolution=table.resolution, phantom_seed=0, seed=0)
        return ImageDataModule(resolution=table.resolution, split="every_other")  # the bundled astronaut

    def factory(name):
        def build(_, channels):
            encoders, network, optimizer, _spec = member_parts(name, probe_table, [(0, 0)])
            task = InverseFitting if args.kind == "ct" else ImageFitting
            return task(encoder=encoders[0], network=network, optimizer=optimizer, out_channels=channels)

        return build

    seconds, per_step = estimate_seconds({n: factory(n) for n in args.names}, probe_table, make_data)
    steps = ", ".join(f"{n} {1000 * s:.1f}" for n, s in per_step.items())
    print(
        f"expected time: about {format_seconds(seconds * members)} for {len(args.names)} methods × {members} members × "
        f"{table.steps} steps at {table.resolution}² (an estimate: measured ms/step of one member {steps}, scaled)",
        file=sys.stderr,
        flush=True,
    )


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the table; print it; return every member's row (models, then baselines)."""
    args = parse_args(argv)
    retain_freed_memory()
    rows: list[dict[str, Any]] = []
    with torch_threads(args.threads):
        return command(lambda: run(args, rows), lambda: markdown_table(summarise(rows, NUMERIC), COLUMNS) if rows else "")


def run(args: argparse.Namespace, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    silence_lightning()
    table = table_from_args(args)
    if args.estimate_only:
        count = args.count or DEFAULT_COUNT.get(args.kind, len(NATURAL))
        estimate(args, table, count * len(table.seeds))
        return []
    out = prepare_out(args.out)
    baselines: list[dict[str, Any]] = []
    if args.kind == "ct":
        phantoms = list(range(args.count or DEFAULT_COUNT["ct"]))
        progress = RowProgress(len(args.names) * len(phantoms))
        label = f"{len(phantoms)} Shepp–Logan phantoms, {table.resolution}², 20 angles"
        for phantom in phantoms:
            dm = CTDataModule(resolution=table.resolution, phantom_seed=phantom, seed=phantom)
            dm.setup("fit")
            for name in args.names:
                rows += ct_rows(name, table, phantom, dm)
                progress.row(f"{name} (phantom {phantom})", f"PSNR {rows[-1]['psnr']:.2f} dB (last seed)")
            baselines += ct_baselines(table, phantom, dm)
    else:
        images = out / "images"
        if args.images is not None:
            paths = image_folder(args.images)
            label = f"{len(paths)} images from {args.images}"
        elif args.kind == "natural":
            paths = natural_set(images) if args.count is None else natural_set(images, tuple(NATURAL)[: args.count])
            label = f"{len(paths)} photographs of scikit-image"
        else:
            paths = text_set(images, args.count or DEFAULT_COUNT["text"], max(table.resolution, 256))
            label = f"{len(paths)} generated text images"
        for path in paths:  # bad input fails here, before anything trains
            ImageDataModule(path=str(path), resolution=table.resolution, split="every_other").setup("fit")
        progress = RowProgress(len(args.names))
        for name in args.names:
            rows += image_rows(name, table, paths, out)
            last = summarise([r for r in rows if r["method"] == name], NUMERIC)[0]
            progress.row(name, f"PSNR {last['psnr']:.2f} ± {last['psnr_std']:.2f} dB over {last['n']} members")
        baselines = image_baselines(table, paths)
    all_rows = rows + baselines
    summary = summarise(all_rows, NUMERIC)
    text = markdown_table(summary, COLUMNS)
    order = [r["method"] for r in summary]
    pairs = list(zip(order, order[1:]))
    notes = "\n".join(f"- {difference_note(summary, b, a, 'psnr')}" for a, b in pairs)
    title = (
        f"Table 1, {args.kind}: {label}, seeds {table.seeds[0]}–{table.seeds[-1]}, {table.resolution}², "
        f"{table.steps} steps; mean ± sample std over every signal and seed"
    )
    body = f"{title}\n\n{text}\n\nDifferences between neighbouring rows (PSNR):\n{notes}\n\n{paper_row(args.kind)}"
    write_results(out, body, {"table": title, "rows": all_rows, "summary": summary})
    print(body)
    return all_rows


if __name__ == "__main__":
    main()
