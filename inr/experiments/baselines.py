"""Classical baselines of the every_other protocol — the held-out samples predicted from the training samples
without a network (the constant mean, linear and cubic interpolation) — for images, signals and volumes alike,
and the scores every comparison row gets.

The training samples sit at the even grid positions of every axis and the held-out ones at the odd positions,
halfway between training samples; interpolating the training grid is the classical answer to the question
the networks answer, so every table of a comparison carries these rows. Interpolation is separable: one 1D
pass per axis, so linear is bilinear on an image and trilinear in a volume, and cubic is Keys' cubic
convolution (a = −0.75, PyTorch's bicubic kernel) along each axis: bicubic on an image, tricubic in a volume.

    python -m inr.experiments.baselines --image data/astronaut.png --image data/camera.png --text 0,1,2

prints, per image, the share of its energy the training pixels cannot hold and the baselines' held-out PSNR.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from inr.errors import InputError
from inr.metrics import psnr, ssim
from inr.run.command import ExperimentParser
from inr.spectral import aliased_energy_fraction, spectral_summary


def constant_mean(train: Tensor, shape: tuple[int, ...]) -> Tensor:
    """f = the mean of the training samples everywhere: (C, *train) -> (C, *shape)."""
    dims = tuple(range(1, train.ndim))
    return train.mean(dim=dims, keepdim=True).expand(train.shape[0], *shape).clone()


def upsample_axis(x: Tensor, axis: int, size: int, mode: str) -> Tensor:
    """Samples j of ``axis`` moved to 2j, the midpoints interpolated (``linear`` or ``cubic``), then the last
    sample repeated up to ``size`` (edge replication): (..., n, ...) -> (..., size, ...), size ∈ {2n − 1, 2n}.

    Example:
        >>> upsample_axis(torch.tensor([[0.0, 1.0, 4.0]]), 1, 6, "linear")
        tensor([[0.0000, 0.5000, 1.0000, 2.5000, 4.0000, 4.0000]])
    """
    n = x.shape[axis]
    if size not in (2 * n - 1, 2 * n):
        raise ValueError(f"{n} training samples are not the [::2] samples of an axis of {size}")
    moved = x.movedim(axis, -1)
    flat = moved.reshape(1, -1, n)  # (..., n) -> (1, M, n): every line along the axis is one channel
    if n == 1:
        up = flat
    elif mode == "linear":
        up = F.interpolate(flat, size=2 * n - 1, mode="linear", align_corners=True)
    elif mode == "cubic":
        # PyTorch has no 1D cubic mode: a 1 × n image's bicubic resampling is the cubic convolution along its row
        up = F.interpolate(flat[:, :, None], size=(1, 2 * n - 1), mode="bicubic", align_corners=True)[:, :, 0]
    else:
        raise ValueError(f"unknown interpolation mode {mode!r}; choose linear or cubic")
    up = torch.cat([up, up[..., -1:].expand(*up.shape[:-1], size - up.shape[-1])], dim=-1)  # edge replication
    return up.reshape(*moved.shape[:-1], size).movedim(-1, axis)


def interpolate_every_other(
    train: Tensor, shape: tuple[int, ...], mode: str, clamp: Optional[tuple[float, float]] = None
) -> Tensor:
    """The full grid from the training samples [::2, …] by separable ``mode`` interpolation, (C, *train) -> (C, *shape).

    ``align_corners=True`` onto 2n − 1 samples puts training sample j exactly on grid sample 2j, so the
    training samples are reproduced and every held-out sample is interpolated halfway; ``clamp`` (low, high)
    bounds the values as the task bounds a network's output.
    """
    out = train
    for axis, size in enumerate(shape, start=1):
        out = upsample_axis(out, axis, size, mode)
    return out.clamp(*clamp) if clamp is not None else out


# Baselines by name, in table order: (training samples (C, *t), full shape, clamp) -> prediction (C, *shape).
# Images name them as image processing does (bilinear, bicubic); the predictions are the same functions.
FIELD_BASELINES: dict[str, Callable[[Tensor, tuple[int, ...], Optional[tuple[float, float]]], Tensor]] = {
    "constant": lambda train, shape, clamp: constant_mean(train, shape),
    "linear": lambda train, shape, clamp: interpolate_every_other(train, shape, "linear", clamp),
    "cubic": lambda train, shape, clamp: interpolate_every_other(train, shape, "cubic", clamp),
}
BASELINE_SETTINGS = {
    "constant": "mean of the training samples",
    "linear": "interpolation of the training samples (trilinear in 3D)",
    "cubic": "Keys cubic convolution, a = −0.75 (tricubic in 3D)",
}
IMAGE_NAMES = {"constant": "constant", "linear": "bilinear", "cubic": "bicubic"}
BASELINES = {IMAGE_NAMES[k]: f for k, f in FIELD_BASELINES.items()}
IMAGE_BASELINE_SETTINGS = {
    "constant": "mean colour of the training pixels",
    "bilinear": "interpolation of the training pixels",
    "bicubic": "interpolation of the training pixels (a = −0.75)",
}


def split_grid(values: Tensor, index: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The values of a (C, *grid) tensor at flat ``index``, as a (C, *shape) grid."""
    flat = values.reshape(values.shape[0], -1)  # (C, *grid) -> (C, numel)
    return flat[:, index.to(flat.device)].reshape(values.shape[0], *shape)


def interior(dm: Any) -> Tensor:
    """Which held-out samples lie within the training samples' span on every axis, (N_test,) boolean in the order
    of ``dm.test_index``: on an even axis the last held-out sample (index 2n − 1) lies beyond the last training
    sample (2n − 2), where interpolation replicates the edge and a network extrapolates.

    Example:
        >>> from types import SimpleNamespace
        >>> dm = SimpleNamespace(shape=(4,), train_index=torch.tensor([0, 2]), test_index=torch.tensor([1, 3]))
        >>> interior(dm).tolist()
        [True, False]
    """
    coords = lambda index: torch.stack(torch.unravel_index(index.cpu(), tuple(dm.shape)), dim=1)  # (N,) -> (N, d)
    test, train = coords(dm.test_index), coords(dm.train_index)
    return ((test >= train.min(0).values) & (test <= train.max(0).values)).all(1)


def score_field(pred: Tensor, target: Tensor, dm: Any, data_range: float = 1.0, num_bands: int = 16) -> dict[str, Any]:
    """Scores of a prediction on the whole grid, (C, *shape) against the target (C, *shape), the same for a
    trained network (its ``render()``) and a baseline: PSNR (``inr.metrics.psnr``, data range R) of the
    held-out (``psnr``) and training samples (``train_psnr``), of the held-out samples within the training
    samples' span (``interior_psnr``: the edge every method extrapolates left out, ``interior``), SSIM of the
    held-out sub-image (2D grids only),
    and ``spectral_summary``'s DC, low and high errors (DC apart) on the held-out grid (``dc``, ``low``,
    ``high``, with every band's ``band_errors`` and their ``band_edges``) and on the training grid (``train_dc``,
    …). ``dm`` is the GridDataModule whose split defines the two grids."""
    pred, target = pred.detach().double().cpu(), target.double().cpu()
    train_p, train_t = (split_grid(x, dm.train_index, dm.train_shape) for x in (pred, target))
    test_p, test_t = (split_grid(x, dm.test_index, dm.test_shape) for x in (pred, target))
    train_s = spectral_summary(train_p, train_t, num_bands=num_bands)
    test_s = spectral_summary(test_p, test_t, num_bands=num_bands)
    scores = {"psnr": psnr(test_p, test_t, data_range), "train_psnr": psnr(train_p, train_t, data_range)}
    inside = interior(dm)
    scores["interior_psnr"] = psnr(test_p.flatten(1)[:, inside], test_t.flatten(1)[:, inside], data_range)
    if pred.ndim == 3 and (value := ssim(test_p, test_t, data_range)) is not None:
        scores["ssim"] = value
    scores.update({part: float(test_s[part]) for part in ("dc", "low", "high")})
    scores.update({f"train_{part}": float(train_s[part]) for part in ("dc", "low", "high")})
    scores.update({"band_errors": test_s["errors"].tolist(), "band_edges": test_s["edges"].tolist()})
    return scores


def score_prediction(pred: Tensor, target: Tensor, dm: Any, num_bands: int = 16) -> dict[str, Any]:
    """``score_field`` of an image in [0, 1] (data range 1)."""
    return score_field(pred, target, dm, 1.0, num_bands)


def interpolations(dm: Any, clamp: Optional[tuple[float, float]] = None) -> dict[str, tuple[Callable[[], Tensor], str]]:
    """The baselines of ``dm``'s target (a set-up GridDataModule with the every_other split, 1–3 axes), in table
    order: name -> (a function returning its prediction (C, *shape), float64, its setting); on a 2D grid named as
    image processing names them (bilinear, bicubic). ``clamp`` bounds them as the task bounds a network's output."""
    if dm.split != "every_other":
        raise ValueError("interpolation baselines need the every_other split")
    target = dm.values_grid().double()  # (C, *shape); float64, so a baseline's score carries no float32 rounding
    train = dm.values_grid(dm.train_index, dm.train_shape).double()  # (C, *train_shape): the [::2, …] samples
    shape, image = tuple(target.shape[1:]), dm.ndim == 2
    return {
        IMAGE_NAMES[name] if image else name: (
            lambda f=f: f(train, shape, clamp),
            IMAGE_BASELINE_SETTINGS[IMAGE_NAMES[name]] if image else BASELINE_SETTINGS[name],
        )
        for name, f in FIELD_BASELINES.items()
    }


def baseline_rows(
    dm: Any, data_range: float = 1.0, num_bands: int = 16, clamp: Optional[tuple[float, float]] = (0.0, 1.0)
) -> list[dict[str, Any]]:
    """One scored row per baseline of ``interpolations`` (an image's clamped to [0, 1] as ``ImageFitting`` clamps)."""
    target = dm.values_grid().double()
    rows = []
    for name, (predict, setting) in interpolations(dm, clamp).items():
        rows.append(
            {"method": name, "kind": "baseline", "setting": setting, **score_field(predict(), target, dm, data_range, num_bands)}
        )
    return rows


def describe_image(dm: Any) -> dict[str, Any]:
    """For a set-up every_other DataModule: the share of non-DC energy at or above the training grid's Nyquist
    (``aliased_energy_fraction``) and each baseline's held-out PSNR."""
    rows = baseline_rows(dm)
    return {
        "image": dm.describe(),
        "above_nyquist": aliased_energy_fraction(dm.values_grid()),
        **{f"{r['method']}_test_psnr": r["psnr"] for r in rows},
    }


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    from inr.data.image import ImageDataModule
    from inr.data.text import TextImageDataModule

    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--image", action="append", default=[], help="an image file (repeatable)")
    parser.add_argument("--text", default="", help="comma-separated seeds of generated text images")
    parser.add_argument("--resolution", type=int, default=256, help="image side after a centre crop")
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
