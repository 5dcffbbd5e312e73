"""The paper's inverse problems in one command: coordinate networks with four input mappings against the
classical reconstructions, all from the same measurements.

    python -m inr.experiments.inverse --task ct        [--seed S] [--angles K] [--steps N] [--resolution R] [--out DIR]
    python -m inr.experiments.inverse --task mri       [--resolution 32] [--width 256]
    python -m inr.experiments.inverse --task inpaint   [--keep 0.2]
    python -m inr.experiments.inverse --task superres  [--factor 4]

Prints a Markdown table ``method | PSNR (dB) | SSIM | DC error | low-band error | high-band error | time (s)``: rows
none, basic, positional, gaussian (a 3×256 ReLU MLP + sigmoid fitted through the operator, the paper's
mappings and learning rates per task, Tancik et al. 2020 2d_CT / 3d_MRI / 2d_image_regression notebooks)
and the baselines (CT: filtered back-projection; MRI: zero-filled inverse FFT; inpainting and
super-resolution: cubic interpolation; all: grid optimisation, the pixel grid fitted through the operator
with Adam, lr 0.1). Scores are against the ground truth on the whole grid; the band errors are
``inr.spectral.spectral_summary`` of the reconstruction: the mean's relative error (DC, in no band) and the
relative error pooled over the lower and the upper half of 16 radial frequency bands.
With ``--out`` the table, a JSON of the numbers and the reconstructions (``.npy``) are written there.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Optional

import lightning as L
import numpy as np
import torch

from inr.data import CTDataModule, InpaintingDataModule, MRIDataModule, SuperResolutionDataModule
from inr.data.measurements import MeasurementDataModule
from inr.encoders import BasicEncoding, Encoder, GaussianEncoding, IdentityEncoding, PositionalEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.operators import baselines
from inr.spectral import spectral_summary
from inr.tasks.inverse import InverseFitting, grid_ssim

TASKS = ("ct", "mri", "inpaint", "superres")
ENCODINGS = ("none", "basic", "positional", "gaussian")
GRID_LR = 0.1  # grid optimisation, both notebooks


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
        if name == "positional":  # 256 features in all: 256 // (2d) frequencies per axis
            return PositionalEncoding(in_dim=d, num_frequencies=256 // (2 * d), sigma=2.0**self.pe_scale, endpoint=True, minus_one=True)
        return GaussianEncoding(in_dim=d, num_features=256, sigma=self.gaussian_sigma, seed=0)


PROTOCOLS = {
    # 2d_CT.ipynb: lr 1e-2 none/basic, 1e-3 PE (scale 3) and Gaussian (σ 4)
    "ct": Protocol(2, {"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3}, 3.0, 4.0),
    # 3d_MRI.ipynb: lr 2e-3 for every mapping, PE scale 4, Gaussian σ 2 (phantoms)
    "mri": Protocol(3, {"none": 2e-3, "basic": 2e-3, "positional": 2e-3, "gaussian": 2e-3}, 4.0, 2.0),
    # 2d_image_regression.ipynb, natural images: lr 1e-2 none/basic, 1e-3 PE (scale 6) and Gaussian (σ 10)
    "inpaint": Protocol(2, {"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3}, 6.0, 10.0),
    "superres": Protocol(2, {"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3}, 6.0, 10.0),
}


def make_data(args: argparse.Namespace) -> MeasurementDataModule:
    if args.task == "ct":
        return CTDataModule(resolution=args.resolution or 64, angles=args.angles, phantom_seed=args.seed, noise_std=args.noise)
    if args.task == "mri":
        return MRIDataModule(resolution=args.resolution or 32, phantom_seed=args.seed, mask_seed=args.seed, noise_std=args.noise)
    if args.task == "inpaint":
        return InpaintingDataModule(path=args.image, resolution=args.resolution or 128, keep=args.keep, seed=args.seed, noise_std=args.noise)
    return SuperResolutionDataModule(path=args.image, resolution=args.resolution or 128, factor=args.factor, noise_std=args.noise)


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
    recon = recon.float().clamp(0, 1)
    bands = spectral_summary(recon.double(), truth.double(), num_bands=16)
    ssim = grid_ssim(recon, truth)
    return {
        "psnr": baselines.psnr(recon, truth),
        "ssim": float(ssim) if ssim is not None else float("nan"),
        "dc": float(bands["dc"]),
        "low": float(bands["low"]),
        "high": float(bands["high"]),
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
    trainer = L.Trainer(max_steps=steps, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, limit_val_batches=0, num_sanity_val_steps=0)
    trainer.fit(model, datamodule=dm)
    model.eval()
    return model.render().cpu()


def run(args: argparse.Namespace) -> list[dict]:
    dm = make_data(args)
    dm.setup("fit")
    truth = dm.values_grid()
    rows = []

    def record(name: str, make: Callable[[], torch.Tensor]) -> None:
        start = time.perf_counter()
        recon = make()
        rows.append({"method": name, **score(recon, truth), "seconds": time.perf_counter() - start, "recon": recon})
        print(f"  {name}: PSNR {rows[-1]['psnr']:.2f} dB ({rows[-1]['seconds']:.0f} s)", file=sys.stderr, flush=True)

    for encoding in ENCODINGS:
        record(encoding, lambda e=encoding: fit_network(args.task, e, dm, args.steps, args.width))
    record(*classical(args.task, dm))
    record("grid optimisation", lambda: baselines.grid_optimisation(dm.operator.cpu(), dm.measurements, dm.out_channels, args.steps, GRID_LR))
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| method | PSNR (dB) | SSIM | DC error | low-band error | high-band error | time (s) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['psnr']:.2f} | {r['ssim']:.3f} | {r['dc']:.3f} | {r['low']:.3f} | {r['high']:.3f} | {r['seconds']:.0f} |")
    return "\n".join(lines)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=TASKS, required=True)
    parser.add_argument("--seed", type=int, default=0, help="phantom perturbation / mask seed")
    parser.add_argument("--angles", type=int, default=20, help="CT projection angles (the paper: 20)")
    parser.add_argument("--steps", type=int, default=1000, help="Adam steps of every network and of grid optimisation")
    parser.add_argument("--resolution", type=int, default=None, help="grid side (default CT 64, MRI 32, images 128)")
    parser.add_argument("--width", type=int, default=256, help="MLP width (the paper: 256)")
    parser.add_argument("--keep", type=float, default=0.2, help="inpainting: fraction of pixels observed")
    parser.add_argument("--factor", type=int, default=4, help="super-resolution: downsampling factor")
    parser.add_argument("--image", default=None, help="inpainting / super-resolution image (default data/astronaut.png)")
    parser.add_argument("--noise", type=float, default=0.0, help="σ of additive noise on the measurements")
    parser.add_argument("--out", type=Path, default=None, help="directory for table.md, results.json and reconstructions")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.width < 1 or args.angles < 1:
        raise InputError("--steps, --width and --angles must be ≥ 1")
    return args


def main(argv: Optional[list[str]] = None) -> None:
    warnings.filterwarnings("ignore")
    for name in ("lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        args = parse_args(argv)
        rows = run(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    text = table(rows)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "table.md").write_text(text + "\n")
        numbers = [{k: v for k, v in r.items() if k != "recon"} for r in rows]
        (args.out / "results.json").write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "rows": numbers}, indent=1))
        for r in rows:
            np.save(args.out / f"{r['method'].replace(' ', '_')}.npy", r["recon"].numpy())


if __name__ == "__main__":
    main()
