"""``MRIDataModule``: MRI as sparse k-space samples — simulated from a randomised 3D (or 2D) Shepp–Logan phantom
with the paper's Gaussian mask, or read from a complex k-space ``.npy`` with its mask."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.data.measurements import MeasurementDataModule, check_grid_memory, read_array, square_shape, unit_values
from inr.data.phantoms import shepp_logan_phantom
from inr.data.scans import scan_truth
from inr.errors import InputError
from inr.operators.kspace import PAPER_MRI_SIGMA_FRACTION, KSpaceSampling, gaussian_kspace_mask


class MRIDataModule(MeasurementDataModule):
    """MRI on an N^d grid (d = ``ndim``, 3 by default), one channel; k-space is the centred orthonormal DFT
    (``KSpaceSampling``: zero frequency at index N//2 of each axis, numpy's ``fftshift`` order).

    Simulated (default, the paper's protocol): a modified Shepp–Logan phantom with perturbed ellipsoids
    (``phantom_seed``), its k-space read at a Gaussian mask (``gaussian_kspace_mask``: ``samples`` draws,
    default the paper's 200,000 scaled by N^d/96³, spread σ = ``sigma_fraction`` · N, default the paper's
    √192/96), with optional complex noise; ``scan`` replaces the phantom by your own scan (NIfTI, DICOM
    series, fastMRI HDF5 — its reconstruction, else the magnitude of its k-space — or ``.npy``; a 3D scan
    whole for ``ndim: 3``, its slice ``slice_index`` for ``ndim: 2``: ``inr.data.scans.scan_truth``), whose
    k-space is then simulated through the mask. Measured: ``kspace`` is a complex ``.npy`` on the full centred
    grid (N^d; values outside the mask are ignored), ``mask`` a boolean (or 0/1) ``.npy`` of the same shape,
    ``truth`` an optional N^d ``.npy`` in [0, 1].

    Args:
        resolution, ndim: grid side N and dimension (2 or 3).
        samples, sigma_fraction, mask_seed: the simulated mask.
        phantom_seed: seed of the phantom's perturbation.
        kspace, mask, truth: measured data (see above).
        scan, slice_index, value_range: a scan as the simulated ground truth, its slice for a 2D grid (default
            the middle one) and the window mapped onto [0, 1] (default min–max).
        noise_std, heldout_every, seed, eval_chunk: as in ``MeasurementDataModule`` (held out: k-space samples).
    """

    def __init__(
        self,
        resolution: int = 32,
        ndim: int = 3,
        samples: Optional[int] = None,
        sigma_fraction: float = PAPER_MRI_SIGMA_FRACTION,
        mask_seed: int = 0,
        phantom_seed: int = 0,
        kspace: Optional[Union[str, Path]] = None,
        mask: Optional[Union[str, Path]] = None,
        truth: Optional[Union[str, Path]] = None,
        scan: Optional[Union[str, Path]] = None,
        slice_index: Optional[int] = None,
        value_range: Optional[list[float]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if ndim not in (2, 3):
            raise InputError(f"data.ndim must be 2 or 3, got {ndim}")
        if samples is not None and samples < 1:
            raise InputError(f"data.samples must be ≥ 1, got {samples}")
        if sigma_fraction <= 0:
            raise InputError(f"data.sigma_fraction must be > 0, got {sigma_fraction}")
        if (kspace is None) != (mask is None):
            raise InputError("data.kspace and data.mask come together: give both or neither")
        if kspace is None and truth is not None:
            raise InputError("data.truth describes measured k-space; give data.kspace and data.mask too")
        if scan is not None and kspace is not None:
            raise InputError("data.scan is the ground truth of a simulation; measured data.kspace excludes it")
        self.shape_arg = square_shape(resolution, ndim)
        self.samples, self.sigma_fraction, self.mask_seed, self.phantom_seed = samples, sigma_fraction, mask_seed, phantom_seed
        self.kspace_path, self.mask_path, self.truth_path = kspace, mask, truth
        self.scan, self.slice_index, self.value_range = scan, slice_index, value_range
        self.has_ground_truth = kspace is None or truth is not None
        self._mask: Optional[Tensor] = None
        self._kspace: Optional[Tensor] = None

    def describe(self) -> str:
        if self.kspace_path or self.scan:
            return str(self.kspace_path or self.scan)
        return f"Shepp–Logan phantom {self.shape_arg[0]}^{len(self.shape_arg)} (seed {self.phantom_seed})"

    def load_values(self) -> Tensor:
        check_grid_memory(self, self.shape_arg, 1)
        if self.kspace_path is None:
            self._mask = gaussian_kspace_mask(self.shape_arg, self.samples, self.sigma_fraction, self.mask_seed)
            if self.scan is not None:
                return scan_truth(self.scan, self.shape_arg, self.slice_index, self.value_range)[..., None]  # (*shape, 1)
            return shepp_logan_phantom(self.shape_arg, seed=self.phantom_seed)[..., None]  # (*shape) -> (*shape, 1)
        kspace = read_array(self.kspace_path, "k-space", complex_ok=True)
        mask = read_array(self.mask_path, "mask")
        if kspace.shape != self.shape_arg:
            raise InputError(
                f"{self.kspace_path}: k-space of shape {kspace.shape}, expected {self.shape_arg} (data.resolution, data.ndim)"
            )
        if mask.shape != kspace.shape:
            raise InputError(f"{self.mask_path}: mask of shape {mask.shape} does not match the k-space's {kspace.shape}")
        if not np.isin(mask, (0, 1)).all():
            raise InputError(f"{self.mask_path}: a mask holds booleans or 0/1 values only")
        if not mask.any():
            raise InputError(f"{self.mask_path}: the mask selects no k-space sample")
        self._mask = torch.from_numpy(mask.astype(bool))
        self._kspace = torch.from_numpy(kspace.astype(np.complex64))[None][:, self._mask]  # (*shape) -> (1, |M|)
        if self.truth_path is None:
            return torch.zeros(*self.shape_arg, 1)
        truth = read_array(self.truth_path, "ground truth")
        if truth.shape != self.shape_arg:
            raise InputError(f"{self.truth_path}: ground truth of shape {truth.shape}, expected {self.shape_arg}")
        return unit_values(truth, str(self.truth_path))

    def build_operator(self) -> KSpaceSampling:
        return KSpaceSampling(self._mask)

    def load_measurements(self) -> Optional[Tensor]:
        return self._kspace
