"""What the comparisons on the every_other split share (train on the samples [::2, …], score the held-out [1::2, …]):
the image comparison (``compare_encoders``) and the signal and volume one (``compare_fields``) are declarations on it.

Every row records its spectral-bias history (``SpectralBiasCallback``: the relative error per radial band, DC
apart, every epoch), its held-out PSNR every ``steps_per_epoch`` steps (``progress.HeldOutPSNRHistory``) and the
first step and training time at which that reached the target PSNR (default: linear interpolation's held-out PSNR
on the same samples, rounded to 0.01 dB: the score a network has to beat to be worth more than interpolating its
own training samples). The interpolation baselines (``baselines.interpolations``) are scored by the same
``score_field``. Each fit writes a TensorBoard run under ``--out``/tb (with its ``spectral_history.npz``);
``spectral_heatmaps.png`` shows the first seed's histories side by side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from jsonargparse import ArgumentParser

from inr.errors import InputError
from inr.experiments.comparison import Baseline, Comparison, Context, neighbours_and_best
from inr.experiments.runner import Column
from inr.methods.protocols import MappingSettings, given_bands
from inr.methods.registry import Setting

if TYPE_CHECKING:  # the hooks that train import them: the command line needs no Lightning or torch
    import lightning as L

# Δ: relative errors of inr.spectral (DC apart; low/high = the lower/upper half of the bands), on the held-out
# samples' grid, then on the training samples' grid; the target: the first measured step whose held-out PSNR
# reached it, and the training seconds until then (— when a row never did)
COLUMNS = (
    Column("row", "method", "s"),
    Column("setting", "setting", "s"),
    Column("lr", "lr", ".0e", spread=False),  # a setting: the same on every seed
    Column("train PSNR (dB)", "train_psnr", ".2f"),
    Column("test PSNR (dB)", "psnr", ".2f"),
    Column("test SSIM", "ssim", ".3f"),
    Column("test Δ DC", "dc", ".3f"),
    Column("test Δ low", "low", ".3f"),
    Column("test Δ high", "high", ".3f"),
    Column("train Δ low", "train_low", ".3f"),
    Column("train Δ high", "train_high", ".3f"),
    Column("time (s)", "seconds", ".0f"),
    Column("ms/step", "ms_per_step", ".0f"),
    Column("params", "params", ","),
    Column("steps to target", "target_step", "d"),
    Column("time to target (s)", "target_seconds", ".1f"),
)


@dataclass(frozen=True)
class HeldOut:
    """What every row shares: seeds, steps, the grid (``resolution`` per axis, ``train_side`` training samples per
    axis), the mappings' settings there (the grid rule's, or σ and scale as given), the network around them, the
    PSNR's data range, the clamp of the baselines (as the task bounds its output), the band count, the hash grid's
    levels, the measurement cadence and the target PSNR (None until ``prepare`` reads it off the baseline)."""

    seeds: tuple[int, ...]
    steps: int
    resolution: int
    ndim: int
    train_side: int
    settings: MappingSettings
    output_activation: str
    data_range: float
    clamp: Optional[tuple[float, float]]
    num_bands: int = 16
    width: int = 256
    depth: int = 3
    init: str = "paper"
    hash_levels: int = 16
    hash_base: int = 16
    steps_per_epoch: int = 10
    target_psnr: Optional[float] = None
    target_given: bool = False


class HeldOutComparison(Comparison):
    """A comparison on the every_other split: the subclass gives the data, the task and its protocol's grid."""

    columns = COLUMNS
    headline = ("train_psnr", "psnr")

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--target-psnr", type=Optional[float], default=None, help="held-out PSNR (dB) to reach (null: linear interpolation's)"
        )
        parser.add_argument(
            "--sigma", type=Optional[float], default=None, help="Gaussian σ at this size, as given (null: the grid rule's)"
        )
        parser.add_argument(
            "--scale", type=Optional[float], default=None, help="positional scale at this size, as given (null: the grid rule's)"
        )
        parser.add_argument("--width", type=int, default=256, help="hidden width of the networks")
        parser.add_argument("--init", choices=("paper", "torch"), default="paper", help="initialisation of the MLP rows")

    def held_out(self, args: Any, settings: MappingSettings, protocol: type = HeldOut, **grid: Any) -> Any:
        """The ``protocol`` (``HeldOut`` or a subclass) of ``args`` on a grid (``grid``: its other fields), the
        mappings moved there by the grid rule or as given; bad values refused in one line."""
        for key in ("sigma", "scale"):
            value = getattr(args, key)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise InputError(f"--{key} must be positive, got {value}")
        if args.target_psnr is not None and not math.isfinite(args.target_psnr):
            raise InputError(f"--target-psnr must be finite, got {args.target_psnr}")
        if args.width < 1:
            raise InputError(f"--width must be ≥ 1, got {args.width}")
        mappings = given_bands(settings, args.sigma, args.scale, grid["train_side"] / 2)
        return protocol(
            seeds=args.seed_list,
            settings=mappings,
            width=args.width,
            init=args.init,
            target_psnr=args.target_psnr,
            target_given=args.target_psnr is not None,
            **grid,
        )

    def setting(self, ctx: Context) -> Setting:
        p = ctx.p
        return Setting(
            in_dim=p.ndim,
            train_side=p.train_side,
            protocol=p.settings,
            output_activation=p.output_activation,
            width=p.width,
            depth=p.depth,
            init=p.init,
            seed=ctx.seed,
            hash_levels=p.hash_levels,
            hash_base=p.hash_base,
            steps=p.steps,
        )

    def prepare(self, p: HeldOut, names: list[str], data: Any) -> HeldOut:
        if p.target_psnr is not None:
            return p
        from inr.experiments.baselines import interpolations, score_field

        make, _ = interpolations(data, p.clamp)["bilinear" if p.ndim == 2 else "linear"]
        linear = score_field(make(), data.values_grid(), data, p.data_range, p.num_bands)["psnr"]
        return replace(p, target_psnr=round(float(linear), 2))

    def callbacks(self, ctx: Context) -> list[L.Callback]:
        from inr.callbacks.spectral import SpectralBiasCallback
        from inr.experiments.progress import HeldOutPSNRHistory

        p = ctx.p
        return [
            SpectralBiasCallback(num_bands=p.num_bands),
            HeldOutPSNRHistory(every_n_steps=p.steps_per_epoch, data_range=p.data_range),
        ]

    def trainer_args(self, ctx: Context) -> dict[str, Any]:
        from lightning.pytorch.loggers import TensorBoardLogger

        name = ctx.name if ctx.signal is None else f"{ctx.name}_{self.label(ctx.p, ctx.signal)}".replace(" ", "")
        logger = TensorBoardLogger(str(ctx.out / "tb"), name=name, version=f"seed_{ctx.seed}")
        return {"logger": logger, "log_every_n_steps": ctx.p.steps_per_epoch}

    def measured(self, ctx: Context, callbacks: list[L.Callback]) -> dict[str, Any]:
        p = ctx.p
        spectral, progress = callbacks
        h = spectral.history_arrays()
        reached = progress.reached(p.target_psnr) if p.target_psnr is not None else {"target_step": None, "target_seconds": None}
        return {
            **reached,
            "history": {k: h[k].tolist() for k in ("steps", "edges", "errors", "dc")},
            "progress": progress.history,
        }

    def score(self, ctx: Context, prediction: Any) -> dict[str, Any]:
        from inr.experiments.baselines import score_field

        return score_field(prediction, ctx.data.values_grid(), ctx.data, ctx.p.data_range, ctx.p.num_bands)

    def baselines(self, ctx: Context) -> list[Baseline]:
        from inr.experiments.baselines import interpolations

        return [Baseline(name, make, setting) for name, (make, setting) in interpolations(ctx.data, ctx.p.clamp).items()]

    def pairs(self, p: HeldOut, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """Neighbouring model rows and the best against each interpolation, paired per seed (docs/results.md's rule)."""
        return neighbours_and_best(summary)

    def spread(self, p: HeldOut) -> str:
        """The title's note on seeds."""
        return f", mean ± std over seeds {p.seeds[0]}–{p.seeds[-1]}" if len(p.seeds) > 1 else f", seed {p.seeds[0]}"

    def target_note(self, p: HeldOut) -> str:
        source = " (given)" if p.target_given else f" ({'bilinear' if p.ndim == 2 else 'linear'} interpolation's)"
        return (
            f"Target: held-out PSNR ≥ {p.target_psnr:g} dB{source}, checked every {p.steps_per_epoch} steps; its time counts "
            "training steps only (forward, backward, update), not the measurements."
        )

    def size(self, p: HeldOut) -> str:
        return f"at {p.resolution}²" if p.ndim == 2 else f"at {p.resolution} per axis"

    def finish(self, p: HeldOut, rows: list[dict[str, Any]], out: Path) -> None:
        histories = {r["method"]: r["history"] for r in rows if "history" in r and r["seed"] == p.seeds[0]}
        if histories:
            from inr.spectral.plots import comparison_figure

            figure = comparison_figure(histories, title=f"spectral bias: {self.title(p)}")
            figure.savefig(out / "spectral_heatmaps.png", dpi=110)
