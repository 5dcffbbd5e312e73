"""Architecture comparison on a 1D signal or a 3D volume, one command: every row of ``FIELD_VARIANTS`` trained
with the every_other protocol, beside the classical baselines, band by band.

    python -m inr.experiments.compare_fields --signal              # power-law signal, 1024 samples, 1000 steps
    python -m inr.experiments.compare_fields --signal --generator sinusoids
    python -m inr.experiments.compare_fields --volume              # built-in "bumpy" density, 32³, 300 steps
    python -m inr.experiments.compare_fields --volume --sweep      # σ and positional scale on the training split only

Each row trains through the framework (Lightning Trainer, ``SignalFitting`` or ``VolumeFitting(density)``,
``SignalDataModule`` or ``VolumeDataModule``, ``SpectralBiasCallback``, ``HeldOutPSNRHistory``): train on the
samples [::2, …], score the held-out samples [1::2, …], full-batch Adam, the image comparison's settings
adapted to the dimension (``field_variants``). The baselines (``field_baselines``: constant, linear, cubic)
are scored the same way in the same run. Writes to ``--out``: ``results.md``, ``results.json``,
``spectral_heatmaps.png`` and one TensorBoard run per row. ``--sweep`` instead fits the Gaussian and
positional rows for several σ and scales on the training samples alone (their own every_other split) and
writes ``sweep.md``/``sweep.json``: the held-out split plays no part in choosing them.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import warnings
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, Optional

import lightning as L
import torch
from torch import Tensor

from inr.callbacks.spectral import SpectralBiasCallback
from inr.data.module import GridDataModule
from inr.data.signal import GENERATORS, SignalDataModule
from inr.data.volume import VolumeDataModule
from inr.errors import InputError
from inr.experiments.compare_encoders import Variant, fit_row
from inr.experiments.compare_report import COLUMNS, json_safe, markdown_table
from inr.experiments.field_baselines import field_baseline_rows, score_field
from inr.experiments.field_variants import DOMAINS, FIELD_VARIANTS, FieldProtocol
from inr.experiments.paper_settings import PAPER_SETTINGS
from inr.experiments.progress import HeldOutPSNRHistory
from inr.experiments.threads import torch_threads
from inr.run.allocator import retain_freed_memory
from inr.spectral.plots import comparison_figure
from inr.tasks import SignalFitting, VolumeFitting
from inr.tasks.base import INRModule

# The image table's columns without SSIM (a 2D measure)
FIELD_COLUMNS = tuple(c for c in COLUMNS if c[1] != "test_ssim")
# Swept on the training samples alone (--sweep): the paper's natural-image values (σ = 10, scale 6) among them
SWEEP_SIGMAS = (1.0, 3.0, 10.0, 30.0, 100.0)
SWEEP_SCALES = (3.0, 4.0, 6.0, 8.0)


class GivenGridDataModule(GridDataModule):
    """A target given as a tensor (*shape, C), with the every_other split: the sweep's training samples."""

    def __init__(self, values: Tensor, label: str, mode: str = "density") -> None:
        super().__init__(split="every_other")
        self._given, self.label, self.mode = values, label, mode  # ``mode``: what VolumeFitting checks

    def load_values(self) -> Tensor:
        return self._given

    def describe(self) -> str:
        return self.label


def make_data(args: argparse.Namespace, p: FieldProtocol) -> Callable[[], GridDataModule]:
    if p.domain.name == "signal":
        return partial(SignalDataModule, generator=args.generator, length=p.resolution, split="every_other", seed=p.seed)
    return partial(
        VolumeDataModule, builtin=args.builtin, resolution=p.resolution, mode="density", split="every_other", seed=p.seed
    )


def build_model(variant: Variant, p: FieldProtocol, out_channels: int) -> INRModule:
    optimizer = partial(torch.optim.Adam, lr=variant.learning_rate(p), **dict(variant.adam))
    parts = {"encoder": variant.encoder(p), "network": variant.network(p), "out_channels": out_channels, "optimizer": optimizer}
    if p.domain.name == "signal":
        return SignalFitting(**parts, data_range=p.domain.data_range)
    return VolumeFitting(**parts, mode="density")


def run_variant(name: str, variant: Variant, p: FieldProtocol, data: Callable[[], GridDataModule], out: Path) -> dict[str, Any]:
    """Train one row through a Lightning Trainer and return its scores, spectral history and PSNR history."""
    L.seed_everything(p.seed, verbose=False)
    dm = data()
    model = build_model(variant, p, dm.out_channels)
    spectral = SpectralBiasCallback(num_bands=p.num_bands)
    progress = HeldOutPSNRHistory(every_n_steps=p.steps_per_epoch, data_range=p.domain.data_range)
    seconds = fit_row(model, dm, name, out, p.steps, p.steps_per_epoch, [spectral, progress])
    scores = score_field(model.render(), dm.values_grid(), dm, p.domain.data_range, p.num_bands)
    h = spectral.history_arrays()
    return {
        "encoder": name,
        "kind": "model",
        "setting": variant.describe(p, model.encoder),
        "in_dim": model.encoder.in_dim,
        **scores,
        "seconds": seconds,
        "ms_per_step": 1000.0 * seconds / p.steps,
        "params": sum(t.numel() for t in model.parameters()),
        "lr": variant.learning_rate(p),
        **(progress.reached(p.target_psnr) if p.target_psnr is not None else {"target_step": None, "target_seconds": None}),
        "history": {k: h[k].tolist() for k in ("steps", "edges", "errors", "dc")},
        "progress": progress.history,
    }


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr, exit 2 (argparse prints its usage block too)."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = OneLineParser(prog="python -m inr.experiments.compare_fields", description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--signal", action="store_true", help="a generated 1D signal (SignalDataModule)")
    source.add_argument("--volume", action="store_true", help="a built-in density volume (VolumeDataModule)")
    parser.add_argument("--generator", choices=GENERATORS, default="power_law", help="the signal (with --signal)")
    parser.add_argument("--builtin", choices=("bumpy", "sphere"), default="bumpy", help="the volume (with --volume)")
    parser.add_argument("--resolution", type=int, help="samples per axis (default: 1024 signal, 32 volume)")
    parser.add_argument("--steps", type=int, help="training steps (default: 1000 signal, 300 volume)")
    parser.add_argument("--rows", default="all", help=f"comma-separated subset of {', '.join(FIELD_VARIANTS)}, or all")
    parser.add_argument("--sigma", type=float, help="Gaussian σ (default: the domain's, see docs/benchmark.md)")
    parser.add_argument("--scale", type=float, help="positional scale (default: the domain's)")
    parser.add_argument("--target-psnr", type=float, help="held-out PSNR (dB) to reach (default: linear interpolation's)")
    parser.add_argument("--sweep", action="store_true", help="sweep σ and the positional scale on the training split only")
    parser.add_argument("--out", help="output directory (default outputs/compare_fields/<signal|volume>)")
    parser.add_argument("--width", type=int, default=256, help="hidden width of the networks")
    parser.add_argument("--init", choices=("paper", "torch"), default="paper", help="initialisation of the MLP rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    args.domain = DOMAINS["signal" if args.signal else "volume"]
    names = list(FIELD_VARIANTS) if args.rows.strip() == "all" else [n.strip() for n in args.rows.split(",") if n.strip()]
    unknown = [n for n in names if n not in FIELD_VARIANTS]
    if unknown or not names:
        parser.error(f"--rows: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(FIELD_VARIANTS)}")
    args.names = names
    smallest = args.domain.min_resolution
    if args.resolution is not None and args.resolution < smallest:
        parser.error(f"--resolution {args.resolution} is too small for a {args.domain.name}: at least {smallest} per axis")
    for key in ("steps", "width", "threads"):
        if getattr(args, key) is not None and getattr(args, key) < 1:
            parser.error(f"--{key} must be ≥ 1, got {getattr(args, key)}")
    for key in ("sigma", "scale"):
        if getattr(args, key) is not None and not getattr(args, key) > 0:
            parser.error(f"--{key} must be positive, got {getattr(args, key)}")
    if args.target_psnr is not None and not abs(args.target_psnr) < float("inf"):
        parser.error(f"--target-psnr must be finite, got {args.target_psnr}")
    args.out = Path(args.out or f"outputs/compare_fields/{args.domain.name}")
    return args


def protocol_from_args(args: argparse.Namespace) -> FieldProtocol:
    d = args.domain
    return FieldProtocol(
        domain=d,
        resolution=args.resolution or d.resolution,
        steps=args.steps or d.steps,
        gaussian_sigma=args.sigma or d.gaussian_sigma,
        positional_scale=args.scale or d.positional_scale,
        width=args.width,
        depth=PAPER_SETTINGS["natural"].depth,
        init=args.init,
        seed=args.seed,
        target_psnr=args.target_psnr,
    )


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison (or the sweep); print the Markdown table; return the rows."""
    args = parse_args(argv)
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", module="lightning")
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    with torch_threads(args.threads):
        try:
            return sweep(args) if args.sweep else compare(args)
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None


def report(rows: list[dict[str, Any]], title: str, notes: str, saved: dict[str, Any], out: Path, stem: str) -> str:
    """Write ``<stem>.md`` (title, table, notes) and ``<stem>.json``; return the table."""
    table = markdown_table(rows, FIELD_COLUMNS)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(json_safe({**saved, "rows": rows}), indent=1, allow_nan=False))
    (out / f"{stem}.md").write_text(f"{title}\n\n{table}\n\n{notes}\n")
    return table


def compare(args: argparse.Namespace) -> list[dict[str, Any]]:
    p = protocol_from_args(args)
    data = make_data(args, p)
    probe = data()
    probe.setup("fit")  # bad input fails here, before anything is written
    baselines = field_baseline_rows(probe, p.domain.data_range, p.num_bands, p.domain.clamp)
    linear = next(r["test_psnr"] for r in baselines if r["encoder"] == "linear")
    p = replace(p, target_psnr=linear if p.target_psnr is None else p.target_psnr)
    rows = []
    for name in args.names:
        rows.append(run_variant(name, FIELD_VARIANTS[name], p, data, args.out))
        r = rows[-1]
        print(
            f"{name}: train {r['train_psnr']:.2f} dB, test {r['test_psnr']:.2f} dB, {r['seconds']:.0f} s, "
            f"target {p.target_psnr:.2f} dB at step {r['target_step']}",
            file=sys.stderr,
            flush=True,
        )
    rows += baselines
    shape = "×".join([str(p.resolution)] * p.ndim)
    title = f"{probe.describe()}, {shape} samples, {p.steps} steps, every_other split"
    notes = (
        f"PSNR with data range {p.domain.data_range:g}. Δ: relative error per radial band (DC apart; low/high = lower/upper "
        f"half of {p.num_bands} bands up to the held-out grid's Nyquist). Target: held-out PSNR ≥ {p.target_psnr:.2f} dB "
        + ("(linear interpolation's)" if args.target_psnr is None else "(given)")
        + f", checked every {p.steps_per_epoch} steps; its time counts training steps only."
    )
    saved = {"source": probe.describe(), "protocol": asdict(p)}
    table = report(rows, title, notes, saved, args.out, "results")
    histories = {r["encoder"]: r["history"] for r in rows if "history" in r}
    comparison_figure(histories, title=f"spectral bias: {title}").savefig(args.out / "spectral_heatmaps.png", dpi=110)
    print(table)
    return rows


def sweep(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Gaussian σ ∈ ``SWEEP_SIGMAS`` and positional scale ∈ ``SWEEP_SCALES`` fitted to the training samples' even
    samples and scored on their odd ones: the held-out split of the comparison is never read."""
    p = protocol_from_args(args)
    probe = make_data(args, p)()
    probe.setup("fit")
    train = probe.values_grid(probe.train_index, probe.train_shape)  # (C, *train_shape)
    values = train.movedim(0, -1).contiguous()  # (C, *t) -> (*t, C)
    inner = replace(p, resolution=p.train_side, target_psnr=None)
    data = partial(GivenGridDataModule, values, f"training samples of the {probe.describe()}")
    rows = []
    for name, key, grid in (("gaussian", "gaussian_sigma", SWEEP_SIGMAS), ("positional", "positional_scale", SWEEP_SCALES)):
        for value in grid:
            row = run_variant(name, FIELD_VARIANTS[name], replace(inner, **{key: value}), data, args.out / "sweep")
            rows.append({k: v for k, v in row.items() if k not in ("history", "progress")})
            print(f"{name} {row['setting']}: inner held-out {row['test_psnr']:.2f} dB", file=sys.stderr, flush=True)
    title = f"Sweep on the training samples of the {probe.describe()} ({inner.resolution} per axis, their own every_other split), {p.steps} steps"
    table = report(rows, title, "The comparison's held-out samples are not used.", {"protocol": asdict(inner)}, args.out, "sweep")
    print(table)
    return rows


if __name__ == "__main__":
    main()
