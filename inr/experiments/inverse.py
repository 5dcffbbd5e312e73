"""The paper's inverse problems in one command: coordinate networks with four input mappings against the
classical reconstructions, all from the same measurements.

    python -m inr.experiments.inverse --task ct        [--seeds 4] [--angles K] [--steps N] [--resolution R] [--out DIR]
    python -m inr.experiments.inverse --task mri       [--resolution 32] [--width 256]
    python -m inr.experiments.inverse --task inpaint   [--keep 0.2]
    python -m inr.experiments.inverse --task superres  [--factor 4]
    python -m inr.experiments.inverse --task ct --paper --estimate-only    # 512², 8 phantoms: its expected time

Prints a Markdown table ``method | PSNR (dB) | SSIM | DC error | low-band error | high-band error | time (s)``
(for CT and MRI followed by the paper's Table 1 row of the same task): rows none, basic, positional, gaussian (a
3×256 ReLU MLP + sigmoid with the paper's stax initialisation, fitted through the operator, the paper's mappings
and learning rates per task — Tancik et al. 2020 2d_CT / 3d_MRI / 2d_image_regression notebooks — with σ and the
positional scale following the grid by the registry's rule, ``inr.methods.registry``) and the baselines, all
from the same measurements (``inr.experiments.problems``): the task's direct classical reconstruction (CT:
filtered back-projection; MRI: the zero-filled inverse FFT, its real part; inpainting and super-resolution: cubic
interpolation), box-constrained least squares and TV-regularised least squares through the operator
(``inr.operators.baselines``; the TV weight λ chosen on held-out data — a phantom of another seed, or another image
— never on the test signal), and grid optimisation (the pixel grid fitted through the operator with Adam, lr 0.1,
as both notebooks). Scores (``problems.score``) are against the ground truth: PSNR on what the method never saw
(the whole grid; for inpainting the unobserved pixels, the whole image's PSNR beside it), SSIM and the band errors
on the whole grid.

``--seeds N`` repeats the whole table for seeds ``--seed`` … : each seed draws its own phantom and mask (or mask)
and its own network initialisation (the MLP's weights and the Gaussian B), so the table's ± (the sample standard
deviation over seeds) holds both; ``--init-seed N`` starts every network from seed N instead (the problem's spread
alone). Under the table, the paired differences the rule of docs/results.md reads: neighbouring mappings and the
best mapping against every baseline, per seed. A fit whose output collapsed to a constant (``problems.collapsed``)
is named under the table and left out of its method's means ("3 of 4"). ``--output-bias data`` starts every
network at the mean the measurements give (``inr.tasks.output_bias``; the paper's rows keep ``init``). ``--paper`` sets the paper's size
(CT: 512², phantoms 0–7 as its 8 test images; MRI: 96³, 3 × 256, phantoms 0–5 as its 6 volumes) and prints the
run's expected time first (a GPU job); ``--estimate-only`` stops there. ``--out`` holds the table, a JSON of every
number, the reconstructions (``.npy``, one folder per seed) and ``reconstructions.png`` (the ground truth and every
method's reconstruction, one row per seed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, Optional

import numpy as np
import torch
from jsonargparse import ArgumentParser

from inr.data.measurements import MeasurementDataModule
from inr.errors import InputError
from inr.experiments import comparison, problems
from inr.experiments.comparison import Baseline, Comparison, Context, Member
from inr.experiments.figures import reconstruction_grid
from inr.experiments.problems import Measurement
from inr.experiments.runner import Column
from inr.methods.protocols import PAPER_SETTINGS, PROTOCOLS, given_bands, paper_row
from inr.methods.registry import MAPPING_METHODS, Setting
from inr.operators import baselines
from inr.tasks.inverse import InverseFitting

TV_ROW = "TV-regularised least squares"
# Iterations of the TV and box-constrained solvers (FISTA; the TV proximal step by 10 FGP iterations,
# warm-started): on a 64² CT phantom with 20 angles, 300 and 1000 iterations differ by < 0.05 dB.
SOLVER_ITERATIONS = 300
COLUMNS = (
    Column("method", "method", "s"),
    Column("PSNR (dB)", "psnr", ".2f"),
    Column("SSIM", "ssim", ".3f"),
    Column("DC error", "dc", ".3f"),
    Column("low-band error", "low", ".3f"),
    Column("high-band error", "high", ".3f"),
    Column("time (s)", "seconds", ".0f"),
)

# inpainting's PSNR is the unobserved pixels' (held out); the whole image's stands beside it, labelled
INPAINT_COLUMNS = (
    COLUMNS[0],
    Column("held-out PSNR (dB)", "psnr", ".2f"),
    Column("whole-image PSNR (dB)", "full_psnr", ".2f"),
    *COLUMNS[2:],
)


@dataclass(frozen=True)
class InverseProtocol:
    """What every row shares: the measurement, the steps of every network and of grid optimisation, the MLP's
    width and initialisation, σ and the positional scale as given (None: the grid rule's), the TV weight (None until
    chosen on held-out data) and how it was set, the solvers' iterations, the networks' initialisation seed (None:
    each problem seed's own) and output bias (``init``: the initialisation's; ``data``: the measurements' mean)."""

    seeds: tuple[int, ...]
    steps: int
    measurement: Measurement
    width: int = 256
    init: str = "paper"
    sigma: Optional[float] = None
    scale: Optional[float] = None
    tv_weight: Optional[float] = None
    tv_how: str = "given"
    solver_iterations: int = SOLVER_ITERATIONS
    init_seed: Optional[int] = None
    output_bias: str = "init"


class Inverse(Comparison):
    name, doc = "inverse", __doc__
    methods = MAPPING_METHODS
    baseline_names = ("classical", "box", "tv", "grid")
    columns = COLUMNS
    baselines_per_seed = True  # each seed draws its own phantom and mask
    old_seed_lists = True

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--task",
            type=Literal[problems.TASKS],
            required=True,
            help="CT projections, MRI k-space, a pixel mask, a downsampling",
        )
        parser.add_argument("--angles", type=int, default=20, help="CT projection angles (the paper's)")
        parser.add_argument("--width", type=int, default=256, help="MLP width (the paper's)")
        parser.add_argument(
            "--init", type=Literal["paper", "torch"], default="paper", help="initialisation of the MLPs (paper: stax's)"
        )
        parser.add_argument(
            "--init-seed",
            type=Optional[int],
            default=None,
            help="every network's initialisation from this seed (null: each seed's own, so --seeds varies it too)",
        )
        parser.add_argument(
            "--output-bias",
            type=Literal["init", "data"],
            default="init",
            help="the networks' output bias: the initialisation's (the paper's) or the mean the measurements give",
        )
        parser.add_argument(
            "--sigma", type=Optional[float], default=None, help="Gaussian σ at this size, as given (null: the grid rule's)"
        )
        parser.add_argument(
            "--scale", type=Optional[float], default=None, help="positional scale at this size, as given (null: the grid rule's)"
        )
        parser.add_argument(
            "--tv-weight", type=Optional[float], default=None, help="λ of the TV row (null: chosen on held-out data)"
        )
        parser.add_argument(
            "--solver-iterations", type=int, default=SOLVER_ITERATIONS, help="iterations of the box-constrained and TV solvers"
        )
        parser.add_argument("--keep", type=float, default=0.2, help="inpainting: fraction of pixels observed")
        parser.add_argument("--factor", type=int, default=4, help="super-resolution: downsampling factor")
        parser.add_argument(
            "--image", type=Optional[str], default=None, help="inpainting / super-resolution image (null: data/astronaut.png)"
        )
        parser.add_argument("--noise", type=float, default=0.0, help="σ of additive noise on the measurements")

    def out_dir(self, args: Any) -> str:
        return getattr(args, "out", None) or (f"outputs/inverse/{args.task}" if args else "outputs/inverse/<task>")

    def protocol(self, args: Any) -> InverseProtocol:
        for key in ("width", "angles", "solver_iterations"):
            if getattr(args, key) < 1:
                raise InputError(f"--{key.replace('_', '-')} must be ≥ 1, got {getattr(args, key)}")
        if args.init_seed is not None and not 0 <= args.init_seed <= comparison.MAX_SEED:
            raise InputError(f"--init-seed must be 0 … {comparison.MAX_SEED}, got {args.init_seed}")
        for key in ("sigma", "scale", "tv_weight"):
            value = getattr(args, key)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise InputError(f"--{key.replace('_', '-')} must be positive, got {value}")
        seeds, resolution = args.seed_list, args.resolution
        if args.paper:
            if args.task not in problems.PAPER_RUNS:
                raise InputError(f"--paper: the paper ran CT and MRI only, not {args.task}")
            side, count = problems.PAPER_RUNS[args.task]
            resolution = resolution or side
            seeds = seeds if args.seeds_given else tuple(range(args.seed, args.seed + count))
        measurement = Measurement(
            args.task,
            resolution or problems.DEFAULT_RESOLUTION[args.task],
            angles=args.angles,
            keep=args.keep,
            factor=args.factor,
            image=args.image,
            noise=args.noise,
        )
        return InverseProtocol(
            seeds=seeds,
            steps=args.steps or 1000,
            measurement=measurement,
            width=args.width,
            init=args.init,
            sigma=args.sigma,
            scale=args.scale,
            tv_weight=args.tv_weight,
            solver_iterations=args.solver_iterations,
            init_seed=args.init_seed,
            output_bias=args.output_bias,
        )

    def table_columns(self, p: Optional[InverseProtocol]) -> tuple[Column, ...]:
        return INPAINT_COLUMNS if p is not None and p.measurement.task == "inpaint" else COLUMNS

    def check(self, p: InverseProtocol) -> MeasurementDataModule:
        """A network's full-grid step sized before anything is allocated, then the first seed's problem read."""
        m = p.measurement
        grid = SimpleNamespace(operator=SimpleNamespace(field_shape=(m.resolution,) * m.ndim), out_channels=m.channels)
        member = Member(None, p.seeds[0])
        networks = [self.model(comparison.context(self, p, n, member, grid)) for n in self.methods]
        problems.check_network_memory(networks, m)
        return super().check(p)

    def prepare(self, p: InverseProtocol, names: list[str], data: Any) -> InverseProtocol:
        if "tv" not in names or p.tv_weight is not None:
            return p
        weight, how = problems.choose_tv_weight(p.measurement, p.seeds[0], p.solver_iterations)
        return replace(p, tv_weight=weight, tv_how=how)

    def data(self, ctx: Context) -> MeasurementDataModule:
        return ctx.p.measurement.data(ctx.seed)

    def setting(self, ctx: Context) -> Setting:
        """The four mappings as the task's notebook sets them (``protocols.PROTOCOLS[task]``), on the whole grid: a
        3 × ``width`` ReLU MLP with a sigmoid output and the paper's initialisation, Gaussian B drawn with the
        network's seed (``init_seed``); σ and the positional scale as given or by the grid rule on what the loss sees
        (``Measurement.nyquist``)."""
        p, m = ctx.p, ctx.p.measurement
        shape = ctx.data.operator.field_shape
        return Setting(
            in_dim=len(shape),
            train_side=min(shape),
            resolvable=m.nyquist(),
            steps=p.steps,
            protocol=given_bands(PROTOCOLS[m.task], p.sigma, p.scale, m.nyquist()),
            output_activation="sigmoid",
            width=p.width,
            init=p.init,
            seed=init_seed(p, ctx.seed),
        )

    def task(self, ctx: Context) -> tuple[type, dict[str, Any]]:
        return InverseFitting, {"out_channels": ctx.data.out_channels, "output_bias": ctx.p.output_bias}

    def model(self, ctx: Context) -> InverseFitting:
        torch.manual_seed(init_seed(ctx.p, ctx.seed))  # the MLP's draw: the seed's own, or --init-seed
        return super().model(ctx)

    def predict(self, ctx: Context, model: Any) -> torch.Tensor:
        return model.render().cpu()

    def score(self, ctx: Context, prediction: torch.Tensor) -> dict[str, Any]:
        data = ctx.data
        return problems.score(prediction, data.values_grid(), problems.unseen(ctx.p.measurement.task, data))

    def pairs(self, p: InverseProtocol, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return comparison.neighbours_and_best(summary)

    def judged_rows(self, p: InverseProtocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """CT and MRI: seed s draws phantom s, so each seed is a signal of its own. Super-resolution without noise:
        every seed measures the same image the same way, so a classical row's per-seed copies are one seedless row
        (the networks' seeds are then averaged against it: one image, one pair)."""
        task = p.measurement.task
        if task in ("ct", "mri"):
            return [{**r, "signal": f"phantom {r['seed']}"} if r.get("seed") is not None else r for r in rows]
        if task == "superres" and not p.measurement.noise:
            first = {}
            for r in rows:
                if r["kind"] == "baseline":
                    first.setdefault((r["method"], r.get("signal")), {**r, "seed": None})
            return [r for r in rows if r["kind"] != "baseline"] + list(first.values())
        return rows

    def baselines(self, ctx: Context) -> list[Baseline]:
        p, data = ctx.p, ctx.data
        op, y, channels, n = data.operator.cpu(), data.measurements, data.out_channels, p.solver_iterations
        name, make = problems.classical(p.measurement.task, data)
        return [
            Baseline(name, make, key="classical"),
            Baseline(
                "box-constrained least squares", lambda: baselines.box_least_squares(op, y, channels, n), steps=n, key="box"
            ),
            Baseline(TV_ROW, lambda: baselines.tv_least_squares(op, y, channels, p.tv_weight, n), steps=n, key="tv"),
            Baseline("grid optimisation", lambda: problems.grid_optimisation(data, p.steps), steps=p.steps, key="grid"),
        ]

    def keep(self, ctx: Context, row: dict[str, Any], prediction: Any, scores: dict[str, Any]) -> None:
        folder = ctx.out / f"seed_{row['seed']}"
        folder.mkdir(exist_ok=True)
        np.save(folder / f"{row['method'].replace(' ', '_')}.npy", prediction.numpy())

    def title(self, p: InverseProtocol) -> str:
        m = p.measurement
        seeds = f"seeds {p.seeds[0]}–{p.seeds[-1]} (mean ± std)" if len(p.seeds) > 1 else f"seed {p.seeds[0]}"
        return f"Inverse problem {m.task}, {m.resolution} per axis, {p.steps} steps, {seeds}"

    def notes(self, p: InverseProtocol, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        member = Member(None, p.seeds[0])
        data = self.data(Context(p, member))
        described = [
            (s["method"], comparison.context(self, p, s["method"], member, data).spec.describe)
            for s in summary
            if s["kind"] == "model"
        ]
        parts = []
        if any(d for _, d in described):
            seed = f"seed {p.init_seed} for every network" if p.init_seed is not None else "each seed's own draw"
            parts.append(
                "Mappings: "
                + "; ".join(f"{m} {d}" for m, d in described if d)
                + f"; init {p.init} ({seed}), output bias {p.output_bias}."
            )
        if p.measurement.task == "inpaint":
            parts.append(
                "PSNR: the unobserved pixels (held out); the whole-image PSNR, SSIM and band errors include the observed ones."
            )
        if any(s["method"] == TV_ROW for s in summary):
            parts.append(f"TV weight λ = {p.tv_weight:.2e} ({p.tv_how}).")
        if p.measurement.task in PAPER_SETTINGS:
            parts.append(paper_row(p.measurement.task))
        return "\n\n".join(parts)

    def size(self, p: InverseProtocol) -> str:
        return f"at {p.measurement.resolution} per axis"

    def finish(self, p: InverseProtocol, rows: list[dict[str, Any]], out: Path) -> None:
        """``reconstructions.png``: one row per seed, the ground truth and then every method's reconstruction."""
        seeds = list(dict.fromkeys(r["seed"] for r in rows))
        methods = list(dict.fromkeys(r["method"] for r in rows))
        truths = [p.measurement.data(seed).values_grid() for seed in seeds]
        load = lambda seed, m: torch.from_numpy(np.load(out / f"seed_{seed}" / f"{m.replace(' ', '_')}.npy"))
        recons = {m: [load(seed, m) for seed in seeds] for m in methods}
        reconstruction_grid(truths, recons, [f"seed {s}" for s in seeds], out / "reconstructions.png")


def init_seed(p: InverseProtocol, seed: int) -> int:
    """The seed a network of problem seed ``seed`` is drawn with: ``--init-seed`` where given, else ``seed``."""
    return seed if p.init_seed is None else p.init_seed


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the table; print and write it; return the rows (networks, then baselines)."""
    return comparison.main(Inverse(), argv)


if __name__ == "__main__":
    main()
