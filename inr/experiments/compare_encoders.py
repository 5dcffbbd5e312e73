"""Encoder comparison on one image, one command: every method of the registry (``inr.methods.registry``) trained with the 2D image
protocol of Tancik et al. 2020, beside the classical baselines, as a Markdown table and spectral-bias heatmaps.

    python -m inr.experiments.compare_encoders --image data/astronaut.png    # CPU-sized defaults (128², 300 steps)
    python -m inr.experiments.compare_encoders --image data/astronaut.png --resolution 256 --target-psnr 25
    python -m inr.experiments.compare_encoders --text                        # a generated text image
    python -m inr.experiments.compare_encoders --image PATH --paper          # 512², 2000 steps (a GPU)
    python -m inr.experiments.compare_encoders --text --paper --estimate-only   # the expected time, nothing else
    python -m inr.experiments.compare_encoders --methods wire,gauss,finer,bacon,siren,gaussian --image data/astronaut.png

Each row trains through the framework (Lightning Trainer, ``ImageFitting``, ``ImageDataModule``): every_other split
(train on [::2, ::2], test on [1::2, 1::2]), full-batch Adam, the paper's settings for the image kind
(``protocols.PROTOCOLS``: learning rate per mapping, mapping scales, 3 × 256 ReLU MLP with sigmoid output and the
paper's initialisation); the other networks (SIREN, WIRE, Gaussian activations, FINER, BACON, an MFN) on raw
coordinates with their released code's settings, the hash grid with Instant-NGP's (``methods.METHODS``). The
baselines (bilinear and bicubic interpolation of the training pixels, their mean colour), the spectral and held-out
PSNR histories and the target (default: bilinear interpolation's held-out PSNR) are ``heldout``'s. Writes to
``--out``: ``results.md``, ``results.json``, ``spectral_heatmaps.png`` and one TensorBoard run per row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from jsonargparse import ArgumentParser

from inr.errors import InputError
from inr.experiments import comparison
from inr.experiments.comparison import Context
from inr.experiments.heldout import HeldOut, HeldOutComparison
from inr.methods.protocols import KINDS, MAPPINGS, PROTOCOLS
from inr.methods.registry import ENCODER_ROWS, METHODS
from inr.run.program import program_name

# CPU-sized defaults: 128² (64² training pixels) and 300 steps, 9–26 s per row on 2 cores (the six
# architectures of docs/benchmark.md: 1.6 min); ``--resolution 256`` is the fuller CPU comparison of the
# docs' tables (4× the pixels), ``--paper`` the paper's 512² and 2000 steps (a GPU).
CPU_RESOLUTION, CPU_STEPS = 128, 300


@dataclass(frozen=True)
class ImageProtocol(HeldOut):
    """``HeldOut`` on an image: its kind (the paper's settings), the file or the generated text image's seed."""

    kind: str = "natural"
    image: Optional[str] = None
    text_seed: Optional[int] = None


class Encoders(HeldOutComparison):
    name, doc = "compare_encoders", __doc__
    prog = program_name("inr-compare", "python -m inr.experiments.compare_encoders")
    methods = tuple(n for n, m in METHODS.items() if 2 in m.dims)
    default_methods = ENCODER_ROWS

    def available(self, args: Any) -> tuple[str, ...]:
        return tuple(n for n, m in METHODS.items() if 2 in m.dims)  # the registry as it is now (a test adds to it)

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--image", type=Optional[str], default=None, help="image file (PNG/JPEG/TIFF/BMP); null: data/astronaut.png"
        )
        parser.add_argument("--text", action="store_true", help="a generated text image instead of a file")
        parser.add_argument("--text-seed", type=int, default=0, help="which generated text image (with --text)")
        parser.add_argument(
            "--kind", type=Optional[Literal[KINDS]], default=None, help="the paper's settings (null: text with --text)"
        )
        super().arguments(parser)

    def protocol(self, args: Any) -> ImageProtocol:
        """CPU-sized defaults, the paper's resolution and steps with ``--paper``; explicit values win."""
        if args.text and args.image is not None:
            raise InputError("--image and --text: choose one")
        kind = args.kind or ("text" if args.text else "natural")
        paper = PROTOCOLS[kind]
        resolution = args.resolution or (paper.resolution if args.paper else CPU_RESOLUTION)
        if resolution < 8:
            raise InputError(f"--resolution is too small: {resolution}")
        return self.held_out(
            args,
            paper,
            ImageProtocol,
            kind=kind,
            image=None if args.text else args.image,
            text_seed=args.text_seed if args.text else None,
            steps=args.steps or (paper.steps if args.paper else CPU_STEPS),
            resolution=resolution,
            ndim=2,
            train_side=resolution // 2,
            output_activation="sigmoid",
            data_range=1.0,
            clamp=(0.0, 1.0),
            depth=paper.depth,
        )

    def data(self, ctx: Context) -> Any:
        p = ctx.p
        if p.text_seed is not None:
            from inr.data.text import TextImageDataModule

            return TextImageDataModule(resolution=p.resolution, text_seed=p.text_seed)
        from inr.data.image import ImageDataModule

        return ImageDataModule(path=p.image, resolution=p.resolution, split="every_other")

    def task(self, ctx: Context) -> tuple[type, dict[str, Any]]:
        from inr.tasks.image import ImageFitting

        return ImageFitting, {"out_channels": ctx.data.out_channels}

    def title(self, p: ImageProtocol) -> str:
        source = f"text image (seed {p.text_seed})" if p.text_seed is not None else p.image or "data/astronaut.png"
        return f"{source}, {p.resolution}², {p.steps} steps, the paper's {p.kind} settings{self.spread(p)}"

    def notes(self, p: ImageProtocol, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        return f"{self.target_note(p)}\n\n{paper_note(p.kind)}"

    def finish(self, p: ImageProtocol, rows: list[dict[str, Any]], out: Path) -> None:
        if p.text_seed is not None:
            from inr.data.text import save_text_image

            save_text_image(out / "text.png", p.resolution, p.text_seed)
        super().finish(p, rows, out)


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
    """Run the comparison; print and write the table; return the rows (models, then baselines)."""
    return comparison.main(Encoders(), argv)


if __name__ == "__main__":
    main()
