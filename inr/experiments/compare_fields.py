"""Architecture comparison on a 1D signal or a 3D volume, one command: every method of the registry (``inr.methods.registry``) defined in the dimension trained
with the every_other protocol, beside the classical baselines, band by band.

    python -m inr.experiments.compare_fields --signal              # power-law signal, 1024 samples, 1000 steps
    python -m inr.experiments.compare_fields --signal --generator sinusoids
    python -m inr.experiments.compare_fields --volume              # built-in "bumpy" density, 32³, 300 steps
    python -m inr.experiments.compare_fields --volume --sweep      # σ and positional scale on the training split only

Each row trains through the framework (Lightning Trainer, ``SignalFitting`` or ``VolumeFitting(density)``,
``SignalDataModule`` or ``VolumeDataModule``): train on the samples [::2, …], score the held-out samples
[1::2, …], full-batch Adam, the image comparison's settings adapted to the dimension (``DOMAINS`` here). The
baselines (constant, linear, cubic), the spectral and held-out PSNR histories and the target (default: linear
interpolation's held-out PSNR) are ``heldout``'s. Writes to ``--out``: ``results.md``, ``results.json``,
``spectral_heatmaps.png`` and one TensorBoard run per row. ``--sweep`` instead fits the Gaussian and positional
rows for several σ and scales on the training samples alone (their own every_other split) and writes its table
under ``--out``/sweep: the held-out split plays no part in choosing them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Optional

from jsonargparse import ArgumentParser
from torch import Tensor

from inr.data.module import GridDataModule
from inr.data.signal import GENERATORS, SignalDataModule
from inr.data.volume import VolumeDataModule
from inr.errors import InputError
from inr.experiments import comparison
from inr.experiments.comparison import Context, Member
from inr.experiments.heldout import COLUMNS, HeldOut, HeldOutComparison
from inr.experiments.results import DETAILS
from inr.methods.protocols import PROTOCOLS
from inr.methods.registry import METHODS, Resolved
from inr.tasks import SignalFitting, VolumeFitting

# Swept on the training samples alone (--sweep): the paper's natural-image values (σ = 10, scale 6) among them
SWEEP_SIGMAS = (1.0, 3.0, 10.0, 30.0, 100.0)
SWEEP_SCALES = (3.0, 4.0, 6.0, 8.0)


@dataclass(frozen=True)
class Domain:
    """What differs between a signal and a volume: grid dimension, default size and steps, the smallest size, the
    PSNR's data range R, the output activation of the MLP rows, the clamp of predictions, and the hash grid's
    coarsest level and level count (the finest is the training grid's resolution). σ and the positional scale are
    the domain's protocol (``protocols.PROTOCOLS``)."""

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
class FieldProtocol(HeldOut):
    """``HeldOut`` on a domain: which one and its target (the generator or built-in volume); ``sweep``: the rows are
    σ and scales fitted to the training samples of a grid of ``outer`` samples per axis (this grid: those samples)."""

    domain: str = "signal"
    source: str = "power_law"
    sweep: bool = False
    outer: int = 0


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


class Fields(HeldOutComparison):
    name, doc = "compare_fields", __doc__
    methods = tuple(n for n, m in METHODS.items() if {1, 3} & set(m.dims))
    default_methods = ("all",)

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--signal", action="store_true", help="a generated 1D signal (SignalDataModule)")
        parser.add_argument("--volume", action="store_true", help="a built-in density volume (VolumeDataModule)")
        parser.add_argument("--generator", type=Literal[GENERATORS], default="power_law", help="the signal (with --signal)")
        parser.add_argument("--builtin", type=Literal["bumpy", "sphere"], default="bumpy", help="the volume (with --volume)")
        parser.add_argument("--sweep", action="store_true", help="sweep σ and the positional scale on the training split only")
        super().arguments(parser)

    def available(self, args: Any) -> tuple[str, ...]:
        return ("gaussian", "positional") if args.sweep else field_methods(3 if args.volume else 1)

    def out_dir(self, args: Any) -> str:
        if args is None:
            return "outputs/compare_fields/<signal|volume>, its sweep in sweep/ under it"
        domain = "signal" if args.signal else "volume"
        return str(Path(args.out or f"outputs/compare_fields/{domain}") / ("sweep" if args.sweep else ""))

    def protocol(self, args: Any) -> FieldProtocol:
        if args.signal == args.volume:
            raise InputError("choose --signal or --volume")
        if args.paper:
            raise InputError("--paper: the paper has no signal or volume comparison; give --resolution and --steps")
        d = DOMAINS["signal" if args.signal else "volume"]
        resolution = args.resolution or d.resolution
        if resolution < d.min_resolution:
            raise InputError(f"--resolution {resolution} is too small for a {d.name}: at least {d.min_resolution} per axis")
        inner = (resolution + 1) // 2 if args.sweep else resolution  # the sweep fits the training samples alone
        if args.sweep and (args.sigma, args.scale, args.target_psnr) != (None, None, None):
            raise InputError("--sweep chooses σ and the scale itself, with no target: leave --sigma, --scale, --target-psnr out")
        train_side = (inner + 1) // 2
        return self.held_out(
            args,
            PROTOCOLS[d.name],
            FieldProtocol,
            domain=d.name,
            source=args.generator if args.signal else args.builtin,
            sweep=args.sweep,
            outer=resolution,
            steps=args.steps or d.steps,
            resolution=inner,
            ndim=d.ndim,
            train_side=train_side,
            output_activation=d.output_activation,
            data_range=d.data_range,
            clamp=d.clamp,
            # 16 bands as the image table, fewer when the training grid's Nyquist ⌊n/2⌋ leaves under 2 cycles per
            # band (with 1-cycle bands, band 0 = (0, 1) would hold no DFT bin)
            num_bands=max(1, min(16, train_side // 4)),
            depth=PROTOCOLS["natural"].depth,
            hash_levels=d.hash_levels,
            hash_base=d.hash_base_resolution,
        )

    def members(self, p: FieldProtocol, name: str) -> list[Member]:
        if not p.sweep:
            return super().members(p, name)
        values = {"gaussian": SWEEP_SIGMAS, "positional": SWEEP_SCALES}.get(name, ())
        return [Member(v, seed) for v in values for seed in p.seeds]

    def label(self, p: FieldProtocol, signal: Any) -> Optional[str]:
        return None if signal is None else f"{signal:g}"

    def spec(self, ctx: Context) -> Resolved:
        p, name = ctx.p, ctx.name
        if not p.sweep:
            return super().spec(ctx)
        # the swept value as given on the inner grid (no grid rule between the values and the grid they run on)
        key = "gaussian_sigma" if name == "gaussian" else "positional_scale"
        mappings = replace(p.settings, **{key: ctx.signal}, nyquist=p.train_side / 2)
        return METHODS[name].resolve(replace(self.setting(ctx), protocol=mappings))

    def data(self, ctx: Context) -> GridDataModule:
        p, seed = ctx.p, ctx.seed
        if p.domain == "signal":
            dm = SignalDataModule(generator=p.source, length=p.outer, split="every_other", seed=seed)
        else:
            dm = VolumeDataModule(builtin=p.source, resolution=p.outer, mode="density", split="every_other", seed=seed)
        if not p.sweep:
            return dm
        dm.setup("fit")
        train = dm.values_grid(dm.train_index, dm.train_shape)  # (C, *train_shape): the held-out samples unread
        return GivenGridDataModule(train.movedim(0, -1).contiguous(), f"training samples of the {dm.describe()}")

    def task(self, ctx: Context) -> tuple[type, dict[str, Any]]:
        p, data = ctx.p, ctx.data
        if p.domain == "signal":
            return SignalFitting, {"out_channels": data.out_channels, "data_range": p.data_range}
        return VolumeFitting, {"out_channels": data.out_channels, "mode": "density"}

    def prepare(self, p: FieldProtocol, names: list[str], data: Any) -> FieldProtocol:
        return p if p.sweep else super().prepare(p, names, data)

    def baselines(self, ctx: Context) -> list:
        return [] if ctx.p.sweep else super().baselines(ctx)

    def pairs(self, p: FieldProtocol, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        # a sweep's rows are one method at several settings, each its own row: nothing to pair by method name
        return [] if p.sweep else super().pairs(p, summary)

    def summary(self, p: FieldProtocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if p.sweep:  # each swept value its own row
            return [{k: v for k, v in r.items() if k not in DETAILS} for r in rows]
        return super().summary(p, rows)

    def title(self, p: FieldProtocol) -> str:
        what = "signal" if p.domain == "signal" else "volume"
        source = f"{p.source} {what}" if p.domain == "signal" else f"built-in {p.source} volume"
        if p.sweep:
            return (
                f"Sweep on the training samples of the {source} ({p.resolution} per axis, their own every_other split), "
                f"{p.steps} steps"
            )
        shape = "×".join([str(p.resolution)] * p.ndim)
        return f"{source}, {shape} samples, {p.steps} steps, every_other split{self.spread(p)}"

    def notes(self, p: FieldProtocol, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        if p.sweep:
            return "The comparison's held-out samples are not used."
        return (
            f"PSNR with data range {p.data_range:g}. Δ: relative error per radial band (DC apart; low/high = lower/upper "
            f"half of {p.num_bands} bands up to the held-out grid's Nyquist). {self.target_note(p)}"
        )

    def finish(self, p: FieldProtocol, rows: list[dict[str, Any]], out: Path) -> None:
        if not p.sweep:
            super().finish(p, rows, out)


# The image table's columns without SSIM (a 2D measure)
Fields.columns = tuple(c for c in COLUMNS if c.key != "ssim")


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison (or the sweep); print and write the table; return the rows."""
    return comparison.main(Fields(), argv)


if __name__ == "__main__":
    main()
