"""The paper's inverse problems in one command: coordinate networks with four input mappings against the
classical reconstructions, all from the same measurements.

    python -m inr.experiments.inverse --task ct        [--seeds 0 1 2 3] [--angles K] [--steps N] [--resolution R] [--out DIR]
    python -m inr.experiments.inverse --task mri       [--resolution 32] [--width 256]
    python -m inr.experiments.inverse --task inpaint   [--keep 0.2]
    python -m inr.experiments.inverse --task superres  [--factor 4]
    python -m inr.experiments.inverse --task ct --paper --estimate-only    # 512², 8 phantoms: its expected time

Prints a Markdown table ``method | PSNR (dB) | SSIM | DC error | low-band error | high-band error | time (s)``
(for CT and MRI followed by the paper's Table 1 row of the same task):
rows none, basic, positional, gaussian (a 3×256 ReLU MLP + sigmoid with the paper's stax initialisation,
fitted through the operator, the paper's mappings and learning rates per task — Tancik et al. 2020 2d_CT /
3d_MRI / 2d_image_regression notebooks — with σ and the positional scale following the grid by the registry's
rule, ``inr.experiments.methods``) and the baselines, all from the same measurements: the task's direct
classical reconstruction (CT: filtered back-projection; MRI: the zero-filled inverse FFT, its real part;
inpainting and super-resolution: cubic interpolation), box-constrained least squares and TV-regularised least
squares through the operator (``inr.operators.baselines``; the TV weight λ chosen on held-out data — a
phantom of another seed, or another image — never on the test signal), and grid optimisation (the pixel
grid fitted through the operator with Adam, lr 0.1, as both notebooks). Every classical reconstruction is
clipped to [0, 1], the object's known range, as the networks' sigmoid bounds theirs. Scores are against the
ground truth on the whole grid. The DC error is the relative
error of the mean, ‖μ̂ − μ‖/‖μ‖ over channels; the band errors are the reconstruction's pooled relative
error ‖F[x̂ − x]‖/‖F[x]‖ over the lower and upper half of 16 radial frequency bands (``inr.spectral``), both
fields with their means removed first, so the DC term is reported apart and counts in no band.

``--seeds S1 S2 …`` repeats the whole table for each seed (each seed draws its own phantom and mask, or
mask) and prints the mean ± sample standard deviation over seeds of every number. ``--paper`` sets the
paper's size (CT: 512², phantoms 0–7 as its 8 test images; MRI: 96³, 3 × 256, phantoms 0–5 as its 6 volumes)
and prints the run's expected time first (a GPU job); ``--estimate-only`` stops there. With ``--out`` the table, a
JSON of every number, the reconstructions (``.npy``, one folder per seed) and ``reconstructions.png`` (the
ground truth and every method's reconstruction, one row per seed) are written there.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import numpy as np
import torch

from inr.data import CTDataModule, InpaintingDataModule, MRIDataModule, SuperResolutionDataModule
from inr.data.measurements import MeasurementDataModule
from inr.errors import InputError
from inr.experiments.estimate import estimate_seconds
from inr.experiments.figures import reconstruction_grid
from inr.experiments.methods import MAPPING_METHODS, METHODS, Resolved, Setting
from inr.experiments.protocols import PAPER_SETTINGS, PROTOCOLS, given_bands, paper_row
from inr.experiments.runner import (
    Column,
    ExperimentParser,
    RowProgress,
    command,
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
from inr.metrics import psnr
from inr.metrics import ssim as grid_ssim
from inr.operators import baselines
from inr.spectral import spectral_summary
from inr.tasks.inverse import InverseFitting

TASKS = ("ct", "mri", "inpaint", "superres")
ENCODINGS = MAPPING_METHODS
# the table's rows beyond the networks, by their --rows names
BASELINES = ("classical", "box", "tv", "grid")
TV_ROW = "TV-regularised least squares"
GRID_LR = 0.1  # grid optimisation, both notebooks
NUM_BANDS = 16
# Iterations of the TV and box-constrained solvers (FISTA; the TV proximal step by 10 FGP iterations,
# warm-started): on a 64² CT phantom with 20 angles, 300 and 1000 iterations differ by < 0.05 dB.
SOLVER_ITERATIONS = 300
# λ = w ‖A‖²: w is the TV weight of the solver's proximal step (for A the identity, skimage's ``weight``); the
# grid spans sparse-view CT's optimum (w ≈ 1e-4) to strong denoising (0.1)
TV_WEIGHTS = tuple(10.0 ** (k / 2) for k in range(-10, -1))
# Held-out signals for choosing λ: a phantom of a seed no table uses, and a photograph bundled with
# scikit-image that no table here reconstructs
HELDOUT_PHANTOM_SEED = 1000
HELDOUT_IMAGE = "coffee.png"
# The paper's sizes (--paper): CT 512² over its 8 test phantoms; MRI 96³, 3 × 256, over its 6 test volumes
PAPER_RUNS = {"ct": {"resolution": 512, "seeds": list(range(8))}, "mri": {"resolution": 96, "seeds": list(range(6))}}
METRICS = ("psnr", "ssim", "dc", "low", "high", "seconds")
COLUMNS = (
    Column("method", "method", "s"),
    Column("PSNR (dB)", "psnr", ".2f"),
    Column("SSIM", "ssim", ".3f"),
    Column("DC error", "dc", ".3f"),
    Column("low-band error", "low", ".3f"),
    Column("high-band error", "high", ".3f"),
    Column("time (s)", "seconds", ".0f"),
)


def measured_nyquist(args: argparse.Namespace, side: int, ndim: int) -> float:
    """The Nyquist frequency (cycles per unit) of what the loss sees, for the grid rule: CT and MRI the whole
    grid (the paper's setting: its scales were chosen on the 512² / 96³ grid); super-resolution the
    low-resolution grid (side / factor); inpainting a regular grid of the observed pixels' density
    (side · keep^(1/d))."""
    if args.task == "superres":
        return side / args.factor / 2
    if args.task == "inpaint":
        return side * args.keep ** (1 / ndim) / 2
    return side / 2


def method_setting(args: argparse.Namespace, dm: MeasurementDataModule) -> Setting:
    """The four mappings as the task's notebook sets them (``protocols.PROTOCOLS[task]``), on the whole grid:
    a 3 × ``width`` ReLU MLP with a sigmoid output and the paper's initialisation (``--init``), Gaussian B
    drawn with seed 0; σ and the positional scale as given (``--sigma``, ``--scale``) or by the grid rule on
    what the loss sees (``measured_nyquist``)."""
    shape = dm.operator.field_shape
    side = min(shape)
    nyquist = measured_nyquist(args, side, len(shape))
    return Setting(
        in_dim=len(shape),
        train_side=side,
        resolvable=nyquist,
        steps=args.steps,
        protocol=given_bands(PROTOCOLS[args.task], args.sigma, args.scale, nyquist),
        output_activation="sigmoid",
        width=args.width,
        init=args.init,
    )


def make_data(
    args: argparse.Namespace, seed: int, image: Optional[str] = None, phantom: Optional[int] = None
) -> MeasurementDataModule:
    """The task's problem for ``seed`` (its phantom, mask and noise); ``image``/``phantom`` replace the signal
    (the held-out one of the TV weight's choice) and keep the seed's operator and noise."""
    phantom = seed if phantom is None else phantom
    if args.task == "ct":
        return CTDataModule(resolution=args.resolution, angles=args.angles, phantom_seed=phantom, noise_std=args.noise, seed=seed)
    if args.task == "mri":
        return MRIDataModule(resolution=args.resolution, phantom_seed=phantom, mask_seed=seed, noise_std=args.noise, seed=seed)
    path = image or args.image
    if args.task == "inpaint":
        return InpaintingDataModule(path=path, resolution=args.resolution, keep=args.keep, seed=seed, noise_std=args.noise)
    return SuperResolutionDataModule(path=path, resolution=args.resolution, factor=args.factor, noise_std=args.noise, seed=seed)


def heldout_data(args: argparse.Namespace, seed: int) -> MeasurementDataModule:
    """The held-out problem on which λ is chosen: seed ``seed``'s operator and noise, another signal (a phantom of
    seed ``HELDOUT_PHANTOM_SEED``; for images ``HELDOUT_IMAGE`` from scikit-image's bundled photographs)."""
    if args.task in ("ct", "mri"):
        return make_data(args, seed, phantom=HELDOUT_PHANTOM_SEED)
    import skimage.data

    return make_data(args, seed, image=str(Path(skimage.data.__file__).parent / HELDOUT_IMAGE))


def choose_weight(args: argparse.Namespace) -> tuple[float, str]:
    """λ of the TV row: ``--tv-weight`` as given, or the best of ``TV_WEIGHTS`` · ‖A‖² on the held-out problem
    (PSNR against its truth). Returns (λ, how it was chosen)."""
    if args.tv_weight is not None:
        return args.tv_weight, "given"
    dm = heldout_data(args, args.seeds[0])
    dm.setup("fit")
    op, truth = dm.operator.cpu(), dm.values_grid()
    scale = baselines.operator_norm(op, dm.out_channels) ** 2
    weight, scores = baselines.choose_tv_weight(
        op, dm.measurements, truth, [w * scale for w in TV_WEIGHTS], args.solver_iterations
    )
    where = f"phantom seed {HELDOUT_PHANTOM_SEED}" if args.task in ("ct", "mri") else HELDOUT_IMAGE
    tried = ", ".join(f"{w * scale:.1e}: {p:.2f}" for w, p in zip(TV_WEIGHTS, scores))
    print(f"TV weight: {weight:.1e}, the best on the held-out {where} (PSNR dB by λ: {tried})", file=sys.stderr, flush=True)
    return weight, f"chosen on {where}"


def classical(task: str, dm: MeasurementDataModule) -> tuple[str, Callable[[], torch.Tensor]]:
    """The task's direct classical reconstruction: (its name, a function returning it)."""
    op, y = dm.operator, dm.measurements
    # the reconstructions of the classical methods are clipped to the object's known range [0, 1], as the
    # networks' sigmoid bounds theirs
    if task == "ct":
        return "filtered back-projection", lambda: baselines.filtered_back_projection(op, y).clamp(0, 1)
    if task == "mri":
        return "zero-filled inverse FFT (real part)", lambda: baselines.zero_filled_ifft(op, y).clamp(0, 1)
    if task == "inpaint":
        return "cubic interpolation", lambda: baselines.cubic_inpaint(op, y).clamp(0, 1)
    return "bicubic interpolation", lambda: baselines.cubic_upsample(op, y).clamp(0, 1)


def score(recon: torch.Tensor, truth: torch.Tensor) -> dict[str, float]:
    """PSNR (``inr.metrics.psnr``), SSIM (NaN below the SSIM window) and ``inr.spectral.spectral_summary``'s DC,
    low and high errors (``NUM_BANDS`` radial bands) of a reconstruction as its method returns it."""
    recon = recon.float()
    bands = spectral_summary(recon.double(), truth.double(), num_bands=NUM_BANDS)
    ssim = grid_ssim(recon.clamp(0, 1), truth, dims=recon.ndim - 1)
    return {
        "psnr": psnr(recon, truth),
        "ssim": float(ssim) if ssim is not None else math.nan,
        **{key: float(bands[key]) for key in ("dc", "low", "high")},
    }


def build_network(spec: Resolved, out_channels: int) -> InverseFitting:
    torch.manual_seed(0)
    encoder, network, optimizer = spec.build()
    return InverseFitting(
        encoder=encoder, network=network, out_channels=out_channels, optimizer=optimizer, scheduler=spec.build_scheduler()
    )


def fit_network(spec: Resolved, dm: MeasurementDataModule, steps: int) -> torch.Tensor:
    """The field fitted through the operator for ``steps`` full-batch Adam steps; its reconstruction on the grid."""
    model = build_network(spec, dm.out_channels)
    fit_row(model, dm, steps, label=spec.name)
    return model.render().cpu()


def run(args: argparse.Namespace, seed: int, rows: list[dict], progress: RowProgress, tv: tuple[float, str]) -> None:
    """Every row of the table for one seed (phantom, mask and noise drawn with it), appended to ``rows``."""
    dm = make_data(args, seed)
    dm.setup("fit")
    truth = dm.values_grid()
    op, y, channels = dm.operator.cpu(), dm.measurements, dm.out_channels

    def record(name: str, make: Callable[[], torch.Tensor], steps: int = 0) -> None:
        start = time.perf_counter()
        recon = make()
        kind = "model" if name in ENCODINGS else "baseline"
        rows.append(
            {
                "method": name,
                "kind": kind,
                "seed": seed,
                **score(recon, truth),
                "seconds": time.perf_counter() - start,
                "steps": steps,
            }
        )
        rows[-1]["recon"], rows[-1]["truth"] = recon, truth  # tensors: kept for the files, not the table
        progress.row(f"{name} (seed {seed})", f"PSNR {rows[-1]['psnr']:.2f} dB, {rows[-1]['seconds']:.0f} s")

    setting = method_setting(args, dm)
    for encoding in (r for r in args.rows if r in ENCODINGS):
        record(encoding, lambda e=encoding: fit_network(METHODS[e].resolve(setting), dm, args.steps), args.steps)
    iterations = args.solver_iterations
    if "classical" in args.rows:
        record(*classical(args.task, dm))
    if "box" in args.rows:
        record("box-constrained least squares", lambda: baselines.box_least_squares(op, y, channels, iterations), iterations)
    if "tv" in args.rows:
        weight, how = tv
        record(TV_ROW, lambda: baselines.tv_least_squares(op, y, channels, weight, iterations), iterations)
    if "grid" in args.rows:
        record("grid optimisation", lambda: baselines.grid_optimisation(op, y, channels, args.steps, GRID_LR), args.steps)


def paper_reference(task: str) -> Optional[str]:
    """The line printed under a CT or MRI table: the paper's Table 1 row for the same task."""
    return paper_row(task) if task in PAPER_SETTINGS else None


def table(rows: list[dict]) -> str:
    """The Markdown table of the rows summarised per method: mean ± std over seeds where there are several."""
    return markdown_table(summarise(rows, METRICS), COLUMNS)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument(
        "--task", choices=TASKS, required=True, help="the measurement: CT projections, MRI k-space, a pixel mask, a downsampling"
    )
    parser.add_argument("--seed", type=int, default=0, help="phantom perturbation / mask seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=None, help="several seeds: mean ± std over them")
    parser.add_argument("--angles", type=int, default=20, help="CT projection angles (the paper: 20)")
    parser.add_argument("--steps", type=int, default=1000, help="Adam steps of every network and of grid optimisation")
    parser.add_argument(
        "--resolution", type=int, default=None, help="grid side (default CT 128, MRI 32, images 128; the paper's with --paper)"
    )
    parser.add_argument("--width", type=int, default=256, help="MLP width (the paper: 256)")
    parser.add_argument(
        "--init", choices=("paper", "torch"), default="paper", help="initialisation of the MLPs (the paper's: stax)"
    )
    parser.add_argument("--sigma", type=float, default=None, help="Gaussian σ at this size, as given (default: the grid rule's)")
    parser.add_argument(
        "--scale", type=float, default=None, help="positional scale at this size, as given (default: the grid rule's)"
    )
    parser.add_argument(
        "--rows",
        default=",".join(ENCODINGS + BASELINES),
        help="comma-separated rows: the mappings and classical (FBP / zero-filled / cubic), box, tv, grid",
    )
    parser.add_argument("--tv-weight", type=float, default=None, help="λ of the TV row (default: chosen on held-out data)")
    parser.add_argument(
        "--solver-iterations", type=int, default=SOLVER_ITERATIONS, help="iterations of the box-constrained and TV solvers"
    )
    parser.add_argument(
        "--paper", action="store_true", help="the paper's size and test set (CT 512², 8 phantoms; MRI 96³, 6): a GPU job"
    )
    parser.add_argument("--estimate-only", action="store_true", help="print the expected time of the networks' rows and stop")
    parser.add_argument("--keep", type=float, default=0.2, help="inpainting: fraction of pixels observed")
    parser.add_argument("--factor", type=int, default=4, help="super-resolution: downsampling factor")
    parser.add_argument("--image", default=None, help="inpainting / super-resolution image (default data/astronaut.png)")
    parser.add_argument("--noise", type=float, default=0.0, help="σ of additive noise on the measurements")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for results.md, results.json, reconstructions (.npy) and reconstructions.png",
    )
    args = parser.parse_args(argv)
    if args.steps < 1 or args.width < 1 or args.angles < 1 or (args.threads is not None and args.threads < 1):
        raise InputError("--steps, --width, --angles and --threads must be ≥ 1")
    if args.resolution is not None and args.resolution < 2:  # 0 would silently become the task's default
        raise InputError(f"--resolution must be ≥ 2 (or left out: the task's default), got {args.resolution}")
    if args.solver_iterations < 1:
        raise InputError(f"--solver-iterations must be ≥ 1, got {args.solver_iterations}")
    for key in ("sigma", "scale", "tv_weight"):
        value = getattr(args, key)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InputError(f"--{key.replace('_', '-')} must be positive, got {value}")
    args.rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in args.rows if r not in ENCODINGS + BASELINES]
    if unknown or not args.rows:
        raise InputError(
            f"--rows: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(ENCODINGS + BASELINES)}"
        )
    if args.paper:
        if args.task not in PAPER_RUNS:
            raise InputError(f"--paper: the paper ran CT and MRI only, not {args.task}")
        paper = PAPER_RUNS[args.task]
        args.resolution = args.resolution or paper["resolution"]
        args.seeds = args.seeds or paper["seeds"]
    args.resolution = args.resolution or {"ct": 128, "mri": 32}.get(args.task, 128)
    args.seeds = list(dict.fromkeys(args.seeds)) if args.seeds else [args.seed]
    return args


def estimate(args: argparse.Namespace) -> float:
    """Expected seconds of the networks' rows: each row's step timed on the first seed's problem (``estimate``'s
    short probe), × steps × seeds. Printed before a ``--paper`` run; the baselines are not included."""
    names = [r for r in args.rows if r in ENCODINGS]
    probe = make_data(args, args.seeds[0])
    probe.setup("fit")
    setting = method_setting(args, probe)
    factories = {n: (lambda p, c, n=n: build_network(METHODS[n].resolve(setting), c)) for n in names}
    seconds, per_step = estimate_seconds(
        factories, SimpleNamespace(seed=0, steps=args.steps), lambda: make_data(args, args.seeds[0])
    )
    total = seconds * len(args.seeds)
    steps = ", ".join(f"{n} {1000 * s:.1f}" for n, s in per_step.items())
    print(
        f"expected time: about {format_seconds(total)} for {len(names)} network rows × {args.steps} steps × {len(args.seeds)} "
        f"seeds at {args.resolution} per axis (an estimate: measured ms/step {steps}, from a short probe, scaled; the "
        "baselines and scoring add to it)",
        file=sys.stderr,
        flush=True,
    )
    return total


def main(argv: Optional[list[str]] = None) -> list[dict]:
    rows: list[dict] = []
    return command(lambda: _main(argv, rows), lambda: table(rows) if rows else "")


def _main(argv: Optional[list[str]], rows: list[dict]) -> list[dict]:
    silence_lightning()
    args = parse_args(argv)
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    with torch_threads(args.threads):
        if args.paper or args.estimate_only:
            estimate(args)
            if args.estimate_only:
                return []
        out = prepare_out(args.out)
        tv = choose_weight(args) if "tv" in args.rows else (math.nan, "")
        progress = RowProgress(len(args.seeds) * len(args.rows))
        for seed in args.seeds:
            run(args, seed, rows, progress, tv)
    text = table(rows)
    setting = method_setting(args, make_data(args, args.seeds[0]))
    described = {m: METHODS[m].resolve(setting).describe for m in ENCODINGS if m in args.rows}
    if any(described.values()):
        text += "\n\nMappings: " + "; ".join(f"{m} {d}" for m, d in described.items() if d) + f"; init {args.init}."
    if "tv" in args.rows:
        text += f"\n\nTV weight λ = {tv[0]:.2e} ({tv[1]})."
    reference = paper_reference(args.task)
    if reference is not None:
        text += f"\n\n{reference}"
    print(text)
    if out is not None:
        numbers = [{k: v for k, v in r.items() if k not in ("recon", "truth")} for r in rows]
        results = {
            "args": {k: str(v) for k, v in vars(args).items()},
            "settings": described,
            "rows": numbers,
            "summary": summarise(numbers, METRICS),
        }
        write_results(out, text, results)
        for r in rows:
            folder = out / f"seed_{r['seed']}"
            folder.mkdir(exist_ok=True)
            np.save(folder / f"{r['method'].replace(' ', '_')}.npy", r["recon"].numpy())
        write_grid(rows, out / "reconstructions.png")
    return rows


def write_grid(rows: list[dict], path: Path) -> Path:
    """``reconstructions.png``: one row per seed, the ground truth and then every method's reconstruction."""
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    truths = [next(r["truth"] for r in rows if r["seed"] == s) for s in seeds]
    recons = {m: [r["recon"] for r in rows if r["method"] == m] for m in dict.fromkeys(r["method"] for r in rows)}
    return reconstruction_grid(truths, recons, [f"seed {s}" for s in seeds], path)


if __name__ == "__main__":
    main()
