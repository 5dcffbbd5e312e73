"""Classical baselines of the every_other protocol on a 1D signal or a 3D volume (constant, linear and cubic
interpolation of the training samples), and the scores every row of ``compare_fields`` gets.

The training samples sit at the even grid positions of every axis and the held-out ones at the odd
positions, halfway between training samples; interpolating the training grid is the classical answer to the
question the networks answer. Interpolation is separable: one 1D pass per axis, so linear is linear along a
signal and trilinear in a volume, and cubic is Keys' cubic convolution (a = −0.75, PyTorch's bicubic kernel)
along a signal and its tensor product (tricubic) in a volume.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from inr.experiments.baselines import split_grid
from inr.spectral import spectral_summary


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


def psnr(pred: Tensor, target: Tensor, data_range: float) -> float:
    """PSNR = 10 log10(R² / MSE) in dB, R = ``data_range``; ∞ for an exact prediction.

    In the inputs' precision (float64 here): torchmetrics' PSNR converts to dB with a float32 ln 10, a
    relative error of about 5e-8 (3e-6 dB at 60 dB), too coarse to check baselines to 1e-6 dB.

    Example:
        >>> psnr(torch.zeros(4, dtype=torch.float64), torch.full((4,), 0.1, dtype=torch.float64), 2.0)
        26.020599913279625
    """
    mse = torch.mean((pred - target) ** 2)
    return math.inf if float(mse) == 0.0 else float(10 * torch.log10(data_range**2 / mse))


def score_field(pred: Tensor, target: Tensor, dm: Any, data_range: float, num_bands: int) -> dict[str, Any]:
    """Scores of a prediction on the whole grid, (C, *shape) against the target (C, *shape), the same for a
    trained network (its ``render()``) and a baseline: PSNR of the training and held-out samples and
    ``spectral_summary`` (DC, low, high; DC apart) on the training grid and on the held-out grid."""
    pred, target = pred.detach().double().cpu(), target.double().cpu()
    train_p, train_t = (split_grid(x, dm.train_index, dm.train_shape) for x in (pred, target))
    test_p, test_t = (split_grid(x, dm.test_index, dm.test_shape) for x in (pred, target))
    train_s = spectral_summary(train_p, train_t, num_bands=num_bands)
    test_s = spectral_summary(test_p, test_t, num_bands=num_bands)
    return {
        "train_psnr": psnr(train_p, train_t, data_range),
        "test_psnr": psnr(test_p, test_t, data_range),
        **{
            f"{split}_{part}_error": float(s[part])
            for split, s in (("train", train_s), ("test", test_s))
            for part in ("dc", "low", "high")
        },
        "test_band_errors": test_s["errors"].tolist(),
        "band_edges": test_s["edges"].tolist(),
    }


def field_baseline_rows(dm: Any, data_range: float, num_bands: int, clamp: Optional[tuple[float, float]]) -> list[dict[str, Any]]:
    """One row per ``FIELD_BASELINES`` entry for the target of ``dm`` (a set-up GridDataModule with the
    every_other split, 1–3 axes), scored by ``score_field``."""
    if dm.split != "every_other":
        raise ValueError("interpolation baselines need the every_other split")
    target = dm.values_grid().double()  # (C, *shape); float64, so a baseline's score carries no float32 rounding
    train = dm.values_grid(dm.train_index, dm.train_shape).double()  # (C, *train_shape): the [::2, …] samples
    rows = []
    for name, predict in FIELD_BASELINES.items():
        row = {"encoder": name, "kind": "baseline", "setting": BASELINE_SETTINGS[name], "params": 0}
        row.update({"seconds": math.nan, "ms_per_step": math.nan, "lr": math.nan})
        row.update(score_field(predict(train, tuple(target.shape[1:]), clamp), target, dm, data_range, num_bands))
        rows.append(row)
    return rows
