"""``CTDataModule``: 2D parallel-beam CT — a sinogram (simulated from a randomised Shepp–Logan phantom, or
read from ``.npy`` files with its angles) and the ``ParallelBeamProjection`` that relates it to the field."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.data.measurements import (
    MeasurementDataModule,
    check_grid_memory,
    checked_operator,
    read_array,
    square_shape,
    unit_values,
)
from inr.data.phantoms import shepp_logan_phantom
from inr.data.scans import scan_truth
from inr.errors import InputError, check_memory
from inr.operators.base import Operator
from inr.operators.tomography import ParallelBeamProjection, even_angles

# |θ| above 2π is no angle of a parallel-beam scan in radians ([0, π) suffices); such files hold degrees
MAX_RADIANS = 2 * math.pi + 1e-6


class CTDataModule(MeasurementDataModule):
    """CT on a (resolution × resolution) grid over [0, 1)², one channel.

    Simulated (default, the paper's protocol): a modified Shepp–Logan phantom with perturbed ellipses
    (``phantom_seed``), projected at ``angles`` angles evenly spaced in [0, π) (the paper: 20), with optional
    noise; ``scan`` replaces the phantom by a slice of your own scan (NIfTI, DICOM series, fastMRI HDF5 or
    ``.npy``: ``inr.data.scans.scan_truth``). ``operator`` replaces ``ParallelBeamProjection`` by any operator
    on the (resolution × resolution) grid, e.g. a deepinv physics (``inr.operators.DeepinvOperator``).
    Measured: ``sinogram`` is a (K, D) ``.npy`` of line integrals in this operator's geometry
    (``ParallelBeamProjection``: skimage's ``radon`` convention, divided by the grid width), ``angles_path`` a
    (K,) ``.npy`` of its angles in radians (or, without it, ``angles`` = K evenly spaced ones), ``truth`` an
    optional (resolution, resolution) ``.npy`` in [0, 1] to score against.

    Args:
        resolution: grid side N.
        angles: number of evenly spaced projection angles (when no ``angles_path`` is given).
        phantom_seed: seed of the phantom's perturbation.
        sinogram, angles_path, truth: measured data (see above).
        detectors: detector bins D of a simulated sinogram (default ⌈√2 N⌉).
        scan, slice_index, value_range: a scan as the simulated ground truth, its slice (default the middle
            one) and the window mapped onto [0, 1] (default min–max).
        operator: the measurement operator instead of ``ParallelBeamProjection``.
        noise_std, heldout_every, seed, eval_chunk: as in ``MeasurementDataModule`` (held out: angles).
    """

    def __init__(
        self,
        resolution: int = 128,
        angles: int = 20,
        phantom_seed: int = 0,
        sinogram: Optional[Union[str, Path]] = None,
        angles_path: Optional[Union[str, Path]] = None,
        truth: Optional[Union[str, Path]] = None,
        detectors: Optional[int] = None,
        scan: Optional[Union[str, Path]] = None,
        slice_index: Optional[int] = None,
        value_range: Optional[list[float]] = None,
        operator: Optional[Operator] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if angles < 1:
            raise InputError(f"data.angles must be ≥ 1, got {angles}")
        if detectors is not None and detectors < 1:
            raise InputError(f"data.detectors must be ≥ 1 (or null: ⌈√2·resolution⌉), got {detectors}")
        if sinogram is None and (angles_path is not None or truth is not None):
            raise InputError("data.angles_path and data.truth describe a measured sinogram; give data.sinogram too")
        if scan is not None and sinogram is not None:
            raise InputError("data.scan is the ground truth of a simulation; a measured data.sinogram excludes it")
        self.shape_arg = square_shape(resolution, 2)
        self.angle_count, self.phantom_seed, self.detectors = angles, phantom_seed, detectors
        self.sinogram_path, self.angles_path, self.truth_path = sinogram, angles_path, truth
        self.scan, self.slice_index, self.value_range, self.given_operator = scan, slice_index, value_range, operator
        self.has_ground_truth = sinogram is None or truth is not None
        self._sinogram: Optional[Tensor] = None
        self._angles: Optional[Tensor] = None

    def describe(self) -> str:
        if self.sinogram_path or self.scan:
            return str(self.sinogram_path or self.scan)
        return f"Shepp–Logan phantom {self.shape_arg[0]}² (seed {self.phantom_seed})"

    def load_values(self) -> Tensor:
        check_grid_memory(self, self.shape_arg, 1)
        if self.sinogram_path is not None:
            self._read_measured()
            if self.truth_path is None:
                return torch.zeros(*self.shape_arg, 1)
            truth = read_array(self.truth_path, "ground truth")
            if truth.shape != self.shape_arg:
                raise InputError(
                    f"{self.truth_path}: ground truth of shape {truth.shape}, expected {self.shape_arg} (data.resolution)"
                )
            return unit_values(truth, str(self.truth_path))
        if self.scan is not None:
            return scan_truth(self.scan, self.shape_arg, self.slice_index, self.value_range)[..., None]  # (N, N, 1)
        return shepp_logan_phantom(self.shape_arg, seed=self.phantom_seed)[..., None]  # (N, N) -> (N, N, 1)

    def _read_measured(self) -> None:
        sinogram = read_array(self.sinogram_path, "sinogram")
        if sinogram.ndim != 2:
            raise InputError(f"{self.sinogram_path}: a sinogram must be 2D (angles, detector bins), got shape {sinogram.shape}")
        if self.angles_path is not None:
            angles = read_array(self.angles_path, "angles").astype(np.float64)
            if angles.ndim != 1:
                raise InputError(f"{self.angles_path}: angles must be a 1D array (radians), got shape {angles.shape}")
            if not np.isfinite(angles).all():
                raise InputError(f"{self.angles_path}: angles contain NaN or infinite values")
            if np.abs(angles).max() > MAX_RADIANS:
                raise InputError(
                    f"{self.angles_path}: angles up to {np.abs(angles).max():g} look like degrees; angles are in radians "
                    "(convert with numpy.deg2rad)"
                )
            angles = torch.from_numpy(angles)
        else:
            angles = even_angles(self.angle_count)
        if len(angles) != sinogram.shape[0]:
            raise InputError(
                f"{self.sinogram_path}: {sinogram.shape[0]} projections but {len(angles)} angles "
                f"({self.angles_path or 'data.angles'}); they must match"
            )
        self._sinogram = torch.from_numpy(sinogram.astype(np.float32))[None]  # (K, D) -> (1, K, D)
        self._angles = angles

    def build_operator(self) -> Operator:
        if self.given_operator is not None:
            return checked_operator(self.given_operator, self.shape)
        angles = self._angles if self.sinogram_path is not None else even_angles(self.angle_count)
        detectors = self._sinogram.shape[-1] if self.sinogram_path is not None else self.detectors
        bins = detectors or math.ceil(math.sqrt(2) * max(self.shape))
        check_memory(
            f"the CT operator ({len(angles):,} angles × {bins:,} detector bins on a {self.shape[0]}×{self.shape[1]} grid)",
            ParallelBeamProjection.estimate_bytes(len(angles), self.shape, detectors),
            advice="choose fewer data.angles or data.detectors, or a smaller data.resolution",
        )
        return ParallelBeamProjection(angles, self.shape, detectors=detectors)

    def load_measurements(self) -> Optional[Tensor]:
        return self._sinogram
