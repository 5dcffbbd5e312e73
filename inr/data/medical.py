"""Readers of the medical formats an MRI or CT user brings: NIfTI volumes (nibabel), DICOM series (pydicom)
and fastMRI HDF5 files (h5py). Each returns the scan as float64 in its physical units, slices first.

Layout: (slices, rows, columns), the (z, y, x) order of a numpy array from SimpleITK. A NIfTI volume stored
as (i, j, k) is read as its transpose (k, j, i), after nibabel applies ``scl_slope``/``scl_inter``; no
reorientation. A DICOM series is stacked along the slice normal (ImageOrientationPatient's row × column
cosines) in increasing ImagePositionPatient, or by InstanceNumber when a slice has no position, each slice's
stored values mapped by RescaleSlope/RescaleIntercept (CT: Hounsfield units). A fastMRI file gives its
``reconstruction_rss`` (multi-coil) or ``reconstruction_esc`` (single-coil) when present, else the magnitude
image of its ``kspace``: √Σ_coils |F⁻¹k|² with F⁻¹ the centred orthonormal inverse FFT of fastMRI
(fftshift ∘ ifft2 ∘ ifftshift), centre-cropped to the header's reconstruction size as fastMRI does.
Normalising to [0, 1] is the caller's (``inr.data.volume.to_unit_range``: min–max, or a window).

Every failure is one ``InputError`` naming the file: missing, not of the format, no image in it, wrong
dimensionality, NaN/inf, an empty series, slices of different sizes or of several series.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Union

import numpy as np

from inr.errors import InputError
from inr.extras import require
from inr.io.bounded import check_declared, shape_text

NIFTI_SUFFIXES = (".nii", ".nii.gz")
HDF5_SUFFIXES = (".h5", ".hdf5")
DICOM_SUFFIX = ".dcm"
# fastMRI's datasets: the k-space and its reference reconstructions (Zbontar et al. 2018, fastMRI README)
FASTMRI_RECONSTRUCTIONS = ("reconstruction_rss", "reconstruction_esc")
SCAN_FORMATS = "a NIfTI file (.nii, .nii.gz), a DICOM series (a folder, or one .dcm file) or a fastMRI HDF5 file (.h5)"
# Memory of reading a scan beyond its stored values, in bytes per value, for the check of its declared size before
# anything is read or decompressed (inr.io.bounded). Measured with tracemalloc: an int16 NIfTI peaks at 10 bytes a
# voxel when read (stored + float64) and 16 once mapped to [0, 1] (inr.data.volume.to_unit_range, scan_truth); an
# int16 DICOM series at 20.4 (the rescaled float64 slices and their stack); fastMRI's complex64 k-space at 32.1 a
# sample (its centred inverse FFT in complex128).
SCAN_BYTES_PER_VALUE = 16
DICOM_BYTES_PER_VALUE = 24
KSPACE_BYTES_PER_VALUE = 32
SCAN_ADVICE = "crop or downsample the scan first"


def is_scan(path: Union[str, Path]) -> bool:
    """Whether ``path`` names a medical scan by its form: a NIfTI or HDF5 name, a ``.dcm`` file, or a folder."""
    path = Path(path)
    name = path.name.lower()
    return name.endswith(NIFTI_SUFFIXES + HDF5_SUFFIXES + (DICOM_SUFFIX,)) or path.is_dir()


def read_scan(path: Union[str, Path], key: Optional[str] = None) -> np.ndarray:
    """The scan at ``path`` (by its form, see ``is_scan``), float64, 2D or 3D, finite; ``key`` names the
    dataset of an HDF5 file (default: fastMRI's reconstruction, else its k-space)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found")
    name = path.name.lower()
    if path.is_dir() or name.endswith(DICOM_SUFFIX):
        array = read_dicom_series(path)
    elif name.endswith(NIFTI_SUFFIXES):
        array = read_nifti(path)
    elif name.endswith(HDF5_SUFFIXES):
        array = read_fastmri(path, key)
    else:
        raise InputError(f"{path}: not a medical scan; give {SCAN_FORMATS}")
    return check_scan(array, str(path))


def check_scan(array: np.ndarray, source: str) -> np.ndarray:
    """Refuse an empty, non-finite or not 2D/3D scan (singleton axes dropped); float64."""
    array = np.asarray(array, dtype=np.float64)
    if array.ndim > 2:
        array = array.reshape([s for s in array.shape if s != 1] or [1])
    if array.size == 0:
        raise InputError(f"{source}: the scan holds no voxels (shape {array.shape})")
    if array.ndim not in (2, 3):
        raise InputError(f"{source}: a scan of shape {array.shape} is neither 2D nor 3D")
    if not np.isfinite(array).all():
        raise InputError(f"{source}: the scan contains NaN or infinite values")
    return array


def read_nifti(path: Path) -> np.ndarray:
    """A NIfTI-1/2 image (.nii or .nii.gz) in physical units, axes reversed to (k, j, i)."""
    nib = _require("nibabel", "NIfTI")
    _check_not_empty(path)
    try:
        image = nib.load(str(path))
        if not isinstance(image, (nib.Nifti1Image, nib.Nifti2Image)):
            raise InputError(f"{path}: not a NIfTI image (nibabel read a {type(image).__name__})")
        dtype = image.get_data_dtype()  # the header only, so far: a .nii.gz is inflated by the read below
        what = f"a {shape_text(image.shape)} {dtype} NIfTI volume"
        check_declared(str(path), what, image.shape, dtype.itemsize + SCAN_BYTES_PER_VALUE, SCAN_ADVICE)
        data = np.asarray(image.dataobj, dtype=np.float64)  # scl_slope · stored + scl_inter
    except InputError:
        raise
    except Exception as exc:  # nibabel, gzip and numpy raise many types for files that are not NIfTI
        raise InputError(f"{path}: not a readable NIfTI file ({type(exc).__name__}: {_first_line(exc)})") from None
    return data.T  # (i, j, k[, t]) -> ([t,] k, j, i)


def read_dicom_series(path: Path) -> np.ndarray:
    """The DICOM slices of a folder (files ending in .dcm, or every file when none does; DICOMDIR aside), or
    one file, as (slices, rows, columns) with the rescale applied; multi-frame files give their frames."""
    pydicom = _require("pydicom", "DICOM")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.upper() != "DICOMDIR")
        dcm = [p for p in files if p.name.lower().endswith(DICOM_SUFFIX)]
        files = dcm or [p for p in files if not p.name.startswith(".")]
        if not files:
            raise InputError(f"{path}: an empty DICOM series (no files in the folder)")
    else:
        files = [path]
    headers = []
    for file in files:
        try:  # the headers first: the pixel data (compressed, perhaps) is read once the series is known to fit
            headers.append((file, pydicom.dcmread(file, defer_size="64 KB")))
        except Exception as exc:  # pydicom raises InvalidDicomError, struct errors, ...
            raise InputError(f"{file}: not a readable DICOM image ({type(exc).__name__}: {_first_line(exc)})") from None
    check_series_size(path, [ds for _, ds in headers])
    slices = []
    for file, ds in headers:
        try:
            pixels = ds.pixel_array
        except Exception as exc:  # pydicom raises AttributeError (no PixelData), ValueError (too little of it), ...
            raise InputError(f"{file}: not a readable DICOM image ({type(exc).__name__}: {_first_line(exc)})") from None
        slope, intercept = float(getattr(ds, "RescaleSlope", 1) or 1), float(getattr(ds, "RescaleIntercept", 0) or 0)
        slices.append((file, ds, pixels.astype(np.float64) * slope + intercept))
    series = {str(getattr(ds, "SeriesInstanceUID", "")) for _, ds, _ in slices}
    if len(series) > 1:
        raise InputError(f"{path}: holds {len(series)} DICOM series; give the folder of one")
    sizes = {pixels.shape[-2:] for _, _, pixels in slices}
    if len(sizes) > 1:
        raise InputError(f"{path}: DICOM slices of inconsistent sizes {sorted(sizes)}; a series has one size")
    if len(slices) > 1:
        slices.sort(key=lambda item: _slice_order(*item[:2]))
    return np.concatenate([pixels.reshape(-1, *pixels.shape[-2:]) for _, _, pixels in slices])


def _header_int(ds, name: str, default: int) -> int:
    try:
        return int(getattr(ds, name, default) or default)
    except (TypeError, ValueError):
        return default


def check_series_size(path: Path, headers: list) -> None:
    """Refuse a series whose headers declare more values (Σ frames × rows × columns × samples per pixel) than
    memory holds, before any pixel data is read or decompressed."""
    frames = sum(_header_int(ds, "NumberOfFrames", 1) for ds in headers)
    rows, columns = _header_int(headers[0], "Rows", 0), _header_int(headers[0], "Columns", 0)
    values = sum(
        _header_int(ds, "NumberOfFrames", 1)
        * _header_int(ds, "Rows", 0)
        * _header_int(ds, "Columns", 0)
        * _header_int(ds, "SamplesPerPixel", 1)
        for ds in headers
    )
    stored = max((_header_int(ds, "BitsAllocated", 8) + 7) // 8 for ds in headers)
    what = f"a DICOM series of {frames}×{rows}×{columns} values of {stored} bytes"
    check_declared(str(path), what, (values,), stored + DICOM_BYTES_PER_VALUE, SCAN_ADVICE, declared_by="its headers")


def _slice_order(file: Path, ds) -> tuple[float, float]:
    """Position along the slice normal n = row × column cosine (then InstanceNumber), the usual sort key."""
    position, orientation = getattr(ds, "ImagePositionPatient", None), getattr(ds, "ImageOrientationPatient", None)
    instance = float(getattr(ds, "InstanceNumber", 0) or 0)
    if position is None:
        if getattr(ds, "InstanceNumber", None) is None:
            raise InputError(f"{file}: a DICOM slice with neither ImagePositionPatient nor InstanceNumber cannot be ordered")
        return (instance, instance)
    normal = np.cross(*np.asarray(orientation, float).reshape(2, 3)) if orientation is not None else np.array([0, 0, 1.0])
    return (float(np.dot(normal, np.asarray(position, float))), instance)


def read_fastmri(path: Path, key: Optional[str] = None) -> np.ndarray:
    """A fastMRI file's image volume (slices, H, W): dataset ``key``, else its reference reconstruction,
    else the root-sum-of-squares magnitude of its k-space (single-coil (slices, H, W) or multi-coil
    (slices, coils, H, W)), centre-cropped to the header's reconstruction size."""
    h5py = _require("h5py", "HDF5")
    _check_not_empty(path)
    try:
        with h5py.File(path, "r") as f:
            names = sorted(f.keys())
            if key is not None and key not in names:
                raise InputError(f"{path}: no dataset {key!r} (found {names})")
            name = key or next((n for n in FASTMRI_RECONSTRUCTIONS if n in f), "kspace" if "kspace" in f else None)
            if name is None:
                raise InputError(f"{path}: no fastMRI 'kspace' or reconstruction dataset (found {names})")
            dataset = f[name]
            beyond = KSPACE_BYTES_PER_VALUE if name == "kspace" else SCAN_BYTES_PER_VALUE
            what = f"dataset {name!r} of {shape_text(dataset.shape)} {dataset.dtype}"
            check_declared(str(path), what, dataset.shape, dataset.dtype.itemsize + beyond, SCAN_ADVICE)
            data = dataset[()]  # a chunked dataset is inflated here, once its declared size is known to fit
            header = f["ismrmrd_header"][()] if "ismrmrd_header" in f else None
    except InputError:
        raise
    except Exception as exc:  # h5py raises OSError for files that are not HDF5
        raise InputError(f"{path}: not a readable HDF5 file ({type(exc).__name__}: {_first_line(exc)})") from None
    if name != "kspace":
        if np.iscomplexobj(data):
            raise InputError(f"{path}: dataset {name!r} is complex; an image dataset is real")
        return data
    if not np.iscomplexobj(data) or data.ndim not in (3, 4):
        raise InputError(
            f"{path}: 'kspace' must be complex (slices, H, W) or (slices, coils, H, W), got {data.dtype} {data.shape}"
        )
    if not np.isfinite(data).all():
        raise InputError(f"{path}: 'kspace' contains NaN or infinite values")
    image = np.fft.fftshift(np.fft.ifft2(np.fft.ifftshift(data, axes=(-2, -1)), norm="ortho"), axes=(-2, -1))
    magnitude = np.sqrt((np.abs(image) ** 2).sum(axis=1)) if data.ndim == 4 else np.abs(image)
    return centre_crop(magnitude, reconstruction_size(header))


def reconstruction_size(header: Optional[bytes]) -> Optional[tuple[int, int]]:
    """(x, y) of the ISMRMRD header's reconSpace matrix (fastMRI crops its images to it), or None.

    Example:
        >>> reconstruction_size(b"<reconSpace><matrixSize><x>320</x><y>320</y><z>1</z></matrixSize></reconSpace>")
        (320, 320)
    """
    if header is None:
        return None
    text = header.decode(errors="replace") if isinstance(header, bytes) else str(header)
    recon = re.search(r"<reconSpace>.*?<matrixSize>\s*<x>(\d+)</x>\s*<y>(\d+)</y>", text, re.S)
    return (int(recon.group(1)), int(recon.group(2))) if recon else None


def centre_crop(array: np.ndarray, size: Optional[tuple[int, int]]) -> np.ndarray:
    """The central size = (rows, columns) of the last two axes, as fastMRI's data transforms crop (their
    ``crop_size = (recon_size[0], recon_size[1])``, with a square of the image height when that is smaller
    than size[1]); unchanged when ``size`` is None.

    Example:
        >>> centre_crop(np.arange(24).reshape(4, 6), (2, 2)).tolist()
        [[8, 9], [14, 15]]
    """
    if size is None:
        return array
    if array.shape[-2] < size[1]:
        size = (array.shape[-2], array.shape[-2])
    rows, cols = min(size[0], array.shape[-2]), min(size[1], array.shape[-1])
    top, left = (array.shape[-2] - rows) // 2, (array.shape[-1] - cols) // 2
    return array[..., top : top + rows, left : left + cols]


def _require(module: str, what: str):
    """The reader's package (imported on first use: the ``interop`` extra), or one line saying how to get it."""
    return require(module, extra="interop", what=f"reading {what}")


def _check_not_empty(path: Path) -> None:
    if path.stat().st_size == 0:
        raise InputError(f"{path}: file is empty")


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else ""
