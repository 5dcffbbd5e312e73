"""``MeasurementDataModule``: what an inverse problem observed — measurements y, the operator A that made them
from the field, and the field's ground truth on its grid when it is known (for evaluation only)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.data.module import GridDataModule
from inr.data.paths import check_file, resolve_data_path
from inr.errors import InputError
from inr.io.bounded import check_declared, first_line, npy_file_header, shape_text
from inr.operators.base import Operator
from inr.operators.sampling import AdditiveNoise
from inr.sizes import grid_size


def read_array(path: Union[str, Path], what: str, complex_ok: bool = False) -> np.ndarray:
    """A ``.npy`` array (no pickles), refused with one line when missing, unreadable, non-numeric or not finite."""
    path = resolve_data_path(path)
    check_file(path, (".npy",), what)
    shape, dtype = npy_file_header(path, str(path))  # the header checked and held against the data that follows
    # the array, its finiteness mask and the float32 or complex64 copy the data module makes of it
    check_declared(
        str(path), f"{what} of {shape_text(shape)} {dtype}", shape, 2 * dtype.itemsize + 1, "crop or subsample it first"
    )
    try:
        array = np.load(path, allow_pickle=False)
    except Exception as exc:  # numpy raises several types for corrupt files
        raise InputError(f"{path}: not a readable .npy array ({type(exc).__name__}: {first_line(exc)})") from None
    numeric = np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
    if not numeric or (np.iscomplexobj(array) and not complex_ok):
        raise InputError(
            f"{path}: {what} must be a {'real or complex' if complex_ok else 'real'} numeric array, got {array.dtype}"
        )
    if array.size == 0:
        raise InputError(f"{path}: {what} is empty")
    if not np.isfinite(array).all():
        raise InputError(f"{path}: {what} contains NaN or infinite values")
    return array


class MeasurementDataModule(GridDataModule):
    """Measurements y of a field on a regular grid, the operator A with y = A(f) (+ noise), and the field's
    ground truth when known. Subclasses implement ``load_values`` (the ground truth, (*shape, C); zeros when
    unknown, with ``has_ground_truth = False``), ``build_operator()`` and, for measured data,
    ``load_measurements()`` (default None: simulate y = A(truth) + ``AdditiveNoise(noise_std, seed)``).

    The training batch is always the whole problem: the coordinates of every grid point (the operator needs
    the field everywhere; their encoding is computed once) and the training measurements as ``values``. Under
    data parallelism every rank therefore solves the whole problem (the operator couples all grid points, so
    the training batch is not sharded and N ranks add no training throughput; their averaged gradient is the
    single process's); the held-out evaluation is sharded as for every grid. The
    held-out split is the grid itself, scored against the ground truth (PSNR, SSIM); with
    ``heldout_every = k`` every k-th entry along the measurements' first axis after the channels (CT:
    projection angles; MRI: k-space samples in a fixed random order; masks: observed pixels) is left out of
    the loss and scored instead (``val/residual``) — the check available when there is no ground truth.

    Args:
        noise_std: σ of the additive Gaussian noise on simulated measurements.
        heldout_every: hold out every k-th measurement (0: train on all).
        seed: seed of the noise and of random masks.
        eval_chunk: coordinates per evaluation batch.
    """

    has_ground_truth = True

    def __init__(self, noise_std: float = 0.0, heldout_every: int = 0, seed: int = 0, eval_chunk: int = 65536) -> None:
        super().__init__(split="all", batch_size=None, eval_chunk=eval_chunk, seed=seed)
        if noise_std < 0:
            raise InputError(f"data.noise_std must be ≥ 0, got {noise_std}")
        if heldout_every < 0 or heldout_every == 1:
            raise InputError(f"data.heldout_every must be 0 (none) or ≥ 2, got {heldout_every}")
        self.noise_std, self.heldout_every = noise_std, heldout_every
        self._operator: Optional[Operator] = None
        self._measurements: Optional[Tensor] = None

    # --- what a subclass provides -------------------------------------------------------------------
    def build_operator(self) -> Operator:
        """A on the data's grid (``self.shape``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement build_operator")

    def load_measurements(self) -> Optional[Tensor]:
        """Measured y (C, *measurement_shape), or None to simulate it from the ground truth."""
        return None

    # --- the problem --------------------------------------------------------------------------------
    @property
    def operator(self) -> Operator:
        if self._operator is None:
            self._ensure_loaded()
            self._operator = self.build_operator()
        return self._operator

    @property
    def measurements(self) -> Tensor:
        """y, (C, *measurement_shape), real or complex, on the CPU."""
        if self._measurements is None:
            measured = self.load_measurements()
            if measured is None:
                with torch.no_grad():
                    clean = self.operator.simulate(self.values_grid(), self.seed)
                measured = AdditiveNoise(self.noise_std, self.seed)(clean)
            expected = self.operator.measurement_shape(self.out_channels)
            if tuple(measured.shape) != expected:
                raise InputError(
                    f"{self.describe()}: measurements of shape {tuple(measured.shape)} do not match the operator's {expected}"
                )
            self._measurements = measured
        return self._measurements

    def measurement_split(self) -> tuple[Tensor, Tensor]:
        """Indices along the measurements' first axis after the channels: (training, held out)."""
        count = self.measurements.shape[1]
        order = torch.arange(count)
        if not self.heldout_every:
            return order, order[:0]
        if self.measurements.ndim == 2:  # unordered samples (k-space, pixels): hold out a fixed random subset
            order = torch.randperm(count, generator=torch.Generator().manual_seed(self.seed))
        held = (torch.arange(count) % self.heldout_every) == self.heldout_every - 1
        if held.all() or not held.any():
            raise InputError(f"data.heldout_every={self.heldout_every} leaves no training or no held-out measurements of {count}")
        return order[~held].sort().values, order[held].sort().values

    def setup(self, stage: str) -> None:
        super().setup(stage)
        self.measurements  # noqa: B018 — build and check the problem before the first step

    def gather(self, index: Optional[Tensor], device: torch.device) -> dict[str, Any]:
        """Training (``index`` None): every grid coordinate and the training measurements; evaluation: grid
        coordinates and ground-truth values of ``index``."""
        if index is not None:
            return super().gather(index, device)
        train, _ = self.measurement_split()
        return {
            "index": self._on_device("train_index", lambda: self.train_index, device),
            "coords": self._on_device("train_coords", lambda: self.grid.coords(self.train_index), device),
            "values": self._on_device("train_measurements", lambda: self.measurements.index_select(1, train), device),
            "measurement_index": self._on_device("measurement_index", lambda: train, device),
            "full_batch": True,
        }

    def points_per_step(self, world_size: int = 1) -> int:
        """Every rank evaluates the field on the whole grid (the batch is not sharded)."""
        return len(self.train_index)

    def estimate_bytes(self, numel: int, channels: int, ndim: int) -> int:
        """Grid buffers plus the coordinates of the whole grid and one differentiable field on it."""
        return super().estimate_bytes(numel, channels, ndim) + numel * (4 * ndim + 3 * 4 * channels)


def unit_values(array: np.ndarray, source: str) -> Tensor:
    """A ground-truth field given as an array, checked to lie in [0, 1], as float32 (*shape, 1)."""
    if array.min() < 0 or array.max() > 1:
        raise InputError(f"{source}: ground-truth values must lie in [0, 1], found [{array.min():.3g}, {array.max():.3g}]")
    return torch.from_numpy(array.astype(np.float32))[..., None]


def square_shape(resolution: int, ndim: int, name: str = "data.resolution") -> tuple[int, ...]:
    """r -> (r,)·ndim, r ≥ 4: the operators' grids are square (cubic)."""
    if isinstance(resolution, bool) or not isinstance(resolution, int):
        raise InputError(f"{name} must be one int ≥ 4 (a square grid), got {resolution}")
    return grid_size(resolution, ndim, name=name, minimum=4)


def check_grid_memory(module: GridDataModule, shape: tuple[int, ...], channels: int) -> None:
    module.check_size(math.prod(shape), channels, len(shape))


def checked_operator(operator: Operator, shape: tuple[int, ...]) -> Operator:
    """An operator given in the config, refused with one line unless it acts on the data's grid."""
    if tuple(operator.field_shape) != tuple(shape):
        raise InputError(f"data.operator acts on a {tuple(operator.field_shape)} grid but data.resolution gives {tuple(shape)}")
    return operator
