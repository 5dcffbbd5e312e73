"""Encoder comparison on one image, one command: every variant of ``VARIANTS`` trained with the 2D image
protocol of Tancik et al. 2020, a Markdown table of PSNRs and one figure of spectral-bias heatmaps.

    python -m inr.experiments.compare_encoders --image data/astronaut.png    # CPU-sized defaults
    python -m inr.experiments.compare_encoders --text                        # a generated text image
    python -m inr.experiments.compare_encoders --image PATH --paper          # 512², 2000 steps (a GPU)

Each variant trains through the framework (Lightning Trainer, ``ImageFitting``, ``ImageDataModule``,
``SpectralBiasCallback``): every_other split (train on [::2, ::2], test on [1::2, 1::2]), full-batch Adam,
3 × 256 ReLU MLP with a sigmoid output. Writes to ``--out``: ``results.md``, ``results.json``,
``spectral_heatmaps.png`` and one TensorBoard run per variant (with its ``spectral_history.npz``).
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
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, Optional

import lightning as L
import torch
from lightning.pytorch.loggers import TensorBoardLogger

from inr.callbacks.spectral import SpectralBiasCallback
from inr.data.image import ImageDataModule
from inr.data.module import GridDataModule
from inr.data.text import TextImageDataModule, save_text_image
from inr.encoders import BasicEncoding, Encoder, GaussianEncoding, HashGridEncoding, IdentityEncoding, PositionalEncoding
from inr.errors import InputError
from inr.networks import MLP, SIREN
from inr.spectral_plots import comparison_figure
from inr.tasks.base import NetworkFactory
from inr.tasks.image import ImageFitting

# Mapping scales of Tancik et al. 2020 (supplement, 2D image regression): positional 2^linspace(0, s, m) − 1
# with s = 6 for natural images and 5 for text; Gaussian σ = 10 natural, 14 text.
PAPER_SCALES = {"natural": {"positional_scale": 6.0, "gaussian_sigma": 10.0}, "text": {"positional_scale": 5.0, "gaussian_sigma": 14.0}}
# CPU-sized defaults: about 5 minutes for the four variants on 2 idle cores (benchmarks/README.md, docs/spectral.md).
CPU_RESOLUTION, CPU_STEPS = 256, 300
PAPER_RESOLUTION, PAPER_STEPS = 512, 2000


@dataclass(frozen=True)
class Protocol:
    """What every variant shares: image size, steps, network size, seeds and the image kind's scales."""

    resolution: int = CPU_RESOLUTION
    steps: int = CPU_STEPS
    kind: str = "natural"
    width: int = 256
    depth: int = 3
    seed: int = 0
    steps_per_epoch: int = 10  # one spectral measurement every this many steps
    num_bands: int = 16

    @property
    def positional_scale(self) -> float:
        return PAPER_SCALES[self.kind]["positional_scale"]

    @property
    def gaussian_sigma(self) -> float:
        return PAPER_SCALES[self.kind]["gaussian_sigma"]


def paper_mlp(p: Protocol) -> NetworkFactory:
    """The paper's network: ``depth`` hidden ReLU layers of ``width``, sigmoid output."""
    return partial(MLP, width=p.width, depth=p.depth, activation="relu", output_activation="sigmoid")


@dataclass(frozen=True)
class Variant:
    """One row of the comparison: factories of its encoder and network (given the protocol) and its lr."""

    encoder: Callable[[Protocol], Encoder]
    lr: float = 1e-3
    network: Callable[[Protocol], NetworkFactory] = paper_mlp


# The rows, in table order. Adding an encoder or network is one entry here.
VARIANTS: dict[str, Variant] = {
    "none": Variant(lambda p: IdentityEncoding(in_dim=2), lr=1e-2),  # lr 1e-2 for none/basic, as in the paper
    "basic": Variant(lambda p: BasicEncoding(in_dim=2), lr=1e-2),
    "positional": Variant(
        lambda p: PositionalEncoding(in_dim=2, num_frequencies=128, sigma=2.0**p.positional_scale, endpoint=True, minus_one=True)
    ),
    "gaussian": Variant(lambda p: GaussianEncoding(in_dim=2, num_features=256, sigma=p.gaussian_sigma, seed=p.seed)),
    # SIREN's image network (4 sine layers, ω₀ = 30) on raw coordinates; lr as configs/image_siren.yaml
    "siren": Variant(lambda p: IdentityEncoding(in_dim=2), lr=5e-4, network=lambda p: partial(SIREN, width=p.width, depth=4)),
    # tiny-cuda-nn's HashGrid, finest level at the training pixels' resolution, 2×64 MLP; lr 1e-2 (Instant-NGP)
    "hashgrid": Variant(
        lambda p: HashGridEncoding(in_dim=2, finest_resolution=p.resolution // 2), lr=1e-2,
        network=lambda p: partial(MLP, width=64, depth=2, output_activation="sigmoid"),
    ),
}


@torch.no_grad()
def heldout_ssim(model: ImageFitting, dm: GridDataModule) -> float:
    """SSIM of the held-out pixels seen as an image (the [1::2, 1::2] sub-image), in eval mode."""
    was_training = model.training
    model.eval()
    try:
        pred = torch.cat([model.predict(dm.grid.coords(c.to(model.device))) for c in dm.test_index.split(model.render_chunk)])
        pred = pred.T.reshape(dm.out_channels, *dm.test_shape)  # (N, C) -> (C, h, w)
        target = dm.values_grid(dm.test_index, dm.test_shape).to(pred.device)
        return float(model.on_heldout_grid(pred, target)["ssim"])
    finally:
        model.train(was_training)


def run_variant(name: str, variant: Variant, protocol: Protocol, make_data: Callable[[], GridDataModule], out: Path) -> dict[str, Any]:
    """Train one variant through a Lightning Trainer and return its scores and spectral history."""
    L.seed_everything(protocol.seed, verbose=False)
    dm = make_data()
    model = ImageFitting(
        encoder=variant.encoder(protocol),
        network=variant.network(protocol),
        out_channels=dm.out_channels,
        optimizer=partial(torch.optim.Adam, lr=variant.lr),
    )
    spectral = SpectralBiasCallback(num_bands=protocol.num_bands)
    trainer = L.Trainer(
        max_steps=protocol.steps,
        logger=TensorBoardLogger(str(out / "tb"), name=name, version=0),
        callbacks=[spectral],
        limit_val_batches=0,  # scored once at the end, as the paper reports final PSNR
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        log_every_n_steps=protocol.steps_per_epoch,
        devices=1,
    )
    start = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    seconds = time.perf_counter() - start
    scores = model.evaluate()
    h = spectral.history_arrays()
    return {
        "encoder": name,
        "train_psnr": scores["train/psnr"],
        "test_psnr": scores["test/psnr"],
        "test_ssim": heldout_ssim(model, dm),
        "seconds": seconds,
        "ms_per_step": 1000.0 * seconds / protocol.steps,
        "params": sum(p.numel() for p in model.parameters()),
        "lr": variant.lr,
        "low_band_error": float(h["low"][-1]) if len(h["low"]) else math.nan,
        "high_band_error": float(h["high"][-1]) if len(h["high"]) else math.nan,
        "history": {"steps": h["steps"].tolist(), "edges": h["edges"].tolist(), "errors": h["errors"].tolist()},
    }


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table; the first three columns are encoder | train PSNR | test PSNR."""
    lines = [
        "| encoder | train PSNR (dB) | test PSNR (dB) | test SSIM | time (s) | ms/step | params | low-band error | high-band error |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['encoder']} | {r['train_psnr']:.2f} | {r['test_psnr']:.2f} | {r['test_ssim']:.3f} | {r['seconds']:.0f} "
            f"| {r['ms_per_step']:.0f} | {r['params']:,} | {r['low_band_error']:.3f} | {r['high_band_error']:.3f} |"
        )
    return "\n".join(lines)


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m inr.experiments.compare_encoders", description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--image", help="image file (PNG/JPEG/TIFF/BMP); default data/astronaut.png")
    source.add_argument("--text", action="store_true", help="a generated text image instead of a file")
    parser.add_argument("--text-seed", type=int, default=0, help="which generated text image (with --text)")
    parser.add_argument("--kind", choices=sorted(PAPER_SCALES), help="mapping scales of the paper: natural (default) or text (default with --text)")
    parser.add_argument("--out", default="outputs/compare_encoders", help="output directory")
    parser.add_argument("--paper", action="store_true", help=f"the paper's protocol: {PAPER_RESOLUTION}², {PAPER_STEPS} steps")
    parser.add_argument("--resolution", type=int, help=f"image side after a centre crop (default {CPU_RESOLUTION}, {PAPER_RESOLUTION} with --paper)")
    parser.add_argument("--steps", type=int, help=f"training steps (default {CPU_STEPS}, {PAPER_STEPS} with --paper)")
    parser.add_argument("--encoders", default=",".join(VARIANTS), help=f"comma-separated subset of {', '.join(VARIANTS)}")
    parser.add_argument("--width", type=int, default=256, help="hidden width of the MLP")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.names = [n.strip() for n in args.encoders.split(",") if n.strip()]
    unknown = [n for n in args.names if n not in VARIANTS]
    if unknown or not args.names:
        parser.error(f"--encoders: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(VARIANTS)}")
    for key in ("resolution", "steps", "width"):
        if getattr(args, key) is not None and getattr(args, key) < (8 if key == "resolution" else 1):
            parser.error(f"--{key} is too small: {getattr(args, key)}")
    return args


def protocol_from_args(args: argparse.Namespace) -> Protocol:
    """CPU-sized defaults, the paper's with ``--paper``; explicit ``--resolution``/``--steps`` win."""
    return Protocol(
        resolution=args.resolution or (PAPER_RESOLUTION if args.paper else CPU_RESOLUTION),
        steps=args.steps or (PAPER_STEPS if args.paper else CPU_STEPS),
        kind=args.kind or ("text" if args.text else "natural"),
        width=args.width,
        seed=args.seed,
    )


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison; print the Markdown table; return the rows (with histories)."""
    args = parse_args(argv)
    protocol = protocol_from_args(args)
    out = Path(args.out)
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", module="lightning")
    try:
        if args.text:
            label = f"text image (seed {args.text_seed})"
            make_data = partial(TextImageDataModule, resolution=protocol.resolution, text_seed=args.text_seed)
        else:
            label = args.image or "data/astronaut.png"
            make_data = partial(ImageDataModule, path=args.image, resolution=protocol.resolution, split="every_other")
        make_data().setup("fit")  # bad input fails here, before anything is written
        out.mkdir(parents=True, exist_ok=True)
        if args.text:
            save_text_image(out / "text.png", protocol.resolution, args.text_seed)
        rows = []
        for name in args.names:
            rows.append(run_variant(name, VARIANTS[name], protocol, make_data, out))
            r = rows[-1]
            print(f"{name}: train {r['train_psnr']:.2f} dB, test {r['test_psnr']:.2f} dB, {r['seconds']:.0f} s", file=sys.stderr, flush=True)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    table = markdown_table(rows)
    title = f"{label}, {protocol.resolution}², {protocol.steps} steps, {protocol.kind} scales"
    (out / "results.md").write_text(f"{title}\n\n{table}\n")
    (out / "results.json").write_text(json.dumps({"source": label, "protocol": asdict(protocol), "rows": rows}, indent=1))
    figure = comparison_figure({r["encoder"]: r["history"] for r in rows}, title=f"spectral bias: {title}")
    figure.savefig(out / "spectral_heatmaps.png", dpi=110)
    print(table)
    return rows


if __name__ == "__main__":
    main()
