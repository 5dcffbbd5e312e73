"""Classical baselines of the image protocol: the held-out pixels predicted from the training pixels without a
network (constant mean colour, bilinear and bicubic interpolation), and the scores every comparison row gets.

With the ``every_other`` split the training pixels sit at v = 2i/N and the held-out ones at (2i+1)/N, halfway
between training pixels on both axes; interpolating the (N/2)² training image is the classical answer to
the same question the networks answer, so every table of the comparison carries these rows.

    python -m inr.experiments.baselines --image data/astronaut.png --image data/camera.png --text 0,1,2

prints, per image, the share of its energy the training pixels cannot hold and the baselines' held-out PSNR.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any, Optional

import torch.nn.functional as F
from torch import Tensor
from torchmetrics.functional.image import peak_signal_noise_ratio, structural_similarity_index_measure

from inr.errors import InputError
from inr.spectral import aliased_energy_fraction, spectral_summary


def constant_mean(train: Tensor, shape: tuple[int, int]) -> Tensor:
    """f = the mean colour of the training pixels everywhere: (C, h, w) -> (C, *shape)."""
    return train.mean(dim=(1, 2), keepdim=True).expand(train.shape[0], *shape).clone()


def interpolate_every_other(train: Tensor, shape: tuple[int, int], mode: str) -> Tensor:
    """The full grid from the training pixels [::2, ::2] by ``mode`` (bilinear or bicubic), (C, h, w) -> (C, *shape).

    ``align_corners=True`` onto (2h − 1) × (2w − 1) puts training pixel j exactly on output pixel 2j, so the
    training pixels are reproduced and the held-out pixels (odd rows and columns) are interpolated halfway.
    The last odd row and column lie beyond the last training pixel and repeat its neighbour (edge
    replication). Bicubic is PyTorch's (Keys' kernel with a = −0.75, edge-replicated support); values are
    clamped to [0, 1] as ``ImageFitting`` clamps a network's output.
    """
    height, width = shape
    if (height + 1) // 2 != train.shape[1] or (width + 1) // 2 != train.shape[2]:
        raise ValueError(f"training pixels {tuple(train.shape[1:])} are not the [::2, ::2] samples of a {shape} grid")
    up = F.interpolate(train[None], size=(2 * train.shape[1] - 1, 2 * train.shape[2] - 1), mode=mode, align_corners=True)
    up = F.pad(up, (0, width - up.shape[-1], 0, height - up.shape[-2]), mode="replicate")  # (1, C, 2h−1, 2w−1) -> (1, C, H, W)
    return up[0].clamp(0.0, 1.0)


# Baselines by name, in table order: (training pixels (C, h, w), full shape) -> prediction (C, H, W).
BASELINES: dict[str, Callable[[Tensor, tuple[int, int]], Tensor]] = {
    "constant": constant_mean,
    "bilinear": lambda train, shape: interpolate_every_other(train, shape, "bilinear"),
    "bicubic": lambda train, shape: interpolate_every_other(train, shape, "bicubic"),
}
BASELINE_SETTINGS = {
    "constant": "mean colour of the training pixels",
    "bilinear": "interpolation of the training pixels",
    "bicubic": "interpolation of the training pixels (a = −0.75)",
}


def split_grid(values: Tensor, index: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The values of a (C, *grid) tensor at flat ``index``, as a (C, *shape) grid."""
    flat = values.reshape(values.shape[0], -1)  # (C, *grid) -> (C, numel)
    return flat[:, index.to(flat.device)].reshape(values.shape[0], *shape)


def psnr(pred: Tensor, target: Tensor) -> float:
    """PSNR = 10 log10(1 / MSE) in dB (data range 1), ∞ for an exact prediction."""
    return float(peak_signal_noise_ratio(pred, target, data_range=1.0))


def score_prediction(pred: Tensor, target: Tensor, dm: Any, num_bands: int = 16) -> dict[str, Any]:
    """Scores of a prediction on the whole grid, (C, *shape) against the target (C, *shape), the same for a
    trained network (its ``render()``) and a baseline: PSNR of the training and held-out pixels, SSIM of the
    held-out sub-image, and ``spectral_summary`` (DC, low, high) on the training grid and on the held-out
    grid. ``dm`` is the GridDataModule whose split defines the two grids."""
    pred, target = pred.detach().double().cpu(), target.double().cpu()
    train_p, train_t = (split_grid(x, dm.train_index, dm.train_shape) for x in (pred, target))
    test_p, test_t = (split_grid(x, dm.test_index, dm.test_shape) for x in (pred, target))
    train_s = spectral_summary(train_p, train_t, num_bands=num_bands)
    test_s = spectral_summary(test_p, test_t, num_bands=num_bands)
    ssim = structural_similarity_index_measure(test_p[None].float(), test_t[None].float(), data_range=1.0)
    return {
        "train_psnr": psnr(train_p, train_t),
        "test_psnr": psnr(test_p, test_t),
        "test_ssim": float(ssim),
        "train_dc_error": float(train_s["dc"]),
        "train_low_error": float(train_s["low"]),
        "train_high_error": float(train_s["high"]),
        "test_dc_error": float(test_s["dc"]),
        "test_low_error": float(test_s["low"]),
        "test_high_error": float(test_s["high"]),
        "test_band_errors": test_s["errors"].tolist(),
    }


def baseline_rows(dm: Any, num_bands: int = 16) -> list[dict[str, Any]]:
    """One row per ``BASELINES`` entry for the image of ``dm`` (a 2D GridDataModule with the every_other
    split, set up), scored by ``score_prediction``."""
    if dm.ndim != 2 or dm.split != "every_other":
        raise ValueError("interpolation baselines need a 2D grid with the every_other split")
    target = dm.values_grid()  # (C, H, W)
    train = target[:, ::2, ::2]
    rows = []
    for name, predict in BASELINES.items():
        row = {
            "encoder": name,
            "kind": "baseline",
            "setting": BASELINE_SETTINGS[name],
            "params": 0,
            "seconds": math.nan,
            "ms_per_step": math.nan,
            "lr": math.nan,
        }
        row.update(score_prediction(predict(train, tuple(target.shape[1:])), target, dm, num_bands))
        rows.append(row)
    return rows


def describe_image(dm: Any) -> dict[str, Any]:
    """For a set-up every_other DataModule: the share of non-DC energy at or above the training grid's Nyquist
    (``aliased_energy_fraction``) and each baseline's held-out PSNR."""
    rows = baseline_rows(dm)
    return {
        "image": dm.describe(),
        "above_nyquist": aliased_energy_fraction(dm.values_grid()),
        **{f"{r['encoder']}_test_psnr": r["test_psnr"] for r in rows},
    }


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    from inr.data.image import ImageDataModule
    from inr.data.text import TextImageDataModule

    parser = argparse.ArgumentParser(prog="python -m inr.experiments.baselines", description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", action="append", default=[], help="an image file (repeatable)")
    parser.add_argument("--text", default="", help="comma-separated seeds of generated text images")
    parser.add_argument("--resolution", type=int, default=256)
    args = parser.parse_args(argv)
    modules = [ImageDataModule(path=p, resolution=args.resolution, split="every_other") for p in args.image]
    try:
        modules += [TextImageDataModule(resolution=args.resolution, text_seed=int(s)) for s in args.text.split(",") if s.strip()]
        print(
            f"| image ({args.resolution}²) | non-DC energy at or above the training Nyquist | "
            + " | ".join(f"{n} test PSNR (dB)" for n in BASELINES)
            + " |"
        )
        print("|---|---:|" + "---:|" * len(BASELINES))
        out = []
        for dm in modules:
            dm.setup("fit")
            out.append(describe_image(dm))
            psnrs = " | ".join(f"{out[-1][f'{n}_test_psnr']:.2f}" for n in BASELINES)
            print(f"| {out[-1]['image']} | {100 * out[-1]['above_nyquist']:.1f} % | {psnrs} |", flush=True)
    except (InputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return out


if __name__ == "__main__":
    main()
