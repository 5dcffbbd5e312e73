"""A medical scan as the ground truth of a simulated CT or MRI problem: read (``inr.data.medical``), mapped to
[0, 1], one slice taken for a 2D grid, padded to a square (cube) and resampled onto the operator's grid."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

import torch.nn.functional as F
from torch import Tensor

from inr.data.medical import read_scan
from inr.data.paths import resolve_data_path
from inr.data.volume import to_unit_range
from inr.errors import InputError


def pad_to_square(field: Tensor, value: float) -> Tensor:
    """Pad every axis of (*shape) symmetrically with ``value`` to the longest side: the aspect ratio is kept
    when the square (cubic) grid of CT and MRI is resampled from it.

    Example:
        >>> import torch
        >>> pad_to_square(torch.ones(2, 4), 0.0).tolist()
        [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    """
    side = max(field.shape)
    pads = []
    for size in reversed(field.shape):  # F.pad lists the last axis first
        pads += [(side - size) // 2, side - size - (side - size) // 2]
    return F.pad(field, pads, value=value)


def resample_grid(field: Tensor, shape: tuple[int, ...]) -> Tensor:
    """(*old) -> (*shape), 2D or 3D: area averaging when no axis grows, else (bi/tri)linear interpolation."""
    if tuple(field.shape) == tuple(shape):
        return field
    x = field[None, None]  # (*old) -> (1, 1, *old)
    if all(s <= n for s, n in zip(shape, field.shape)):
        y = F.interpolate(x, size=shape, mode="area")
    else:
        y = F.interpolate(x, size=shape, mode="bilinear" if len(shape) == 2 else "trilinear", align_corners=False)
    return y[0, 0]


def scan_truth(
    path: Union[str, Path],
    shape: tuple[int, ...],
    slice_index: Optional[int] = None,
    value_range: Optional[list[float]] = None,
    key: Optional[str] = None,
) -> Tensor:
    """The ground truth (*shape) float32 in [0, 1] from a scan: its values mapped by ``to_unit_range`` over the
    whole scan (min–max, or the window ``value_range``, e.g. Hounsfield units [−1000, 1000]); for a 2D grid
    the slice ``slice_index`` (default the middle one) along the scan's first axis; padded with its minimum
    to a square (cube) and resampled to ``shape``."""
    path = resolve_data_path(path)
    array = read_scan(path, key)
    unit = to_unit_range(array, str(path), value_range)
    if len(shape) == 3 and unit.ndim == 2:
        raise InputError(
            f"{path}: a 2D scan of shape {tuple(unit.shape)} cannot be the ground truth of a 3D grid; set data.ndim 2"
        )
    if len(shape) == 2 and unit.ndim == 3:
        count = unit.shape[0]
        index = count // 2 if slice_index is None else slice_index
        if not -count <= index < count:
            raise InputError(f"{path}: data.slice_index {index} is out of range for {count} slices")
        unit = unit[index]
    elif slice_index is not None:
        raise InputError(f"data.slice_index selects a slice of a 3D scan for a 2D grid; {path} is read whole here")
    unit = resample_grid(pad_to_square(unit, float(unit.min())), shape).clamp(0, 1)
    if float(unit.max() - unit.min()) == 0.0:
        raise InputError(f"{path}: the ground truth is constant on the grid; nothing to reconstruct")
    return unit.contiguous()
