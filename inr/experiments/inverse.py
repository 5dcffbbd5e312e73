"""The paper's inverse problems in one command: coordinate networks with four input mappings against the
classical reconstructions, all from the same measurements.

    python -m inr.experiments.inverse --task ct        [--seed S] [--angles K] [--steps N] [--resolution R] [--out DIR]
    python -m inr.experiments.inverse --task mri       [--resolution 32] [--width 256]
    python -m inr.experiments.inverse --task inpaint   [--keep 0.2]
    python -m inr.experiments.inverse --task superres  [--factor 4]

Prints a Markdown table ``method | PSNR (dB) | SSIM | DC error | low-band error | high-band error | time (s)``
(for CT and MRI followed by the paper's Table 1 row of the same task):
rows none, basic, positional, gaussian (a 3×256 ReLU MLP + sigmoid fitted through the operator, the paper's
mappings and learning rates per task, Tancik et al. 2020 2d_CT / 3d_MRI / 2d_image_regression notebooks)
and the baselines (CT: filtered back-projection; MRI: zero-filled inverse FFT; inpainting and
super-resolution: cubic interpolation; all: grid optimisation, the pixel grid fitted through the operator
with Adam, lr 0.1). Scores are against the ground truth on the whole grid. The DC error is the relative
error of the mean, ‖μ̂ − μ‖/‖μ‖ over channels; the band errors are the reconstruction's pooled relative
error ‖F[x̂ − x]‖/‖F[x]‖ over the lower and upper half of 16 radial frequency bands (``inr.spectral``), both
fields with their means removed first, so the DC term is reported apart and counts in no band.

``--seeds S1 S2 …`` repeats the whole table for each seed (each seed draws its own phantom and mask, or
mask) and prints the mean ± sample standard deviation over seeds of every number. With ``--out`` the table, a
JSON of every number and the reconstructions (``.npy``, one folder per seed) are written there.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from inr.data import CTDataModule, InpaintingDataModule, MRIDataModule, SuperResolutionDataModule
from inr.data.measurements import MeasurementDataModule
from inr.errors import InputError
from inr.experiments.methods import MAPPING_METHODS, METHODS, Resolved, Setting
from inr.experiments.protocols import PAPER_SETTINGS, PROTOCOLS, paper_row
from inr.experiments.runner import (
    Column,
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
from inr.metrics import psnr
from inr.operators import baselines
from inr.spectral import spectral_summary
from inr.tasks.inverse import InverseFitting, grid_ssim

TASKS = ("ct", "mri", "inpaint", "superres")
ENCODINGS = MAPPING_METHODS
GRID_LR = 0.1  # grid optimisation, both notebooks
NUM_BANDS = 16
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


def method_setting(task: str, dm: MeasurementDataModule, width: int) -> Setting:
    """The four mappings as the task's notebook sets them (``protocols.PROTOCOLS[task]``), on the whole grid:
    a 3 × ``width`` ReLU MLP with a sigmoid output and PyTorch's initialisation, Gaussian B drawn with seed 0."""
    shape = dm.operator.field_shape
    return Setting(
        in_dim=len(shape), train_side=min(shape), protocol=PROTOCOLS[task], output_activation="sigmoid", width=width, init="torch"
    )


def make_data(args: argparse.Namespace, seed: int) -> MeasurementDataModule:
    if args.task == "ct":
        return CTDataModule(
            resolution=args.resolution or 64, angles=args.angles, phantom_seed=seed, noise_std=args.noise, seed=seed
        )
    if args.task == "mri":
        return MRIDataModule(resolution=args.resolution or 32, phantom_seed=seed, mask_seed=seed, noise_std=args.noise, seed=seed)
    if args.task == "inpaint":
        return InpaintingDataModule(
            path=args.image, resolution=args.resolution or 128, keep=args.keep, seed=seed, noise_std=args.noise
        )
    return SuperResolutionDataModule(
        path=args.image, resolution=args.resolution or 128, factor=args.factor, noise_std=args.noise, seed=seed
    )


def classical(task: str, dm: MeasurementDataModule) -> tuple[str, Callable[[], torch.Tensor]]:
    """The task's classical reconstruction: (its name, a function returning it)."""
    op, y = dm.operator, dm.measurements
    # the reconstructions of the classical methods are clipped to the object's known range [0, 1], as the
    # networks' sigmoid bounds theirs
    if task == "ct":
        return "filtered back-projection", lambda: baselines.filtered_back_projection(op, y).clamp(0, 1)
    if task == "mri":
        return "zero-filled inverse FFT", lambda: baselines.zero_filled_ifft(op, y).clamp(0, 1)
    if task == "inpaint":
        return "cubic interpolation", lambda: baselines.cubic_inpaint(op, y).clamp(0, 1)
    return "bicubic interpolation", lambda: baselines.cubic_upsample(op, y).clamp(0, 1)


def score(recon: torch.Tensor, truth: torch.Tensor) -> dict[str, float]:
    """PSNR (``inr.metrics.psnr``), SSIM (NaN below the SSIM window) and ``inr.spectral.spectral_summary``'s DC,
    low and high errors (``NUM_BANDS`` radial bands) of a reconstruction as its method returns it."""
    recon = recon.float()
    bands = spectral_summary(recon.double(), truth.double(), num_bands=NUM_BANDS)
    ssim = grid_ssim(recon, truth)
    return {
        "psnr": psnr(recon, truth),
        "ssim": float(ssim) if ssim is not None else math.nan,
        **{key: float(bands[key]) for key in ("dc", "low", "high")},
    }


def fit_network(spec: Resolved, dm: MeasurementDataModule, steps: int) -> torch.Tensor:
    """The field fitted through the operator for ``steps`` full-batch Adam steps; its reconstruction on the grid."""
    torch.manual_seed(0)
    encoder, network, optimizer = spec.build()
    model = InverseFitting(encoder=encoder, network=network, out_channels=dm.out_channels, optimizer=optimizer)
    fit_row(model, dm, steps, label=spec.name)
    return model.render().cpu()


def run(args: argparse.Namespace, seed: int, rows: list[dict], progress: RowProgress) -> None:
    """Every row of the table for one seed (phantom, mask and noise drawn with it), appended to ``rows``."""
    dm = make_data(args, seed)
    dm.setup("fit")
    truth = dm.values_grid()

    def record(name: str, make: Callable[[], torch.Tensor]) -> None:
        start = time.perf_counter()
        recon = make()
        kind = "model" if name in ENCODINGS else "baseline"
        steps = args.steps if name in ENCODINGS or name == "grid optimisation" else 0
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
        rows[-1]["recon"] = recon
        progress.row(f"{name} (seed {seed})", f"PSNR {rows[-1]['psnr']:.2f} dB, {rows[-1]['seconds']:.0f} s")

    setting = method_setting(args.task, dm, args.width)
    for encoding in ENCODINGS:
        record(encoding, lambda e=encoding: fit_network(METHODS[e].resolve(setting), dm, args.steps))
    record(*classical(args.task, dm))
    record(
        "grid optimisation",
        lambda: baselines.grid_optimisation(dm.operator.cpu(), dm.measurements, dm.out_channels, args.steps, GRID_LR),
    )


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
    parser.add_argument("--resolution", type=int, default=None, help="grid side (default CT 64, MRI 32, images 128)")
    parser.add_argument("--width", type=int, default=256, help="MLP width (the paper: 256)")
    parser.add_argument("--keep", type=float, default=0.2, help="inpainting: fraction of pixels observed")
    parser.add_argument("--factor", type=int, default=4, help="super-resolution: downsampling factor")
    parser.add_argument("--image", default=None, help="inpainting / super-resolution image (default data/astronaut.png)")
    parser.add_argument("--noise", type=float, default=0.0, help="σ of additive noise on the measurements")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--out", type=Path, default=None, help="directory for results.md, results.json and reconstructions")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.width < 1 or args.angles < 1 or (args.threads is not None and args.threads < 1):
        raise InputError("--steps, --width, --angles and --threads must be ≥ 1")
    if args.resolution is not None and args.resolution < 2:  # 0 would silently become the task's default
        raise InputError(f"--resolution must be ≥ 2 (or left out: the task's default), got {args.resolution}")
    args.seeds = list(dict.fromkeys(args.seeds)) if args.seeds else [args.seed]
    return args


def main(argv: Optional[list[str]] = None) -> list[dict]:
    rows: list[dict] = []
    return command(lambda: _main(argv, rows), lambda: table(rows) if rows else "")


def _main(argv: Optional[list[str]], rows: list[dict]) -> list[dict]:
    silence_lightning()
    args = parse_args(argv)
    out = prepare_out(args.out)
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    progress = RowProgress(len(args.seeds) * (len(ENCODINGS) + 2))
    with torch_threads(args.threads):
        for seed in args.seeds:
            run(args, seed, rows, progress)
    text = table(rows)
    reference = paper_reference(args.task)
    if reference is not None:
        text += f"\n\n{reference}"
    print(text)
    if out is not None:
        numbers = [{k: v for k, v in r.items() if k != "recon"} for r in rows]
        results = {"args": {k: str(v) for k, v in vars(args).items()}, "rows": numbers, "summary": summarise(numbers, METRICS)}
        write_results(out, text, results)
        for r in rows:
            folder = out / f"seed_{r['seed']}"
            folder.mkdir(exist_ok=True)
            np.save(folder / f"{r['method'].replace(' ', '_')}.npy", r["recon"].numpy())
    return rows


if __name__ == "__main__":
    main()
