"""3D voxel volumes as targets: reading .npy/.npz/TIFF stacks and medical scans (NIfTI, DICOM series, fastMRI
HDF5: ``inr.data.medical``), the built-in shapes, and ``VolumeDataModule``.

Voxel (i, j, k) of a (D, H, W) grid sits at v = (i/D, j/H, k/W) (the core grid convention). Values are
mapped into [0, 1] before use: with ``value_range = [lo, hi]``, v' = clip((v − lo)/(hi − lo), 0, 1);
without it booleans are 0/1, unsigned integers are divided by their type's maximum, and signed integers
and floats are min–max rescaled over the volume. ``occupancy`` mode then thresholds: occupied = v' > threshold.
Built-in shapes come from signed distances d (``inr.data.sdf``): occupancy = d < 0; density is the linear
ramp clip(0.5 − d / (2w), 0, 1) across a shell of w = 2 voxels around the surface.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from inr.data.image import tiff_header
from inr.data.medical import SCAN_FORMATS, is_scan, read_scan
from inr.data.module import GridDataModule
from inr.data.paths import check_file, resolve_data_path
from inr.data.sdf import BUILTIN_SHAPES, sdf_grid
from inr.errors import InputError
from inr.io.bounded import check_declared, check_npz_member, first_line, npy_file_header, open_npz, shape_text
from inr.sizes import grid_size

VOLUME_EXTENSIONS = (".npy", ".npz", ".tif", ".tiff")
# Memory of reading a volume beyond its stored values, in bytes per voxel, for the check of its declared size before
# it is read or inflated (inr.io.bounded): to_unit_range's float64 copy and its [0, 1] map, as a scan's (measured
# 16 bytes a voxel: inr.data.medical), and the float32 result.
VOLUME_BYTES_PER_VALUE = 20
VOLUME_ADVICE = "crop or downsample the volume first"
MODES = ("occupancy", "density")
# A full batch keeps the training coordinates and their encoding on the device every step; beyond this many
# points that is hundreds of MB per step, so volumes and videos this large train on random batches.
FULL_BATCH_LIMIT = 2**20


def read_volume_array(path: Union[str, Path], key: Optional[str] = None) -> np.ndarray:
    """The array stored in a .npy, .npz (array ``key``, or the only one) or multi-page TIFF file, unchanged; a
    medical scan (``is_scan``; ``key``: an HDF5 dataset) as ``read_scan`` gives it, float64 (slices, rows, columns)."""
    path = Path(path)
    if is_scan(path):
        return read_scan(path, key)
    check_file(path, VOLUME_EXTENSIONS, hint=f"use one of {', '.join(VOLUME_EXTENSIONS)}, or {SCAN_FORMATS}")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            shape, dtype = npy_file_header(path, str(path))  # the header checked and held against the data that follows
            what = f"array of {shape_text(shape)} {dtype}"
            check_declared(str(path), what, shape, dtype.itemsize + VOLUME_BYTES_PER_VALUE, VOLUME_ADVICE)
            return np.load(path, mmap_mode="r", allow_pickle=False)  # the data mapped, not read
        if suffix == ".npz":
            with open_npz(path, str(path)) as archive:
                names = list(archive.keys())
                if key is None and len(names) != 1:
                    raise InputError(f"{path}: holds arrays {names}; choose one with data.key")
                name = key if key is not None else names[0]
                if name not in names:
                    raise InputError(f"{path}: no array {name!r} (found {names})")
                check_npz_member(archive, name, str(path), VOLUME_BYTES_PER_VALUE, VOLUME_ADVICE)  # before inflating it
                return archive[name]
        header = tiff_header(path)
        if header is not None:  # every page, as its directory declares it, before any is decompressed
            pages, shape, itemsize = header
            what = f"a TIFF stack of {shape_text((pages, *shape))} values of {itemsize} bytes"
            check_declared(str(path), what, (pages, *shape), itemsize + VOLUME_BYTES_PER_VALUE, VOLUME_ADVICE)
        import imageio.v3 as iio

        return np.asarray(iio.imread(path, index=None))  # all pages: (D, H, W[, C])
    except InputError:
        raise
    except Exception as exc:  # numpy and imageio raise many types for undecodable files
        raise InputError(f"{path}: not a readable volume ({type(exc).__name__}: {first_line(exc)})") from None


def check_volume_array(array: np.ndarray, source: str) -> None:
    """Refuse arrays that are not a (D, H, W) or (D, H, W, C ≤ 4) grid of finite real numbers."""
    if array.ndim not in (3, 4):
        raise InputError(
            f"{source}: a {array.ndim}-D array of shape {tuple(array.shape)} is not a volume; expected (D, H, W) or (D, H, W, C)"
        )
    if array.ndim == 4 and not 1 <= array.shape[3] <= 4:
        raise InputError(f"{source}: last axis of shape {tuple(array.shape)} is not a channel axis (1 to 4 channels)")
    if min(array.shape[:3]) < 2:
        raise InputError(f"{source}: volume of shape {tuple(array.shape)} needs at least 2 voxels per axis")
    if not (array.dtype == np.bool_ or np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise InputError(f"{source}: unsupported voxel type {array.dtype}")
    if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all():
        raise InputError(f"{source}: the volume contains NaN or infinite values")


def to_unit_range(array: np.ndarray, source: str, value_range: Optional[list[float]] = None) -> Tensor:
    """Map voxel values into [0, 1] float32 by the rules of the module docstring."""
    x = torch.from_numpy(np.asarray(array, dtype=np.float64 if array.dtype != np.bool_ else np.bool_).copy())
    if value_range is not None:
        lo, hi = (float(r) for r in value_range)
        if not hi > lo:
            raise InputError(f"data.value_range must be [low, high] with high > low, got {value_range}")
        return ((x - lo) / (hi - lo)).clamp(0, 1).to(torch.float32)
    if array.dtype == np.bool_:
        return x.to(torch.float32)
    if np.issubdtype(array.dtype, np.unsignedinteger):
        return (x / np.iinfo(array.dtype).max).to(torch.float32)
    lo, hi = float(x.min()), float(x.max())
    if hi == lo:
        raise InputError(f"{source}: the volume is constant ({lo:.3g}); nothing to fit")
    return ((x - lo) / (hi - lo)).to(torch.float32)


def resample(volume: Tensor, size: tuple[int, int, int]) -> Tensor:
    """(D, H, W, C) -> (d, h, w, C): box-filter averaging when shrinking every axis, trilinear otherwise."""
    if tuple(volume.shape[:3]) == size:
        return volume
    x = volume.permute(3, 0, 1, 2)[None]  # (D, H, W, C) -> (1, C, D, H, W)
    shrink = all(s <= n for s, n in zip(size, volume.shape[:3]))
    y = F.interpolate(x, size=size, mode="area") if shrink else F.interpolate(x, size=size, mode="trilinear", align_corners=False)
    return y[0].permute(1, 2, 3, 0).contiguous()


def refuse_large_full_batch(dm: GridDataModule, limit: int) -> None:
    """Full-batch training caches the (N, d) training coordinates on the device; refuse it for huge grids."""
    n = len(dm.train_index)
    if dm.batch_size is None and n > limit:
        raise InputError(
            f"data.batch_size: full-batch training on {n:,} points of {dm.describe()} would hold their coordinates "
            f"and encoding every step (limit data.full_batch_limit = {limit:,}); set data.batch_size, e.g. 65536"
        )


class VolumeDataModule(GridDataModule):
    """A voxel grid (D, H, W) of occupancy or density: a .npy/.npz/TIFF file, or a built-in shape.

    Args:
        path: a ``.npy``, ``.npz`` or multi-page ``.tif``/``.tiff`` volume (D, H, W) or (D, H, W, C), a
            NIfTI file, a DICOM series (folder) or a fastMRI ``.h5`` (``inr.data.medical``: float values in
            physical units, so min–max or ``value_range``); ``None`` uses the built-in shape.
        builtin: ``bumpy`` (a rippled sphere with a ring and a bore: detail at several scales) or
            ``sphere`` (radius 0.35 at the centre), rendered at ``resolution``.
        resolution: an int r (r³) or [D, H, W]; for files, the volume is resampled to it (``None``: native).
        mode: ``occupancy`` (0/1 targets, one channel) or ``density`` (values in [0, 1]).
        threshold: occupancy level on the [0, 1] values of a file.
        value_range: [low, high] mapped onto [0, 1] (see the module docstring).
        key: array name inside a ``.npz`` holding several, or dataset of an HDF5 file.
        full_batch_limit: most training points allowed with ``batch_size: null``.
        split, batch_size, steps_per_epoch, eval_chunk, seed: as in ``GridDataModule``.

    Example:
        >>> dm = VolumeDataModule(builtin="sphere", resolution=16)
        >>> dm.shape, dm.out_channels, dm.train_shape, sorted(dm.values.unique().tolist())
        ((16, 16, 16), 1, (8, 8, 8), [0.0, 1.0])
    """

    def __init__(
        self,
        path: Optional[str] = None,
        builtin: Literal["bumpy", "sphere"] = "bumpy",
        resolution: Union[int, list[int], None] = 64,
        mode: Literal["occupancy", "density"] = "occupancy",
        threshold: float = 0.5,
        value_range: Optional[list[float]] = None,
        key: Optional[str] = None,
        full_batch_limit: int = FULL_BATCH_LIMIT,
        split: str = "every_other",
        **kwargs: Any,
    ) -> None:
        super().__init__(split=split, **kwargs)
        if mode not in MODES:
            raise InputError(f"data.mode: unknown mode {mode!r}; choose {' or '.join(MODES)}")
        self.path = resolve_data_path(path) if path is not None else None
        self.builtin, self.resolution, self.mode, self.threshold = builtin, resolution, mode, threshold
        self.value_range, self.key, self.full_batch_limit = value_range, key, full_batch_limit

    def describe(self) -> str:
        return str(self.path) if self.path is not None else f"built-in {self.builtin} volume"

    def _size(self) -> Optional[tuple[int, int, int]]:
        if self.resolution is None:
            return None
        return grid_size(self.resolution, 3)

    def _builtin(self) -> Tensor:
        if self.builtin not in BUILTIN_SHAPES:
            raise InputError(f"data.builtin: unknown shape {self.builtin!r}; choose one of {', '.join(BUILTIN_SHAPES)}")
        size = self._size()
        if size is None:
            raise InputError("data.resolution: a built-in shape needs a resolution")
        self.check_size(math.prod(size), 1, 3)
        d = sdf_grid(self.builtin, size)  # (D, H, W)
        if self.mode == "occupancy":
            return (d < 0).to(torch.float32)[..., None]
        shell = 2.0 / min(size)  # w = 2 voxels of the finest axis
        return (0.5 - d / (2 * shell)).clamp(0, 1)[..., None]

    def _read(self) -> Tensor:
        array = read_volume_array(self.path, self.key)
        check_volume_array(array, str(self.path))
        size = self._size()
        channels = array.shape[3] if array.ndim == 4 else 1
        self.check_size(math.prod(array.shape[:3]) + (math.prod(size) if size else 0), channels, 3)
        if self.mode == "occupancy" and channels != 1:
            raise InputError(f"{self.path}: occupancy needs a single-channel volume, got {channels} channels")
        unit = to_unit_range(np.asarray(array), str(self.path), self.value_range)
        unit = unit[..., None] if unit.ndim == 3 else unit  # (D, H, W) -> (D, H, W, 1)
        if size is not None:
            unit = resample(unit, size)
        if self.mode == "occupancy":
            unit = (unit > self.threshold).to(torch.float32)
        return unit

    def load_values(self) -> Tensor:
        values = self._read() if self.path is not None else self._builtin()
        if self.mode == "occupancy":
            filled = float(values.mean())
            if filled in (0.0, 1.0):
                what = "empty" if filled == 0.0 else "full"
                raise InputError(f"{self.describe()}: the occupancy at threshold {self.threshold} is {what}; nothing to fit")
        elif float(values.max() - values.min()) == 0.0:
            raise InputError(f"{self.describe()}: the density is constant; nothing to fit")
        return values  # (D, H, W, C)

    def setup(self, stage: str) -> None:
        super().setup(stage)
        refuse_large_full_batch(self, self.full_batch_limit)
