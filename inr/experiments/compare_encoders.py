"""Encoder comparison on one image, one command: every method of the registry (``inr.experiments.methods``) trained with the 2D image
protocol of Tancik et al. 2020, beside the classical baselines, as a Markdown table and spectral-bias heatmaps.

    python -m inr.experiments.compare_encoders --image data/astronaut.png    # CPU-sized defaults (128², 300 steps)
    python -m inr.experiments.compare_encoders --image data/astronaut.png --resolution 256 --target-psnr 25
    python -m inr.experiments.compare_encoders --text                        # a generated text image
    python -m inr.experiments.compare_encoders --image PATH --paper          # 512², 2000 steps (a GPU)
    python -m inr.experiments.compare_encoders --text --paper --estimate-only   # the expected time, nothing else
    python -m inr.experiments.compare_encoders --encoders wire,gauss,finer,bacon,siren,gaussian --image data/astronaut.png

Each variant trains through the framework (Lightning Trainer, ``ImageFitting``, ``ImageDataModule``,
``SpectralBiasCallback``): every_other split (train on [::2, ::2], test on [1::2, 1::2]), full-batch Adam,
the paper's settings for the image kind (``protocols.PROTOCOLS``: learning rate per mapping, mapping
scales, 3 × 256 ReLU MLP with sigmoid output and the paper's initialisation); the other networks (SIREN, WIRE,
Gaussian activations, FINER, BACON, an MFN) on raw coordinates with their released code's settings, the hash
grid with Instant-NGP's (``methods.METHODS``). The baselines (``baselines``) are scored the same way. Every row also records its
held-out PSNR every 10 steps (``progress``) and the first step and training time at which it reached
``--target-psnr`` (default: bilinear interpolation's held-out PSNR on the same pixels, the score a network
has to beat to be worth more than interpolating its training pixels). Writes to ``--out``: ``results.md``,
``results.json``, ``spectral_heatmaps.png`` and one TensorBoard run per variant (with its
``spectral_history.npz``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Optional

import lightning as L
from lightning.pytorch.loggers import TensorBoardLogger

from inr.callbacks.spectral import SpectralBiasCallback
from inr.data.image import ImageDataModule
from inr.data.module import GridDataModule
from inr.data.text import TextImageDataModule, save_text_image
from inr.experiments.baselines import baseline_rows, score_prediction
from inr.experiments.estimate import estimate_seconds
from inr.experiments.methods import ENCODER_ROWS, METHODS, Resolved, Setting, method_names
from inr.experiments.progress import HeldOutPSNRHistory
from inr.experiments.protocols import KINDS, MAPPINGS, PROTOCOLS, given_bands
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
    trained_numbers,
    write_results,
)
from inr.io.allocator import retain_freed_memory
from inr.io.threads import torch_threads
from inr.run.program import program_name
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

# (header, row key, format): Δ are the relative errors of inr.spectral (DC apart, low/high = lower/upper
# half of the 16 bands) on the held-out pixels' grid, then on the training pixels' grid. The target is a
# held-out PSNR (``Protocol.target_psnr``): the first measured step reaching it and the training seconds
# until then; — when a row never reached it.
COLUMNS = (
    Column("row", "method", "s"),
    Column("setting", "setting", "s"),
    Column("lr", "lr", ".0e", spread=False),  # a setting: the same on every seed
    Column("train PSNR (dB)", "train_psnr", ".2f"),
    Column("test PSNR (dB)", "test_psnr", ".2f"),
    Column("test SSIM", "test_ssim", ".3f"),
    Column("test Δ DC", "test_dc_error", ".3f"),
    Column("test Δ low", "test_low_error", ".3f"),
    Column("test Δ high", "test_high_error", ".3f"),
    Column("train Δ low", "train_low_error", ".3f"),
    Column("train Δ high", "train_high_error", ".3f"),
    Column("time (s)", "seconds", ".0f"),
    Column("ms/step", "ms_per_step", ".0f"),
    Column("params", "params", ","),
    Column("steps to target", "target_step", "d"),
    Column("time to target (s)", "target_seconds", ".1f"),
)
NUMERIC = tuple(c.key for c in COLUMNS if c.spec != "s")


@dataclass(frozen=True)
class Protocol:
    """What every row shares: image size, steps, network size and init, seed and the image kind."""

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
    sigma: Optional[float] = None  # given σ / positional scale: used as they are at this size (no grid rule)
    scale: Optional[float] = None

    @property
    def settings(self):
        return given_bands(PROTOCOLS[self.kind], self.sigma, self.scale, (self.resolution // 2) / 2)

    @property
    def positional_scale(self) -> float:
        return self.settings.positional_scale

    @property
    def gaussian_sigma(self) -> float:
        return self.settings.gaussian_sigma

    def setting(self) -> Setting:
        """Where the methods run: 2-D coordinates, the training pixels of the every_other split, this kind's protocol."""
        return Setting(
            in_dim=2,
            train_side=self.resolution // 2,
            protocol=self.settings,
            output_activation="sigmoid",
            width=self.width,
            depth=self.depth,
            init=self.init,
            seed=self.seed,
            steps=self.steps,
        )


def resolve(name: str, protocol: Protocol) -> Resolved:
    return METHODS[name].resolve(protocol.setting())


def build_model(spec: Resolved, out_channels: int, network: Optional[NetworkFactory] = None) -> ImageFitting:
    """The method's model; ``network`` replaces the registry's network (same encoder, optimizer and schedule)."""
    encoder, registered, optimizer = spec.build()
    return ImageFitting(
        encoder=encoder,
        network=network or registered,
        out_channels=out_channels,
        optimizer=optimizer,
        scheduler=spec.build_scheduler(),
    )


def run_method(
    name: str,
    protocol: Protocol,
    make_data: Callable[[], GridDataModule],
    out: Path,
    network: Optional[NetworkFactory] = None,
    row: Optional[str] = None,
) -> dict[str, Any]:
    """Train one method through a Lightning Trainer and return its scores and spectral history.

    ``network`` swaps the registry's network for another built the same way (``(in_dim, out_dim) -> nn.Module``),
    reported as ``row``: another implementation of the method, trained under the method's own settings.
    """
    L.seed_everything(protocol.seed, verbose=False)
    dm = make_data()
    spec = resolve(name, protocol)
    model = build_model(spec, dm.out_channels, network)
    row = row or name
    spectral = SpectralBiasCallback(num_bands=protocol.num_bands)
    progress = HeldOutPSNRHistory(every_n_steps=protocol.steps_per_epoch)
    logger = TensorBoardLogger(str(out / "tb"), name=row, version=f"seed_{protocol.seed}")
    seconds = fit_row(
        model,
        dm,
        protocol.steps,
        [spectral, progress],
        logger,
        label=f"{row} (seed {protocol.seed})",
        log_every_n_steps=protocol.steps_per_epoch,
    )
    scores = score_prediction(model.render(), dm.values_grid(), dm, protocol.num_bands)
    h = spectral.history_arrays()
    return {
        "method": row,
        "kind": "model",
        "seed": protocol.seed,
        "setting": spec.describe,
        **scores,
        "seconds": seconds,
        "steps": protocol.steps,
        "ms_per_step": 1000.0 * seconds / protocol.steps,
        "params": trained_numbers(model),
        "lr": spec.lr,
        **progress.reached(protocol.target_psnr),
        "history": {k: h[k].tolist() for k in ("steps", "edges", "errors", "dc")},
        "progress": progress.history,
    }


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    prog = program_name("inr-compare", "python -m inr.experiments.compare_encoders")
    parser = ExperimentParser(__name__, __doc__, prog=prog)
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
        help=f"comma-separated subset of {', '.join(METHODS)}, or all (default: {','.join(ENCODER_ROWS)})",
    )
    parser.add_argument(
        "--target-psnr",
        type=float,
        default=None,
        help="held-out PSNR (dB) whose first crossing the table reports (default: bilinear interpolation's)",
    )
    parser.add_argument("--sigma", type=float, help="Gaussian σ at this size, as given (default: the kind's, by the grid rule)")
    parser.add_argument(
        "--scale", type=float, help="positional scale at this size, as given (default: the kind's, by the grid rule)"
    )
    parser.add_argument("--width", type=int, default=256, help="hidden width of the MLP")
    parser.add_argument("--init", choices=("paper", "torch"), default="paper", help="initialisation of the MLP rows")
    parser.add_argument("--seed", type=int, default=0, help="seed of the rows (weights, Gaussian B)")
    parser.add_argument("--seeds", type=int, default=None, help="repeat every row with seeds seed … seed+S−1: mean ± std")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    try:
        args.names = method_names(args.encoders, tuple(n for n, m in METHODS.items() if 2 in m.dims))
    except ValueError as exc:
        parser.error(f"--encoders: {exc}")
    for key in ("resolution", "steps", "width", "threads", "seeds"):
        if getattr(args, key) is not None and getattr(args, key) < (8 if key == "resolution" else 1):
            parser.error(f"--{key} is too small: {getattr(args, key)}")
    if args.target_psnr is not None and not math.isfinite(args.target_psnr):
        parser.error(f"--target-psnr must be finite, got {args.target_psnr}")
    for key in ("sigma", "scale"):
        if getattr(args, key) is not None and not (math.isfinite(getattr(args, key)) and getattr(args, key) > 0):
            parser.error(f"--{key} must be positive, got {getattr(args, key)}")
    return args


def protocol_from_args(args: argparse.Namespace) -> Protocol:
    """CPU-sized defaults, the paper's resolution and steps with ``--paper``; explicit values win."""
    kind = args.kind or ("text" if args.text else "natural")
    paper = PROTOCOLS[kind]
    return Protocol(
        resolution=args.resolution or (paper.resolution if args.paper else CPU_RESOLUTION),
        steps=args.steps or (paper.steps if args.paper else CPU_STEPS),
        kind=kind,
        width=args.width,
        depth=paper.depth,
        init=args.init,
        seed=args.seed,
        target_psnr=TARGET_PSNR if args.target_psnr is None else args.target_psnr,
        sigma=args.sigma,
        scale=args.scale,
    )


def paper_note(kind: str) -> str:
    """What the paper used and reports for this image kind, to read the table against.

    Example:
        >>> paper_note("text").splitlines()[0]
        "The paper's text settings: lr none 1e-03, basic 1e-03, positional 1e-03, gaussian 1e-03; positional scale 5, Gaussian σ = 14, m = 256; 3 × 256 ReLU MLP, sigmoid output, stax initialisation; 2000 full-batch steps at 512²."
    """
    s = PROTOCOLS[kind]
    lrs = ", ".join(f"{m} {s.lr[m]:.0e}" for m in MAPPINGS)
    reported = ", ".join(f"{m} {s.test_psnr[m]:.2f}" for m in MAPPINGS)
    return (
        f"The paper's {kind} settings: lr {lrs}; positional scale {s.positional_scale:g}, Gaussian σ = {s.gaussian_sigma:g}, "
        f"m = {s.num_features}; {s.depth} × {s.width} ReLU MLP, sigmoid output, stax initialisation; {s.steps} full-batch "
        f"steps at {s.resolution}².\n"
        f"It reports held-out PSNR (dB; Tancik et al. 2020, Table 1, mean over {s.dataset}): {reported}."
    )


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison; print the Markdown table; return the rows (models with histories, then baselines)."""
    args = parse_args(argv)
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    rows: list[dict[str, Any]] = []
    with torch_threads(args.threads):
        return command(lambda: compare(args, rows), lambda: markdown_table(summarise(rows, NUMERIC), COLUMNS) if rows else "")


def compare(args: argparse.Namespace, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    protocol = protocol_from_args(args)
    silence_lightning()
    if args.text:
        label = f"text image (seed {args.text_seed})"
        make_data = partial(TextImageDataModule, resolution=protocol.resolution, text_seed=args.text_seed)
    else:
        label = args.image or "data/astronaut.png"
        make_data = partial(ImageDataModule, path=args.image, resolution=protocol.resolution, split="every_other")
    probe = make_data()
    probe.setup("fit")  # bad input fails here, before anything is written
    if args.paper or args.estimate_only:
        factories = {n: (lambda p, c, n=n: build_model(resolve(n, p), c)) for n in args.names}
        seconds, per_step = estimate_seconds(factories, protocol, make_data)
        steps = ", ".join(f"{n} {1000 * s:.1f}" for n, s in per_step.items())
        print(
            f"expected time: about {format_seconds(seconds)} for {len(args.names)} rows × {protocol.steps} steps "
            f"at {protocol.resolution}² (an estimate: measured ms/step {steps}, from a short probe, "
            "scaled; spectral measurements and scoring add to it)",
            file=sys.stderr,
            flush=True,
        )
        if args.estimate_only:
            return []
    out = prepare_out(args.out)
    baselines = baseline_rows(probe, protocol.num_bands)
    if args.target_psnr is None:  # the networks' target: beat interpolation of their own training pixels
        bilinear = next(r for r in baselines if r["method"] == "bilinear")
        protocol = replace(protocol, target_psnr=round(float(bilinear["test_psnr"]), 2))
    if args.text:
        save_text_image(out / "text.png", protocol.resolution, args.text_seed)
    seeds = [protocol.seed + k for k in range(args.seeds or 1)]
    progress = RowProgress(len(args.names) * len(seeds))
    for name in args.names:
        for seed in seeds:
            rows.append(run_method(name, replace(protocol, seed=seed), make_data, out))
            r = rows[-1]
            progress.row(
                f"{name} (seed {seed})",
                f"train {r['train_psnr']:.2f} dB, test {r['test_psnr']:.2f} dB, {r['seconds']:.0f} s, "
                f"target {protocol.target_psnr:g} dB at step {r['target_step']}",
            )
    all_rows = rows + baselines
    summary = summarise(all_rows, NUMERIC)
    table = markdown_table(summary, COLUMNS)
    spread = f", mean ± std over seeds {seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else f", seed {seeds[0]}"
    title = f"{label}, {protocol.resolution}², {protocol.steps} steps, the paper's {protocol.kind} settings{spread}"
    target = (
        f"Target: held-out PSNR ≥ {protocol.target_psnr:g} dB"
        + (" (bilinear interpolation's)" if args.target_psnr is None else "")
        + f", checked every {protocol.steps_per_epoch} steps; its time "
        "counts training steps only (forward, backward, update), not the measurements."
    )
    saved = {
        "source": label,
        "protocol": asdict(protocol),
        "paper_settings": asdict(PROTOCOLS[protocol.kind]),
        "settings": asdict(protocol.settings),  # at this grid: the grid rule's, or as given
        "seeds": seeds,
        "rows": all_rows,
        "summary": summary,
    }
    write_results(out, f"{title}\n\n{table}\n\n{target}\n\n{paper_note(protocol.kind)}", saved)
    histories = {r["method"]: r["history"] for r in rows if "history" in r and r["seed"] == seeds[0]}
    if histories:
        comparison_figure(histories, title=f"spectral bias: {title}").savefig(out / "spectral_heatmaps.png", dpi=110)
    print(table)
    return all_rows


if __name__ == "__main__":
    main()
