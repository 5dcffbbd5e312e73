"""Architecture comparison on a 1D signal or a 3D volume, one command: every method of the registry (``inr.experiments.methods``) defined in the dimension trained
with the every_other protocol, beside the classical baselines, band by band.

    python -m inr.experiments.compare_fields --signal              # power-law signal, 1024 samples, 1000 steps
    python -m inr.experiments.compare_fields --signal --generator sinusoids
    python -m inr.experiments.compare_fields --volume              # built-in "bumpy" density, 32³, 300 steps
    python -m inr.experiments.compare_fields --volume --sweep      # σ and positional scale on the training split only

Each row trains through the framework (Lightning Trainer, ``SignalFitting`` or ``VolumeFitting(density)``,
``SignalDataModule`` or ``VolumeDataModule``, ``SpectralBiasCallback``, ``HeldOutPSNRHistory``): train on the
samples [::2, …], score the held-out samples [1::2, …], full-batch Adam, the image comparison's settings
adapted to the dimension (``DOMAINS`` here). The baselines (``baselines``: constant, linear, cubic)
are scored the same way in the same run. Writes to ``--out``: ``results.md``, ``results.json``,
``spectral_heatmaps.png`` and one TensorBoard run per row. ``--sweep`` instead fits the Gaussian and
positional rows for several σ and scales on the training samples alone (their own every_other split) and
writes ``sweep.md``/``sweep.json``: the held-out split plays no part in choosing them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Optional

import lightning as L
from lightning.pytorch.loggers import TensorBoardLogger
from torch import Tensor

from inr.callbacks.spectral import SpectralBiasCallback
from inr.data.module import GridDataModule
from inr.data.signal import GENERATORS, SignalDataModule
from inr.data.volume import VolumeDataModule
from inr.experiments.baselines import field_baseline_rows, score_field
from inr.experiments.compare_encoders import COLUMNS
from inr.experiments.methods import METHODS, Resolved, Setting, method_names
from inr.experiments.progress import HeldOutPSNRHistory
from inr.experiments.protocols import PROTOCOLS, MappingSettings
from inr.experiments.runner import (
    ExperimentParser,
    RowProgress,
    command,
    fit_row,
    markdown_table,
    prepare_out,
    silence_lightning,
    summarise,
    write_results,
)
from inr.io.allocator import retain_freed_memory
from inr.io.threads import torch_threads
from inr.spectral.plots import comparison_figure
from inr.tasks import SignalFitting, VolumeFitting
from inr.tasks.base import INRModule

# The image table's columns without SSIM (a 2D measure)
FIELD_COLUMNS = tuple(c for c in COLUMNS if c.key != "test_ssim")
NUMERIC = tuple(c.key for c in FIELD_COLUMNS if c.spec != "s")
# Swept on the training samples alone (--sweep): the paper's natural-image values (σ = 10, scale 6) among them
SWEEP_SIGMAS = (1.0, 3.0, 10.0, 30.0, 100.0)
SWEEP_SCALES = (3.0, 4.0, 6.0, 8.0)


@dataclass(frozen=True)
class Domain:
    """What differs between a signal and a volume: grid dimension, default size and steps, the PSNR's data
    range R, the output activation of the MLP rows, the clamp of predictions, and the hash grid's coarsest
    level and level count (the finest is the training grid's resolution). σ and the positional scale are the
    domain's protocol (``protocols.PROTOCOLS``)."""

    name: str
    ndim: int
    resolution: int
    steps: int
    min_resolution: int
    data_range: float
    output_activation: str
    clamp: Optional[tuple[float, float]]
    hash_base_resolution: int
    hash_levels: int


DOMAINS = {
    # 1024 samples, 1000 full-batch steps, as configs/signal.yaml; SignalFitting: linear output (a sigmoid cannot
    # reach −1), R = 2.
    "signal": Domain("signal", 1, 1024, 1000, 16, 2.0, "none", None, 16, 16),
    # 32³ density (16³ = 4096 training voxels), 300 steps as the CPU image protocol; VolumeFitting(density):
    # sigmoid output, predictions clamped to [0, 1], R = 1. The hash grid's 16 levels from N_min = 16 have no
    # room below a 16³ training grid: 4 levels N = 2, 4, 8, 16 (growth b = 2, the top of Instant-NGP's
    # 1.26–2 range, Müller et al. 2022 sec. 3).
    "volume": Domain("volume", 3, 32, 300, 16, 1.0, "sigmoid", (0.0, 1.0), 2, 4),
}


@dataclass(frozen=True)
class FieldProtocol:
    """What every row shares on one domain: its size and steps, the MLP, seed, the mappings' settings and the
    measurement cadence. ``target_psnr`` None: the linear interpolation's held-out PSNR of the same run."""

    domain: Domain
    resolution: int
    steps: int
    mappings: MappingSettings
    width: int = 256
    depth: int = 3
    init: str = "paper"
    seed: int = 0
    steps_per_epoch: int = 10
    target_psnr: Optional[float] = None

    @property
    def ndim(self) -> int:
        return self.domain.ndim

    @property
    def train_side(self) -> int:
        """Training samples per axis of the every_other split: ⌈N/2⌉."""
        return (self.resolution + 1) // 2

    @property
    def num_bands(self) -> int:
        """16 bands as the image table, fewer when the training grid's Nyquist ⌊n/2⌋ leaves under 2 cycles per band
        (with 1-cycle bands, band 0 = (0, 1) would hold no DFT bin)."""
        return max(1, min(16, self.train_side // 4))

    def setting(self) -> Setting:
        d = self.domain
        return Setting(
            in_dim=d.ndim,
            train_side=self.train_side,
            protocol=self.mappings,
            output_activation=d.output_activation,
            width=self.width,
            depth=self.depth,
            init=self.init,
            seed=self.seed,
            hash_levels=d.hash_levels,
            hash_base=d.hash_base_resolution,
        )


def field_methods(ndim: int) -> tuple[str, ...]:
    """The registry's methods defined on ``ndim``-D coordinates, in table order."""
    return tuple(name for name, m in METHODS.items() if ndim in m.dims)


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


def build_model(spec: Resolved, p: FieldProtocol, out_channels: int) -> INRModule:
    encoder, network, optimizer = spec.build()
    parts = {"encoder": encoder, "network": network, "out_channels": out_channels, "optimizer": optimizer}
    if p.domain.name == "signal":
        return SignalFitting(**parts, data_range=p.domain.data_range)
    return VolumeFitting(**parts, mode="density")


def run_method(name: str, p: FieldProtocol, data: Callable[[], GridDataModule], out: Path) -> dict[str, Any]:
    """Train one row through a Lightning Trainer and return its scores, spectral history and PSNR history."""
    L.seed_everything(p.seed, verbose=False)
    dm = data()
    spec = METHODS[name].resolve(p.setting())
    model = build_model(spec, p, dm.out_channels)
    spectral = SpectralBiasCallback(num_bands=p.num_bands)
    progress = HeldOutPSNRHistory(every_n_steps=p.steps_per_epoch, data_range=p.domain.data_range)
    logger = TensorBoardLogger(str(out / "tb"), name=name, version=f"seed_{p.seed}")
    seconds = fit_row(
        model, dm, p.steps, [spectral, progress], logger, label=f"{name} (seed {p.seed})", log_every_n_steps=p.steps_per_epoch
    )
    scores = score_field(model.render(), dm.values_grid(), dm, p.domain.data_range, p.num_bands)
    h = spectral.history_arrays()
    return {
        "method": name,
        "kind": "model",
        "seed": p.seed,
        "setting": spec.describe,
        "in_dim": model.encoder.in_dim,
        **scores,
        "seconds": seconds,
        "steps": p.steps,
        "ms_per_step": 1000.0 * seconds / p.steps,
        "params": sum(t.numel() for t in model.parameters()),
        "lr": spec.lr,
        **(progress.reached(p.target_psnr) if p.target_psnr is not None else {"target_step": None, "target_seconds": None}),
        "history": {k: h[k].tolist() for k in ("steps", "edges", "errors", "dc")},
        "progress": progress.history,
    }


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = ExperimentParser(__name__, __doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--signal", action="store_true", help="a generated 1D signal (SignalDataModule)")
    source.add_argument("--volume", action="store_true", help="a built-in density volume (VolumeDataModule)")
    parser.add_argument("--generator", choices=GENERATORS, default="power_law", help="the signal (with --signal)")
    parser.add_argument("--builtin", choices=("bumpy", "sphere"), default="bumpy", help="the volume (with --volume)")
    parser.add_argument("--resolution", type=int, help="samples per axis (default: 1024 signal, 32 volume)")
    parser.add_argument("--steps", type=int, help="training steps (default: 1000 signal, 300 volume)")
    parser.add_argument(
        "--encoders", "--rows", dest="rows", default="all", help="comma-separated methods of the registry, or all (default)"
    )
    parser.add_argument("--sigma", type=float, help="Gaussian σ (default: the domain's, see docs/benchmark.md)")
    parser.add_argument("--scale", type=float, help="positional scale (default: the domain's)")
    parser.add_argument("--target-psnr", type=float, help="held-out PSNR (dB) to reach (default: linear interpolation's)")
    parser.add_argument("--sweep", action="store_true", help="sweep σ and the positional scale on the training split only")
    parser.add_argument("--out", help="output directory (default outputs/compare_fields/<signal|volume>)")
    parser.add_argument("--width", type=int, default=256, help="hidden width of the networks")
    parser.add_argument("--init", choices=("paper", "torch"), default="paper", help="initialisation of the MLP rows")
    parser.add_argument("--seed", type=int, default=0, help="seed of the rows (weights, Gaussian B) and of the generated target")
    parser.add_argument("--seeds", type=int, default=None, help="repeat every row with seeds seed … seed+S−1: mean ± std")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    args.domain = DOMAINS["signal" if args.signal else "volume"]
    try:
        args.names = method_names(args.rows, field_methods(args.domain.ndim))
    except ValueError as exc:
        parser.error(f"--encoders: {exc}")
    smallest = args.domain.min_resolution
    if args.resolution is not None and args.resolution < smallest:
        parser.error(f"--resolution {args.resolution} is too small for a {args.domain.name}: at least {smallest} per axis")
    for key in ("steps", "width", "threads", "seeds"):
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
    mappings = PROTOCOLS[d.name]
    mappings = replace(
        mappings,
        gaussian_sigma=args.sigma or mappings.gaussian_sigma,
        positional_scale=args.scale or mappings.positional_scale,
    )
    return FieldProtocol(
        domain=d,
        resolution=args.resolution or d.resolution,
        steps=args.steps or d.steps,
        mappings=mappings,
        width=args.width,
        depth=PROTOCOLS["natural"].depth,
        init=args.init,
        seed=args.seed,
        target_psnr=args.target_psnr,
    )


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison (or the sweep); print the Markdown table; return the rows."""
    args = parse_args(argv)
    silence_lightning()
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    rows: list[dict[str, Any]] = []
    with torch_threads(args.threads):
        return command(
            lambda: sweep(args, rows) if args.sweep else compare(args, rows),
            lambda: markdown_table(summarise(rows, NUMERIC), FIELD_COLUMNS) if rows else "",
        )


def compare(args: argparse.Namespace, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    p = protocol_from_args(args)
    data = make_data(args, p)
    probe = data()
    probe.setup("fit")  # bad input fails here, before anything is written
    out = prepare_out(args.out)
    baselines = field_baseline_rows(probe, p.domain.data_range, p.num_bands, p.domain.clamp)
    linear = next(r["test_psnr"] for r in baselines if r["method"] == "linear")
    p = replace(p, target_psnr=linear if p.target_psnr is None else p.target_psnr)
    seeds = [p.seed + k for k in range(args.seeds or 1)]
    progress = RowProgress(len(args.names) * len(seeds))
    for name in args.names:
        for seed in seeds:
            rows.append(run_method(name, replace(p, seed=seed), data, out))
            r = rows[-1]
            progress.row(
                f"{name} (seed {seed})",
                f"train {r['train_psnr']:.2f} dB, test {r['test_psnr']:.2f} dB, {r['seconds']:.0f} s, "
                f"target {p.target_psnr:.2f} dB at step {r['target_step']}",
            )
    all_rows = rows + baselines
    summary = summarise(all_rows, NUMERIC)
    shape = "×".join([str(p.resolution)] * p.ndim)
    spread = f", mean ± std over seeds {seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else ""
    title = f"{probe.describe()}, {shape} samples, {p.steps} steps, every_other split{spread}"
    notes = (
        f"PSNR with data range {p.domain.data_range:g}. Δ: relative error per radial band (DC apart; low/high = lower/upper "
        f"half of {p.num_bands} bands up to the held-out grid's Nyquist). Target: held-out PSNR ≥ {p.target_psnr:.2f} dB "
        + ("(linear interpolation's)" if args.target_psnr is None else "(given)")
        + f", checked every {p.steps_per_epoch} steps; its time counts training steps only."
    )
    table = markdown_table(summary, FIELD_COLUMNS)
    saved = {"source": probe.describe(), "protocol": asdict(p), "seeds": seeds, "rows": all_rows, "summary": summary}
    write_results(out, f"{title}\n\n{table}\n\n{notes}", saved)
    histories = {r["method"]: r["history"] for r in rows if "history" in r and r["seed"] == seeds[0]}
    comparison_figure(histories, title=f"spectral bias: {title}").savefig(out / "spectral_heatmaps.png", dpi=110)
    print(table)
    return all_rows


def sweep(args: argparse.Namespace, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Gaussian σ ∈ ``SWEEP_SIGMAS`` and positional scale ∈ ``SWEEP_SCALES`` fitted to the training samples' even
    samples and scored on their odd ones: the held-out split of the comparison is never read."""
    p = protocol_from_args(args)
    probe = make_data(args, p)()
    probe.setup("fit")
    out = prepare_out(args.out / "sweep")
    train = probe.values_grid(probe.train_index, probe.train_shape)  # (C, *train_shape)
    values = train.movedim(0, -1).contiguous()  # (C, *t) -> (*t, C)
    inner = replace(p, resolution=p.train_side, target_psnr=None)
    data = partial(GivenGridDataModule, values, f"training samples of the {probe.describe()}")
    for name, key, grid in (("gaussian", "gaussian_sigma", SWEEP_SIGMAS), ("positional", "positional_scale", SWEEP_SCALES)):
        for value in grid:
            row = run_method(name, replace(inner, mappings=replace(inner.mappings, **{key: value})), data, out)
            rows.append({k: v for k, v in row.items() if k not in ("history", "progress")})
            print(f"{name} {row['setting']}: inner held-out {row['test_psnr']:.2f} dB", file=sys.stderr, flush=True)
    title = f"Sweep on the training samples of the {probe.describe()} ({inner.resolution} per axis, their own every_other split), {p.steps} steps"
    table = markdown_table(rows, FIELD_COLUMNS)
    write_results(
        args.out,
        f"{title}\n\n{table}\n\nThe comparison's held-out samples are not used.",
        {"protocol": asdict(inner), "rows": rows},
        "sweep",
    )
    print(table)
    return rows


if __name__ == "__main__":
    main()
