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
mask) and prints the mean over seeds with the range (min–max) of PSNR and SSIM. With ``--out`` the table, a
JSON of every number and the reconstructions (``.npy``, one folder per seed) are written there.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Optional

import lightning as L
import numpy as np
import torch

from inr.data import CTDataModule, InpaintingDataModule, MRIDataModule, SuperResolutionDataModule
from inr.data.measurements import MeasurementDataModule
from inr.encoders import BasicEncoding, Encoder, GaussianEncoding, IdentityEncoding, PositionalEncoding
from inr.errors import InputError
from inr.experiments.threads import torch_threads
from inr.networks import MLP
from inr.operators import baselines
from inr.run.allocator import retain_freed_memory
from inr.spectral import spectral_summary
from inr.tasks.inverse import InverseFitting, grid_ssim

TASKS = ("ct", "mri", "inpaint", "superres")
ENCODINGS = ("none", "basic", "positional", "gaussian")
GRID_LR = 0.1  # grid optimisation, both notebooks
EMBEDDING_SIZE = 256  # rows of B for the positional and Gaussian mappings (the notebooks' embedding_size)
NUM_BANDS = 16
METRICS = ("psnr", "ssim", "dc", "low", "high", "seconds")


@dataclass
class Protocol:
    """A task's input mappings and learning rates (the notebooks' values; PE frequencies 2^linspace(0, s, m) − 1)."""

    ndim: int
    lr: dict[str, float]
    pe_scale: float
    gaussian_sigma: float

    def encoder(self, name: str) -> Encoder:
        d = self.ndim
        if name == "none":
            return IdentityEncoding(in_dim=d)
        if name == "basic":
            return BasicEncoding(in_dim=d)
        if name == "positional":  # the notebooks: 2^linspace(0, s, embedding_size // d) − 1 on each axis
            return PositionalEncoding(
                in_dim=d, num_frequencies=EMBEDDING_SIZE // d, sigma=2.0**self.pe_scale, endpoint=True, minus_one=True
            )
        return GaussianEncoding(in_dim=d, num_features=EMBEDDING_SIZE, sigma=self.gaussian_sigma, seed=0)


PROTOCOLS = {
    # 2d_CT.ipynb: lr 1e-2 none/basic, 1e-3 PE (scale 3) and Gaussian (σ 4)
    "ct": Protocol(2, {"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3}, 3.0, 4.0),
    # 3d_MRI.ipynb: lr 2e-3 for every mapping, PE scale 4, Gaussian σ 2 (phantoms)
    "mri": Protocol(3, {"none": 2e-3, "basic": 2e-3, "positional": 2e-3, "gaussian": 2e-3}, 4.0, 2.0),
    # 2d_image_regression.ipynb, natural images: lr 1e-2 none/basic, 1e-3 PE (scale 6) and Gaussian (σ 10)
    "inpaint": Protocol(2, {"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3}, 6.0, 10.0),
    "superres": Protocol(2, {"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3}, 6.0, 10.0),
}


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
    if task == "ct":
        return "filtered back-projection", lambda: baselines.filtered_back_projection(op, y)
    if task == "mri":
        return "zero-filled inverse FFT", lambda: baselines.zero_filled_ifft(op, y)
    if task == "inpaint":
        return "cubic interpolation", lambda: baselines.cubic_inpaint(op, y)
    return "bicubic interpolation", lambda: baselines.cubic_upsample(op, y)


def score(recon: torch.Tensor, truth: torch.Tensor) -> dict[str, float]:
    """PSNR, SSIM (NaN below the SSIM window) and ``inr.spectral.spectral_summary``'s DC, low and high errors
    (``NUM_BANDS`` radial bands) of a reconstruction clipped to [0, 1]."""
    recon = recon.float().clamp(0, 1)
    bands = spectral_summary(recon.double(), truth.double(), num_bands=NUM_BANDS)
    ssim = grid_ssim(recon, truth)
    return {
        "psnr": baselines.psnr(recon, truth),
        "ssim": float(ssim) if ssim is not None else math.nan,
        **{key: float(bands[key]) for key in ("dc", "low", "high")},
    }


def fit_network(task: str, encoding: str, dm: MeasurementDataModule, steps: int, width: int) -> torch.Tensor:
    """The field fitted through the operator for ``steps`` full-batch Adam steps; its reconstruction on the grid."""
    protocol = PROTOCOLS[task]
    torch.manual_seed(0)
    model = InverseFitting(
        encoder=protocol.encoder(encoding),
        network=partial(MLP, width=width, depth=3, activation="relu", output_activation="sigmoid"),
        out_channels=dm.out_channels,
        optimizer=partial(torch.optim.Adam, lr=protocol.lr[encoding]),
    )
    trainer = L.Trainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
    )
    trainer.fit(model, datamodule=dm)
    model.eval()
    return model.render().cpu()


def run(args: argparse.Namespace, seed: int) -> list[dict]:
    """Every row of the table for one seed (phantom, mask and noise drawn with it)."""
    dm = make_data(args, seed)
    dm.setup("fit")
    truth = dm.values_grid()
    rows = []

    def record(name: str, make: Callable[[], torch.Tensor]) -> None:
        start = time.perf_counter()
        recon = make()
        rows.append({"method": name, "seed": seed, **score(recon, truth), "seconds": time.perf_counter() - start, "recon": recon})
        print(f"  seed {seed} {name}: PSNR {rows[-1]['psnr']:.2f} dB ({rows[-1]['seconds']:.0f} s)", file=sys.stderr, flush=True)

    for encoding in ENCODINGS:
        record(encoding, lambda e=encoding: fit_network(args.task, e, dm, args.steps, args.width))
    record(*classical(args.task, dm))
    record(
        "grid optimisation",
        lambda: baselines.grid_optimisation(dm.operator.cpu(), dm.measurements, dm.out_channels, args.steps, GRID_LR),
    )
    return rows


# Tancik et al. 2020, Table 1 (test PSNR in dB, mean over each set): 2D CT on Shepp–Logan phantoms at 512²
# (the 2d_CT notebook's 20 angles) and 3D MRI on ATLAS brain volumes at 96³. The paper's CT has a second column,
# 2D brain slices from ATLAS (none 15.44, basic 16.95, positional 19.55, gaussian 19.88), for data not
# bundled here. Inpainting and super-resolution are not in the paper.
PAPER_TABLE_1 = {
    "ct": ("2D CT, Shepp–Logan phantoms, 512²", {"none": 16.75, "basic": 23.31, "positional": 26.89, "gaussian": 28.33}),
    "mri": ("3D MRI, ATLAS brain volumes, 96³", {"none": 26.14, "basic": 28.58, "positional": 32.23, "gaussian": 34.51}),
}


def paper_reference(task: str) -> Optional[str]:
    """The line printed under a CT or MRI table: the paper's Table 1 row for the same task."""
    if task not in PAPER_TABLE_1:
        return None
    setting, psnr = PAPER_TABLE_1[task]
    numbers = ", ".join(f"{name} {value:.2f}" for name, value in psnr.items())
    return f"The paper (Tancik et al. 2020, Table 1; {setting}) reports PSNR (dB): {numbers}."


def summarise(rows: list[dict]) -> list[dict]:
    """One row per method (in order of appearance): the mean of each metric over seeds, and for PSNR and SSIM
    the range (``psnr_min``, ``psnr_max``, ...)."""
    methods = list(dict.fromkeys(r["method"] for r in rows))
    out = []
    for method in methods:
        runs = [r for r in rows if r["method"] == method]
        summary = {"method": method, "seeds": len(runs)}
        for key in METRICS:
            values = np.array([r[key] for r in runs], dtype=float)
            summary[key] = float(values.mean())
            summary[f"{key}_min"], summary[f"{key}_max"] = float(values.min()), float(values.max())
        out.append(summary)
    return out


def table(rows: list[dict]) -> str:
    """The Markdown table of ``summarise(rows)``: with several seeds, PSNR and SSIM read mean (min–max)."""
    lines = [
        "| method | PSNR (dB) | SSIM | DC error | low-band error | high-band error | time (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in summarise(rows):
        spread = r["seeds"] > 1
        psnr = f"{r['psnr']:.2f}" + (f" ({r['psnr_min']:.2f}–{r['psnr_max']:.2f})" if spread else "")
        ssim = f"{r['ssim']:.3f}" + (f" ({r['ssim_min']:.3f}–{r['ssim_max']:.3f})" if spread else "")
        lines.append(
            f"| {r['method']} | {psnr} | {ssim} | {r['dc']:.3f} | {r['low']:.3f} | {r['high']:.3f} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=TASKS, required=True)
    parser.add_argument("--seed", type=int, default=0, help="phantom perturbation / mask seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=None, help="several seeds: mean and range over them")
    parser.add_argument("--angles", type=int, default=20, help="CT projection angles (the paper: 20)")
    parser.add_argument("--steps", type=int, default=1000, help="Adam steps of every network and of grid optimisation")
    parser.add_argument("--resolution", type=int, default=None, help="grid side (default CT 64, MRI 32, images 128)")
    parser.add_argument("--width", type=int, default=256, help="MLP width (the paper: 256)")
    parser.add_argument("--keep", type=float, default=0.2, help="inpainting: fraction of pixels observed")
    parser.add_argument("--factor", type=int, default=4, help="super-resolution: downsampling factor")
    parser.add_argument("--image", default=None, help="inpainting / super-resolution image (default data/astronaut.png)")
    parser.add_argument("--noise", type=float, default=0.0, help="σ of additive noise on the measurements")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--out", type=Path, default=None, help="directory for table.md, results.json and reconstructions")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.width < 1 or args.angles < 1 or (args.threads is not None and args.threads < 1):
        raise InputError("--steps, --width, --angles and --threads must be ≥ 1")
    args.seeds = list(dict.fromkeys(args.seeds)) if args.seeds else [args.seed]
    return args


def main(argv: Optional[list[str]] = None) -> list[dict]:
    warnings.filterwarnings("ignore")
    for name in ("lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        args = parse_args(argv)
        retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
        with torch_threads(args.threads):
            rows = [row for seed in args.seeds for row in run(args, seed)]
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    text = table(rows)
    reference = paper_reference(args.task)
    if reference is not None:
        text += f"\n\n{reference}"
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "table.md").write_text(text + "\n")
        numbers = [{k: v for k, v in r.items() if k != "recon"} for r in rows]
        results = {"args": {k: str(v) for k, v in vars(args).items()}, "rows": numbers, "summary": summarise(rows)}
        (args.out / "results.json").write_text(json.dumps(results, indent=1))
        for r in rows:
            folder = args.out / f"seed_{r['seed']}"
            folder.mkdir(exist_ok=True)
            np.save(folder / f"{r['method'].replace(' ', '_')}.npy", r["recon"].numpy())
    return rows


if __name__ == "__main__":
    main()
