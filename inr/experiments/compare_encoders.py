"""Encoder comparison on one image, one command: every variant of ``VARIANTS`` trained with the 2D image
protocol of Tancik et al. 2020, beside the classical baselines, as a Markdown table and spectral-bias heatmaps.

    python -m inr.experiments.compare_encoders --image data/astronaut.png    # CPU-sized defaults (128², 300 steps)
    python -m inr.experiments.compare_encoders --image data/astronaut.png --resolution 256 --target-psnr 25
    python -m inr.experiments.compare_encoders --text                        # a generated text image
    python -m inr.experiments.compare_encoders --image PATH --paper          # 512², 2000 steps (a GPU)
    python -m inr.experiments.compare_encoders --text --paper --estimate-only   # the expected time, nothing else
    python -m inr.experiments.compare_encoders --encoders wire,gauss,finer,bacon,siren,gaussian --image data/astronaut.png

Each variant trains through the framework (Lightning Trainer, ``ImageFitting``, ``ImageDataModule``,
``SpectralBiasCallback``): every_other split (train on [::2, ::2], test on [1::2, 1::2]), full-batch Adam,
the paper's settings for the image kind (``paper_settings.PAPER_SETTINGS``: learning rate per mapping, mapping
scales, 3 × 256 ReLU MLP with sigmoid output and the paper's initialisation); the other networks (SIREN, WIRE,
Gaussian activations, FINER, BACON, an MFN) on raw coordinates with their released code's settings, the hash
grid with Instant-NGP's. The baselines (``baselines``) are scored the same way. Every row also records its
held-out PSNR every 10 steps (``progress``) and the first step and training time at which it reached
``--target-psnr`` (default: bilinear interpolation's held-out PSNR on the same pixels, the score a network
has to beat to be worth more than interpolating its training pixels). Writes to ``--out``: ``results.md``,
``results.json``, ``spectral_heatmaps.png`` and one TensorBoard run per variant (with its
``spectral_history.npz``).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Optional

import lightning as L
import torch
from lightning.pytorch.loggers import TensorBoardLogger

from inr.callbacks.spectral import SpectralBiasCallback
from inr.commands import program_name
from inr.data.image import ImageDataModule
from inr.data.module import GridDataModule
from inr.data.text import TextImageDataModule, save_text_image
from inr.encoders import BasicEncoding, Encoder, GaussianEncoding, HashGridEncoding, IdentityEncoding, PositionalEncoding
from inr.errors import InputError
from inr.experiments.baselines import baseline_rows, score_prediction
from inr.experiments.compare_report import json_safe, markdown_table, paper_note
from inr.experiments.estimate import estimate_seconds, format_duration
from inr.experiments.paper_settings import KINDS, PAPER_SETTINGS
from inr.experiments.progress import HeldOutPSNRHistory
from inr.experiments.threads import torch_threads
from inr.networks import BACON, FINER, MFN, MLP, SIREN, WIRE, GaussMLP
from inr.run.allocator import retain_freed_memory
from inr.spectral.plots import comparison_figure
from inr.tasks.base import NetworkFactory
from inr.tasks.image import ImageFitting

# CPU-sized defaults: 128² (64² training pixels) and 300 steps, 9–26 s per row on 2 cores (the six
# architectures of docs/benchmark.md: 1.6 min); ``--resolution 256`` is the fuller CPU comparison of the
# docs' tables (4× the pixels), ``--paper`` the paper's 512² and 2000 steps (a GPU).
CPU_RESOLUTION, CPU_STEPS = 128, 300
# A fixed held-out target near the paper's Fourier-feature rows on natural images (positional 24.95,
# Gaussian 25.57 dB at 512²; Tancik et al. 2020, Table 1): the docs' 256² tables used it (--target-psnr 25).
TARGET_PSNR = 25.0
# Instant-NGP's Adam: β₁ = 0.9, β₂ = 0.99, ε = 1e-15 (Müller et al. 2022, sec. 4), lr 1e-2 as its image runs.
INSTANT_NGP_ADAM = {"betas": (0.9, 0.99), "eps": 1e-15}
# BACON's band split over its 5 filters in its image experiment (computational-imaging/bacon, train_img.py)
BACON_FRACTIONS = (0.125, 0.125, 0.25, 0.25, 0.25)


@dataclass(frozen=True)
class Protocol:
    """What every variant shares: image size, steps, network size and init, seeds and the image kind."""

    resolution: int = CPU_RESOLUTION
    steps: int = CPU_STEPS
    kind: str = "natural"
    width: int = 256
    depth: int = 3
    init: str = "paper"
    seed: int = 0
    steps_per_epoch: int = 10  # one spectral and one held-out PSNR measurement every this many steps
    num_bands: int = 16
    target_psnr: float = TARGET_PSNR

    @property
    def settings(self):
        return PAPER_SETTINGS[self.kind]

    @property
    def positional_scale(self) -> float:
        return self.settings.positional_scale

    @property
    def gaussian_sigma(self) -> float:
        return self.settings.gaussian_sigma


def paper_mlp(p: Protocol) -> NetworkFactory:
    """The paper's network: ``depth`` hidden ReLU layers of ``width``, sigmoid output, the protocol's init."""
    return partial(MLP, width=p.width, depth=p.depth, activation="relu", output_activation="sigmoid", init=p.init)


@dataclass(frozen=True)
class Variant:
    """One row of the comparison: factories of its encoder and network (given the protocol) and its optimiser.

    ``mapping`` names one of the paper's mappings: its learning rate is then the paper's for the protocol's
    image kind (``PAPER_SETTINGS``); otherwise ``lr`` is used. ``adam`` holds further Adam arguments and
    ``describe`` a short note on the row's setting for the table.
    """

    encoder: Callable[[Protocol], Encoder]
    lr: Optional[float] = None
    network: Callable[[Protocol], NetworkFactory] = paper_mlp
    mapping: Optional[str] = None
    adam: Mapping[str, Any] = field(default_factory=dict)
    describe: Callable[[Protocol, Encoder], str] = lambda p, e: ""

    def learning_rate(self, p: Protocol) -> float:
        if self.lr is not None:
            return self.lr
        if self.mapping is None:
            raise ValueError("a Variant needs an lr or one of the paper's mappings")
        return p.settings.learning_rate(self.mapping)


def hash_levels(p: Protocol, encoder: HashGridEncoding) -> str:
    """Which levels of a hash grid are dense and which hashed, e.g. "T = 2^12: levels 0–9 dense (N 16–55), 10–15 hashed (N 64–128)"."""
    n, dense = encoder.resolutions.tolist(), encoder.dense_levels
    parts = [f"levels 0–{dense - 1} dense (N {n[0]}–{n[dense - 1]})"] if dense else []
    if dense < len(n):
        parts.append(f"{dense}–{len(n) - 1} hashed (N {n[dense]}–{n[-1]})")
    else:
        parts.append("none hashed")
    return f"T = 2^{encoder.log2_hashmap_size}: " + ", ".join(parts)


def hashgrid_variant(log2_hashmap_size: int) -> Variant:
    """tiny-cuda-nn's HashGrid (16 levels × 2 features, N_min = 16) with the finest level at the training pixels'
    resolution, a 2 × 64 ReLU MLP (PyTorch init) and Instant-NGP's Adam."""
    return Variant(
        lambda p: HashGridEncoding(in_dim=2, log2_hashmap_size=log2_hashmap_size, finest_resolution=p.resolution // 2),
        lr=1e-2,
        adam=INSTANT_NGP_ADAM,
        network=lambda p: partial(MLP, width=64, depth=2, output_activation="sigmoid"),
        describe=hash_levels,
    )


# The rows, in table order. Adding an encoder or network is one entry here.
VARIANTS: dict[str, Variant] = {
    "none": Variant(lambda p: IdentityEncoding(in_dim=2), mapping="none"),
    "basic": Variant(lambda p: BasicEncoding(in_dim=2), mapping="basic"),
    "positional": Variant(
        lambda p: PositionalEncoding(
            in_dim=2, num_frequencies=p.settings.num_features // 2, sigma=2.0**p.positional_scale, endpoint=True, minus_one=True
        ),
        mapping="positional",
        describe=lambda p, e: f"scale {p.positional_scale:g}",
    ),
    "gaussian": Variant(
        lambda p: GaussianEncoding(in_dim=2, num_features=p.settings.num_features, sigma=p.gaussian_sigma, seed=p.seed),
        mapping="gaussian",
        describe=lambda p, e: f"σ = {p.gaussian_sigma:g}",
    ),
    # SIREN's image network (4 sine layers, ω₀ = 30) on raw coordinates; lr as configs/image_siren.yaml
    "siren": Variant(
        lambda p: IdentityEncoding(in_dim=2),
        lr=5e-4,
        network=lambda p: partial(SIREN, width=p.width, depth=4),
        describe=lambda p, e: f"4 × {p.width}, ω₀ = 30",
    ),
    # T = 2^19 holds every level of a 128² training grid densely; T = 2^12 hashes the finer ones
    "hashgrid": hashgrid_variant(19),
    "hashgrid_hashed": hashgrid_variant(12),
    # Architectures on raw coordinates, each with the layer sizes and settings of its released code
    # (sources in each class's docstring and docs/architectures.md; the same as configs/image_<name>.yaml).
    # WIRE: 4 complex-Gabor layers, ω₀ = 20, s₀ = 10 (liuzhen0212/FINER run_wire.sh); lr 1e-3, as the released
    # 5e-3 stalls on the default image (configs/image_wire.yaml)
    "wire": Variant(
        lambda p: IdentityEncoding(in_dim=2),
        lr=1e-3,
        network=lambda p: partial(WIRE, width=p.width, depth=4, first_omega_0=20.0, hidden_omega_0=20.0, scale=10.0),
        describe=lambda p, e: f"4 × {p.width} (complex {int(p.width / math.sqrt(2))}), ω₀ = 20, s₀ = 10",
    ),
    # Gaussian activation exp(−(s z)²), s = 10 (vishwa91/wire get_INR), lr 2e-3 (wire_image_denoise.py: 1e-3 – 2e-3)
    "gauss": Variant(
        lambda p: IdentityEncoding(in_dim=2),
        lr=2e-3,
        network=lambda p: partial(GaussMLP, width=p.width, depth=4, scale=10.0),
        describe=lambda p, e: f"4 × {p.width}, s = 10",
    ),
    # FINER: ω₀ = 30, PyTorch's first-layer bias, lr 5e-4 (liuzhen0212/FINER run_finer.sh)
    "finer": Variant(
        lambda p: IdentityEncoding(in_dim=2),
        lr=5e-4,
        network=lambda p: partial(FINER, width=p.width, depth=4, first_omega_0=30.0, hidden_omega_0=30.0),
        describe=lambda p, e: f"4 × {p.width}, ω₀ = 30",
    ),
    # BACON: band limit = the training pixels' Nyquist, N/4 cycles per unit (train_img.py), split as its image
    # experiment; lr 5e-3 (config/img/bacon.ini)
    "bacon": Variant(
        lambda p: IdentityEncoding(in_dim=2),
        lr=5e-3,
        network=lambda p: partial(BACON, width=p.width, depth=4, bandwidth=p.resolution / 4, filter_fractions=BACON_FRACTIONS),
        describe=lambda p, e: f"4 × {p.width}, band limit {bacon_band_limit(p)} cycles/unit",
    ),
    # GaborNet: 3 × 256, 4 filters, input_scale 256, α = 6, β = 1, lr 1e-2 (mfn/experiments/image_rep.py)
    "mfn": Variant(
        lambda p: IdentityEncoding(in_dim=2),
        lr=1e-2,
        network=lambda p: partial(MFN, width=p.width, depth=3, filter="gabor", input_scale=256.0),
        describe=lambda p, e: f"GaborNet 3 × {p.width}, input_scale 256",
    ),
}
# The rows run when --encoders is not given: the coordinate encodings (``--encoders all`` runs every row).
ENCODER_ROWS = ("none", "basic", "positional", "gaussian", "siren", "hashgrid", "hashgrid_hashed")


def bacon_band_limit(p: Protocol) -> int:
    """BACON's band limit M = Σ_i round(B f_i), B = N/4, as ``BACON.max_frequency`` (64 at 256²)."""
    return sum(round(p.resolution / 4 * f) for f in BACON_FRACTIONS)


def build_model(variant: Variant, protocol: Protocol, out_channels: int) -> ImageFitting:
    encoder = variant.encoder(protocol)
    return ImageFitting(
        encoder=encoder,
        network=variant.network(protocol),
        out_channels=out_channels,
        optimizer=partial(torch.optim.Adam, lr=variant.learning_rate(protocol), **dict(variant.adam)),
    )


def fit_row(model, dm: GridDataModule, name: str, out: Path, steps: int, log_every: int, callbacks: list) -> float:
    """Train one comparison row through a Lightning Trainer (TensorBoard run ``out/tb/name``, no checkpoints,
    no validation: rows are scored once at the end, as the paper reports final PSNR); returns the fit's wall
    seconds and leaves the model in eval mode."""
    trainer = L.Trainer(
        max_steps=steps,
        logger=TensorBoardLogger(str(out / "tb"), name=name, version=0),
        callbacks=callbacks,
        limit_val_batches=0,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        log_every_n_steps=log_every,
        devices=1,
    )
    start = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    seconds = time.perf_counter() - start
    model.eval()
    return seconds


def run_variant(
    name: str, variant: Variant, protocol: Protocol, make_data: Callable[[], GridDataModule], out: Path
) -> dict[str, Any]:
    """Train one variant through a Lightning Trainer and return its scores and spectral history."""
    L.seed_everything(protocol.seed, verbose=False)
    dm = make_data()
    model = build_model(variant, protocol, dm.out_channels)
    spectral = SpectralBiasCallback(num_bands=protocol.num_bands)
    progress = HeldOutPSNRHistory(every_n_steps=protocol.steps_per_epoch)
    seconds = fit_row(model, dm, name, out, protocol.steps, protocol.steps_per_epoch, [spectral, progress])
    scores = score_prediction(model.render(), dm.values_grid(), dm, protocol.num_bands)
    h = spectral.history_arrays()
    return {
        "encoder": name,
        "kind": "model",
        "setting": variant.describe(protocol, model.encoder),
        **scores,
        "seconds": seconds,
        "ms_per_step": 1000.0 * seconds / protocol.steps,
        "params": sum(p.numel() for p in model.parameters()),
        "lr": variant.learning_rate(protocol),
        **progress.reached(protocol.target_psnr),
        "history": {k: h[k].tolist() for k in ("steps", "edges", "errors", "dc")},
        "progress": progress.history,
    }


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    prog = program_name("inr-compare", "python -m inr.experiments.compare_encoders")
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--image", help="image file (PNG/JPEG/TIFF/BMP); default data/astronaut.png")
    source.add_argument("--text", action="store_true", help="a generated text image instead of a file")
    parser.add_argument("--text-seed", type=int, default=0, help="which generated text image (with --text)")
    parser.add_argument(
        "--kind", choices=KINDS, help="the paper's settings for natural images (default) or text (default with --text)"
    )
    parser.add_argument("--out", default="outputs/compare_encoders", help="output directory")
    parser.add_argument(
        "--paper",
        action="store_true",
        help="the paper's resolution and steps (512², 2000): a GPU job; prints its expected time first",
    )
    parser.add_argument(
        "--estimate-only", action="store_true", help="print the expected time of the run (from a short probe) and stop"
    )
    parser.add_argument(
        "--resolution", type=int, help=f"image side after a centre crop (default {CPU_RESOLUTION}, the paper's with --paper)"
    )
    parser.add_argument("--steps", type=int, help=f"training steps (default {CPU_STEPS}, the paper's with --paper)")
    parser.add_argument(
        "--encoders",
        default=",".join(ENCODER_ROWS),
        help=f"comma-separated subset of {', '.join(VARIANTS)}, or all (default: {','.join(ENCODER_ROWS)})",
    )
    parser.add_argument(
        "--target-psnr",
        type=float,
        default=None,
        help="held-out PSNR (dB) whose first crossing the table reports (default: bilinear interpolation's)",
    )
    parser.add_argument("--width", type=int, default=256, help="hidden width of the MLP")
    parser.add_argument("--init", choices=("paper", "torch"), default="paper", help="initialisation of the MLP rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    args.names = list(VARIANTS) if args.encoders.strip() == "all" else [n.strip() for n in args.encoders.split(",") if n.strip()]
    unknown = [n for n in args.names if n not in VARIANTS]
    if unknown or not args.names:
        parser.error(f"--encoders: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(VARIANTS)}")
    for key in ("resolution", "steps", "width", "threads"):
        if getattr(args, key) is not None and getattr(args, key) < (8 if key == "resolution" else 1):
            parser.error(f"--{key} is too small: {getattr(args, key)}")
    if args.target_psnr is not None and not math.isfinite(args.target_psnr):
        parser.error(f"--target-psnr must be finite, got {args.target_psnr}")
    return args


def protocol_from_args(args: argparse.Namespace) -> Protocol:
    """CPU-sized defaults, the paper's resolution and steps with ``--paper``; explicit values win."""
    kind = args.kind or ("text" if args.text else "natural")
    paper = PAPER_SETTINGS[kind]
    return Protocol(
        resolution=args.resolution or (paper.resolution if args.paper else CPU_RESOLUTION),
        steps=args.steps or (paper.steps if args.paper else CPU_STEPS),
        kind=kind,
        width=args.width,
        depth=paper.depth,
        init=args.init,
        seed=args.seed,
        target_psnr=TARGET_PSNR if args.target_psnr is None else args.target_psnr,
    )


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison; print the Markdown table; return the rows (models with histories, then baselines)."""
    args = parse_args(argv)
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    with torch_threads(args.threads):
        return compare(args)


def compare(args: argparse.Namespace) -> list[dict[str, Any]]:
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
        probe = make_data()
        probe.setup("fit")  # bad input fails here, before anything is written
        if args.paper or args.estimate_only:
            seconds, per_step = estimate_seconds({n: partial(build_model, VARIANTS[n]) for n in args.names}, protocol, make_data)
            steps = ", ".join(f"{n} {1000 * s:.1f}" for n, s in per_step.items())
            print(
                f"expected time: about {format_duration(seconds)} for {len(args.names)} rows × {protocol.steps} steps "
                f"at {protocol.resolution}² (an estimate: measured ms/step {steps}, from a short probe, "
                "scaled; spectral measurements and scoring add to it)",
                file=sys.stderr,
                flush=True,
            )
            if args.estimate_only:
                return []
        baselines = baseline_rows(probe, protocol.num_bands)
        if args.target_psnr is None:  # the networks' target: beat interpolation of their own training pixels
            bilinear = next(r for r in baselines if r["encoder"] == "bilinear")
            protocol = replace(protocol, target_psnr=round(float(bilinear["test_psnr"]), 2))
        out.mkdir(parents=True, exist_ok=True)
        if args.text:
            save_text_image(out / "text.png", protocol.resolution, args.text_seed)
        rows = []
        for name in args.names:
            rows.append(run_variant(name, VARIANTS[name], protocol, make_data, out))
            r = rows[-1]
            print(
                f"{name}: train {r['train_psnr']:.2f} dB, test {r['test_psnr']:.2f} dB, {r['seconds']:.0f} s, "
                f"target {protocol.target_psnr:g} dB at step {r['target_step']}",
                file=sys.stderr,
                flush=True,
            )
        rows += baselines
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    table = markdown_table(rows)
    title = f"{label}, {protocol.resolution}², {protocol.steps} steps, the paper's {protocol.kind} settings"
    target = (
        f"Target: held-out PSNR ≥ {protocol.target_psnr:g} dB"
        + (" (bilinear interpolation's)" if args.target_psnr is None else "")
        + f", checked every {protocol.steps_per_epoch} steps; its time "
        "counts training steps only (forward, backward, update), not the measurements."
    )
    (out / "results.md").write_text(f"{title}\n\n{table}\n\n{target}\n\n{paper_note(protocol.kind)}\n")
    saved = {"source": label, "protocol": asdict(protocol), "paper_settings": json_safe(asdict(protocol.settings)), "rows": rows}
    (out / "results.json").write_text(json.dumps(json_safe(saved), indent=1, allow_nan=False))
    histories = {r["encoder"]: r["history"] for r in rows if "history" in r}
    if histories:
        comparison_figure(histories, title=f"spectral bias: {title}").savefig(out / "spectral_heatmaps.png", dpi=110)
    print(table)
    return rows


if __name__ == "__main__":
    main()
