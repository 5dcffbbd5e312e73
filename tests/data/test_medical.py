"""Medical formats written here (nibabel, pydicom, h5py; nothing downloaded): NIfTI, DICOM series and fastMRI
HDF5 read against the arrays that made them, as volumes and as the ground truth of CT and MRI simulations,
and their bad files refused through the real command with one line and exit 2."""

import sys
from pathlib import Path

import h5py
import nibabel as nib
import numpy as np
import pytest
import torch
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid

from inr.data import CTDataModule, MRIDataModule, VolumeDataModule
from inr.data.medical import read_scan
from inr.errors import InputError
from inr.run.cli import cli_main


def _nifti(path: Path, data: np.ndarray, slope: float = 1.0, inter: float = 0.0) -> Path:
    image = nib.Nifti1Image(data, affine=np.eye(4))
    image.header.set_slope_inter(slope, inter)
    nib.save(image, str(path))
    return path


def _dicom_slice(path: Path, pixels: np.ndarray, series: str, z=None, instance=None, slope=1.0, intercept=0.0) -> None:
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = CTImageStorage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID, ds.SOPInstanceUID, ds.SeriesInstanceUID = CTImageStorage, meta.MediaStorageSOPInstanceUID, series
    ds.Modality = "CT"
    ds.Rows, ds.Columns = pixels.shape
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 1
    ds.RescaleSlope, ds.RescaleIntercept = slope, intercept
    if z is not None:
        ds.ImagePositionPatient = [0.0, 0.0, float(z)]
        ds.ImageOrientationPatient = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    if instance is not None:
        ds.InstanceNumber = instance
    ds.PixelData = pixels.astype("<i2").tobytes()
    ds.save_as(path, enforce_file_format=True)


def _dicom_series(folder: Path, stored: np.ndarray, positions=True, slope=2.0, intercept=-1024.0) -> Path:
    """Slices k of ``stored`` (slices, rows, cols) written in a shuffled file order, at z = 5 − 2.5 k (so the
    sorted order is the reverse of k) and with InstanceNumber k (which disagrees with the positions)."""
    folder.mkdir()
    series = generate_uid()
    for k in np.random.default_rng(0).permutation(len(stored)):
        z = 5.0 - 2.5 * k if positions else None
        _dicom_slice(
            folder / f"im{k * 7 % 5}_{k}.dcm", stored[k], series, z=z, instance=int(k) + 1, slope=slope, intercept=intercept
        )
    return folder


def _ifft2c(k: np.ndarray) -> np.ndarray:
    return np.fft.fftshift(np.fft.ifft2(np.fft.ifftshift(k, axes=(-2, -1)), norm="ortho"), axes=(-2, -1))


def _fft2c(x: np.ndarray) -> np.ndarray:
    return np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(x, axes=(-2, -1)), norm="ortho"), axes=(-2, -1))


HEADER = b"<ismrmrdHeader><encoding><reconSpace><matrixSize><x>8</x><y>8</y><z>1</z></matrixSize></reconSpace></encoding></ismrmrdHeader>"


def _fastmri(path: Path, coils: int = 3, recon: bool = True, kspace=None) -> tuple[Path, np.ndarray]:
    """A (2 slices, coils, 16, 12) k-space of a known magnitude image (the image times coil sensitivities
    s_c with Σ|s_c|² = 1, so its root-sum-of-squares is the image), the header's 8×8 reconstruction size and,
    when ``recon``, ``reconstruction_rss`` = that image's central 8×8 times 1.5 (a different array)."""
    rng = np.random.default_rng(1)
    image = rng.random((2, 16, 12)) + 0.1
    phase = np.exp(2j * np.pi * rng.random((2, coils, 16, 12)))
    sens = rng.random((coils, 16, 12)) + 0.2
    sens = sens / np.sqrt((sens**2).sum(axis=0))  # Σ_c s_c² = 1
    coil_images = image[:, None] * sens[None] * phase
    with h5py.File(path, "w") as f:
        data = _fft2c(coil_images).astype(np.complex64) if kspace is None else kspace
        f["kspace"] = data if coils > 1 or kspace is not None else data[:, 0]
        f["ismrmrd_header"] = HEADER
        if recon:
            f["reconstruction_rss"] = (1.5 * image[:, 4:12, 2:10]).astype(np.float32)
    return path, image


def test_nifti_reads_as_the_transposed_array_with_its_scaling(tmp_path):
    stored = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)
    path = _nifti(tmp_path / "scan.nii.gz", stored, slope=2.0, inter=-5.0)
    scan = read_scan(path)
    np.testing.assert_array_equal(scan, stored.T * 2.0 - 5.0)  # (i, j, k) -> (k, j, i), scl_slope and scl_inter
    dm = VolumeDataModule(path=str(path), resolution=None, mode="density", split="all")
    expected = (scan - scan.min()) / (scan.max() - scan.min())  # min–max, as for every float volume
    np.testing.assert_allclose(dm.values.reshape(4, 3, 2).numpy(), expected, atol=1e-7)


def test_dicom_series_is_sorted_by_position_along_the_normal_and_rescaled(tmp_path):
    stored = np.random.default_rng(2).integers(-200, 800, size=(4, 6, 5))
    scan = read_scan(_dicom_series(tmp_path / "series", stored))
    np.testing.assert_array_equal(scan, stored[::-1] * 2.0 - 1024.0)  # z decreases with k: sorted in reverse
    # without positions the InstanceNumber orders them
    scan = read_scan(_dicom_series(tmp_path / "no_positions", stored, positions=False, slope=1.0, intercept=0.0))
    np.testing.assert_array_equal(scan, stored.astype(np.float64))
    # one file is one slice
    one = read_scan(next((tmp_path / "no_positions").glob("*_2.dcm")))
    np.testing.assert_array_equal(one, stored[2].astype(np.float64))


@pytest.mark.parametrize("coils", [1, 3], ids=["single-coil", "multi-coil"])
def test_fastmri_gives_its_reconstruction_else_the_rss_of_its_kspace_cropped_by_the_header(tmp_path, coils):
    path, image = _fastmri(tmp_path / "file_recon.h5", coils=coils)
    np.testing.assert_allclose(read_scan(path), 1.5 * image[:, 4:12, 2:10], rtol=1e-6)
    np.testing.assert_allclose(read_scan(path, key="kspace"), image[:, 4:12, 2:10], rtol=1e-5)  # the k-space asked for
    path, image = _fastmri(tmp_path / "file_kspace.h5", coils=coils, recon=False)
    np.testing.assert_allclose(read_scan(path), image[:, 4:12, 2:10], rtol=1e-5)  # √Σ|F⁻¹k_c|² = image, centre 8×8


def test_scans_are_the_ground_truth_of_ct_and_mri_simulations(tmp_path):
    volume = np.random.default_rng(3).random((12, 12, 5)) * 100.0  # (i, j, k): read as (5, 12, 12)
    nifti = _nifti(tmp_path / "v.nii", volume.astype(np.float32))
    ct = CTDataModule(resolution=12, angles=6, scan=str(nifti), slice_index=3)
    scan = volume.astype(np.float32).T.astype(np.float64)
    unit = (scan - scan.min()) / (scan.max() - scan.min())
    np.testing.assert_allclose(ct.values.reshape(12, 12).numpy(), unit[3], atol=1e-6)  # native size: no resampling
    assert ct.describe() == str(nifti) and ct.has_ground_truth
    ct.setup("fit")
    torch.testing.assert_close(ct.measurements, ct.operator(ct.values_grid()))  # simulated from the scan
    # a window in physical units: v' = clip((v − 20)/(60 − 20), 0, 1)
    windowed = CTDataModule(resolution=12, scan=str(nifti), slice_index=3, value_range=[20.0, 60.0])
    np.testing.assert_allclose(windowed.values.reshape(12, 12).numpy(), np.clip((scan[3] - 20) / 40, 0, 1), atol=1e-6)
    # fastMRI: the reconstruction's slice 1, 8×8 -> 4×4 by area averaging (2×2 block means)
    path, image = _fastmri(tmp_path / "f.h5")
    recon = 1.5 * image[:, 4:12, 2:10]
    mri = MRIDataModule(resolution=4, ndim=2, scan=str(path), slice_index=1, samples=10)
    unit = (recon - recon.min()) / (recon.max() - recon.min())
    np.testing.assert_allclose(mri.values.reshape(4, 4).numpy(), unit[1].reshape(4, 2, 4, 2).mean(axis=(1, 3)), atol=1e-6)
    # a DICOM series as a 3D MRI volume: (4, 6, 5) padded with its minimum to 6³ and resampled to 6³
    stored = np.random.default_rng(4).integers(0, 1000, size=(4, 6, 5))
    mri3 = MRIDataModule(resolution=6, ndim=3, scan=str(_dicom_series(tmp_path / "s", stored)))
    assert mri3.shape == (6, 6, 6) and float(mri3.values.min()) == 0.0 and float(mri3.values.max()) <= 1.0


def test_a_missing_reader_package_names_the_extra_to_install(tmp_path, monkeypatch):
    path = _nifti(tmp_path / "v.nii", np.ones((4, 4, 4), dtype=np.float32))
    monkeypatch.setitem(sys.modules, "nibabel", None)
    with pytest.raises(InputError, match=r"reading NIfTI needs nibabel: pip install 'inr\[interop\]'"):
        read_scan(path)


def test_scan_options_that_contradict_each_other_are_refused(tmp_path):
    nifti = _nifti(tmp_path / "v.nii.gz", np.random.default_rng(5).random((8, 8, 3)).astype(np.float32))
    with pytest.raises(InputError, match="out of range for 3 slices"):
        CTDataModule(resolution=8, scan=str(nifti), slice_index=3).values  # noqa: B018
    with pytest.raises(InputError, match="measured data.sinogram excludes it"):
        CTDataModule(resolution=8, scan=str(nifti), sinogram=str(tmp_path / "s.npy"))
    flat = _nifti(tmp_path / "flat.nii", np.random.default_rng(5).random((8, 8, 1)).astype(np.float32))
    with pytest.raises(InputError, match="2D scan of shape .* cannot be the ground truth of a 3D grid"):
        MRIDataModule(resolution=8, ndim=3, scan=str(flat)).values  # noqa: B018


def _bad(tmp_path, capsys, config, *args) -> str:
    runs = tmp_path / "runs"
    with pytest.raises(SystemExit) as exc:
        cli_main(["--config", config, "--trainer.max_steps", "1", "--trainer.logger.init_args.save_dir", str(runs), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert not list(runs.glob("*/version_*"))  # nothing half-written
    return err[0]


@pytest.mark.slow
def test_bad_medical_files_exit_2_with_one_line_through_the_command(tmp_path, capsys):
    vol = ["--data.init_args.resolution", "null", "--data.init_args.mode", "density"]
    missing = tmp_path / "missing.nii.gz"
    assert f"{missing}: file not found" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(missing), *vol)
    fake = tmp_path / "fake.nii.gz"
    fake.write_text("not a NIfTI file\n")
    assert "not a readable NIfTI file" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(fake), *vol)
    flat = _nifti(tmp_path / "flat.nii", np.random.default_rng(6).random((7, 9)).astype(np.float32))
    assert "is not a volume" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(flat), *vol)
    nan = np.random.default_rng(6).random((4, 5, 6)).astype(np.float32)
    nan[1, 2, 3] = np.nan
    path = _nifti(tmp_path / "nan.nii.gz", nan)
    assert "NaN or infinite" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(path), *vol)
    empty = tmp_path / "empty_series"
    empty.mkdir()
    assert "an empty DICOM series" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(empty), *vol)
    mixed = _dicom_series(tmp_path / "mixed", np.zeros((3, 6, 5), dtype=int))
    _dicom_slice(mixed / "odd.dcm", np.zeros((6, 5), dtype=int), series=generate_uid())
    assert "holds 2 DICOM series" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(mixed), *vol)
    sizes = _dicom_series(tmp_path / "sizes", np.arange(90).reshape(3, 6, 5))
    from pydicom import dcmread

    uid = dcmread(next(iter(sizes.glob("*.dcm")))).SeriesInstanceUID
    _dicom_slice(sizes / "odd.dcm", np.zeros((6, 4), dtype=int), series=uid, z=-10.0)
    assert "inconsistent sizes" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(sizes), *vol)
    not_dicom = tmp_path / "not_dicom"
    not_dicom.mkdir()
    (not_dicom / "notes.txt").write_text("hello\n")
    assert "not a readable DICOM image" in _bad(tmp_path, capsys, "volume.yaml", "--data.init_args.path", str(not_dicom), *vol)
    # fastMRI as the ground truth of an MRI simulation
    mri = ["--data.init_args.resolution", "8", "--data.init_args.ndim", "2"]
    text = tmp_path / "text.h5"
    text.write_text("not HDF5\n")
    assert "not a readable HDF5 file" in _bad(tmp_path, capsys, "mri.yaml", "--data.init_args.scan", str(text), *mri)
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["images"] = np.zeros((2, 4, 4))
    assert "no fastMRI 'kspace' or reconstruction dataset (found ['images'])" in _bad(
        tmp_path, capsys, "mri.yaml", "--data.init_args.scan", str(tmp_path / "other.h5"), *mri
    )
    bad_k = np.ones((2, 16, 12), dtype=np.complex64)
    bad_k[0, 3, 3] = np.inf
    path, _ = _fastmri(tmp_path / "inf.h5", coils=1, recon=False, kspace=bad_k)
    assert "'kspace' contains NaN or infinite values" in _bad(
        tmp_path, capsys, "mri.yaml", "--data.init_args.scan", str(path), *mri
    )
    real_k = np.ones((16, 12), dtype=np.float32)
    path, _ = _fastmri(tmp_path / "flat_k.h5", coils=1, recon=False, kspace=real_k)
    assert "'kspace' must be complex (slices, H, W) or (slices, coils, H, W)" in _bad(
        tmp_path, capsys, "mri.yaml", "--data.init_args.scan", str(path), *mri
    )


@pytest.mark.slow
def test_ct_trains_on_a_nifti_slice_through_the_command(tmp_path, capsys):
    """configs/ct.yaml with a NIfTI volume as the object: a few steps run and report the PSNR against it."""
    volume = np.zeros((16, 16, 3), dtype=np.float32)
    volume[4:12, 5:11, :] = 1.0
    path = _nifti(tmp_path / "obj.nii.gz", volume)
    cli_main(
        [
            "--config",
            "ct.yaml",
            "--data.init_args.resolution",
            "16",
            "--data.init_args.scan",
            str(path),
            "--trainer.max_steps",
            "3",
            "--trainer.logger.init_args.save_dir",
            str(tmp_path / "runs"),
            "--trainer.enable_progress_bar",
            "false",
            "--model.init_args.network.init_args.width",
            "16",
            "--model.init_args.encoder.init_args.num_features",
            "16",
        ]
    )
    summary = [l for l in capsys.readouterr().out.splitlines() if l.startswith("summary:")][-1]
    assert "full/psnr" in summary and str(tmp_path / "runs" / "ct" / "version_0") in summary
