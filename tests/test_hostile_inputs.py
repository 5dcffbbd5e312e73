"""The hostile-input catalogue of docs/reliability.md, run against every reader of a user's file the package has:
files that declare more than memory holds (NIfTI, HDF5, DICOM, .npy, .npz, PNG, JPEG, TIFF, GIF, WAV, JSON, meshes),
decompression bombs, headers that lie (a .npy's shape, a WAV's format and sizes) and files that are not what their
name says. Every reader meets every case written in a format it reads, and each refusal is one line, an
``InputError`` naming the file and saying what is wrong with it (not only an exception's name). The readers' list
is checked complete: every ``read_*`` function of ``inr.data``, ``inr.io`` and the codec's input is in it, or
named below as reading through one that is, and every extension the data modules dispatch on has a reader here.
The files are a few KiB, made here; the memory is reported small (1 MiB) where a case is about size."""

from __future__ import annotations

import functools
import gzip
import importlib
import inspect
import io
import json
import pkgutil
import re
import struct
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import inr.errors
from inr.errors import InputError, MemoryLimit

MiB = 2**20


@dataclass(frozen=True)
class Reader:
    """A reader of a user's file (``module:function``), the suffixes it reads and how a test calls it on a path."""

    name: str
    suffixes: tuple[str, ...]
    read: Callable[[Path], object]


def _call(name: str, *args, **kwargs) -> Callable[[Path], object]:
    module, function = name.split(":")
    return lambda path: getattr(importlib.import_module(module), function)(path, *args, **kwargs)


def _blender_scene(path: Path) -> object:
    """A blender scene whose one training frame is the file (``file_path`` is joined to the scene's folder)."""
    from inr.data.posed_images import read_blender_split

    scene = path.parent / f"scene_{path.stem}"
    scene.mkdir()
    frame = {"file_path": str(path), "transform_matrix": np.eye(4).tolist()}
    (scene / "transforms_train.json").write_text(json.dumps({"camera_angle_x": 0.7, "frames": [frame]}))
    return read_blender_split(scene, "train", (1.0, 1.0, 1.0))


def _mesh(path: Path) -> object:
    """A mesh file read and checked, as every caller of ``read_mesh_file`` does (it returns what the file holds)."""
    from inr.data.mesh import check_mesh, read_mesh_file

    verts, faces = read_mesh_file(path)
    check_mesh(verts, faces, str(path))
    return verts, faces


IMAGES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")
MESHES = (".obj", ".ply", ".stl", ".off", ".glb")
MOVIES = (".mp4", ".webm", ".mov", ".mkv", ".avi")
SCANS = (".nii", ".nii.gz", ".h5", ".hdf5", ".dcm")
READERS = [
    Reader("inr.data.image:read_image", IMAGES, _call("inr.data.image:read_image")),
    Reader("inr.codec.encode:read_codec_image", IMAGES, _call("inr.codec.encode:read_codec_image")),
    Reader("inr.data.degraded:read_lowres", (*IMAGES, ".npy"), _call("inr.data.degraded:read_lowres", "rgb")),
    Reader("inr.data.signal_classes:read_ct_truth", (*IMAGES, ".npy"), _call("inr.data.signal_classes:read_ct_truth", 32)),
    Reader("inr.data.signal_classes:read_shape", (*MESHES, ".npy"), _call("inr.data.signal_classes:read_shape", 8)),
    Reader("inr.data.video:read_sequence", IMAGES, _call("inr.data.video:read_sequence")),  # the path as its glob
    Reader("inr.data.posed_images:read_blender_split", (".png",), _blender_scene),
    Reader("inr.data.video:read_gif", (".gif",), _call("inr.data.video:read_gif")),
    Reader("inr.data.video:read_movie", MOVIES, _call("inr.data.video:read_movie")),
    Reader("inr.io.video:read_video", MOVIES, _call("inr.io.video:read_video")),
    Reader("inr.data.signal:read_wav", (".wav",), _call("inr.data.signal:read_wav")),
    Reader(
        "inr.data.volume:read_volume_array", (".npy", ".npz", ".tif", ".tiff", *SCANS), _call("inr.data.volume:read_volume_array")
    ),
    Reader("inr.data.medical:read_scan", SCANS, _call("inr.data.medical:read_scan")),
    Reader("inr.data.measurements:read_array", (".npy",), _call("inr.data.measurements:read_array", "k-space", True)),
    Reader("inr.data.posed_images:read_npz", (".npz",), _call("inr.data.posed_images:read_npz")),
    Reader("inr.data.cameras:read_camera_path", (".json",), _call("inr.data.cameras:read_camera_path")),
    Reader("inr.io.bounded:read_json", (".json",), _call("inr.io.bounded:read_json", "a JSON document")),
    Reader("inr.data.mesh:read_mesh_file", MESHES, _mesh),
]
# read_* functions that read through a listed reader, or read no user's file; each with the reason
THROUGH = {
    "inr.data.image:read_png16": "16-bit colour PNGs inside read_image",
    "inr.data.medical:read_nifti": "read_scan, by the file's name",
    "inr.data.medical:read_dicom_series": "read_scan, by the file's name",
    "inr.data.medical:read_fastmri": "read_scan, by the file's name",
    "inr.data.signal_classes:read_directory": "read_image, read_ct_truth and read_shape, file by file",
    "inr.data.posed_images:read_blender": "read_blender_split, split by split",
    "inr.io.checkpoint:read_init": "a learned init's checkpoint, not a user's data file: torch.load(weights_only=True) "
    "behind the checkpoint reader's bounds, with its own damaged-file tests (tests/tasks/test_init_from.py, tests/codec/test_init.py)",
    "inr.io.checkpoint:read_checkpoint": "the sized, weights_only load that read_init reads through (and inner_rates)",
}
PACKAGES = ("inr.data", "inr.io")
MODULES = ("inr.codec.encode",)  # the codec's input; its own .inr files have their reader and tests (tests/codec)


# ---- the files ------------------------------------------------------------------------------------------------


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def _png(width: int, height: int, depth: int = 8, colour: int = 2, rows: bytes = b"", extra: bytes = b"") -> bytes:
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    idat = _chunk(b"IDAT", zlib.compress(rows, 9))
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + extra + idat + _chunk(b"IEND", b"")


def png_bomb(depth: int) -> Callable[[Path], None]:
    """1024² RGB zeros (3 or 6 MiB) deflated to a few KiB."""
    return lambda p: p.write_bytes(_png(1024, 1024, depth, 2, bytes(1 + 1024 * 3 * depth // 8) * 1024))


@functools.cache
def _inflating(size: int) -> bytes:
    return zlib.compress(bytes(size), 9)


def png_text_bomb(tag: bytes) -> Callable[[Path], None]:
    """A 4×4 PNG whose zTXt or iCCP chunk inflates to 16 MiB (16 KiB stored)."""
    return lambda p: p.write_bytes(_png(4, 4, 8, 2, (b"\0" + bytes(12)) * 4, _chunk(tag, b"Comment\0\0" + _inflating(16 * MiB))))


def jpeg_huge(p: Path) -> None:
    """An 8×8 JPEG whose frame header (SOF0) says 65,000 × 65,000."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buffer, "JPEG")
    data = bytearray(buffer.getvalue())
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", 65000, 65000)
    p.write_bytes(bytes(data))


def tiff_bomb(p: Path) -> None:
    import tifffile

    tifffile.imwrite(p, np.zeros((1024, 1024), dtype=np.uint8), compression="zlib")


def gif_frames(p: Path) -> None:
    import imageio.v3 as iio

    frames = np.zeros((40, 128, 128, 3), dtype=np.uint8)
    frames[np.arange(40), np.arange(40), 0] = 255  # distinct frames, so the encoder keeps every one
    iio.imwrite(p, frames, loop=0)


def nifti_bomb(p: Path) -> None:
    """64³ int8 zeros gzipped: 4.5 MB once read and mapped to [0, 1]."""
    import nibabel as nib

    nib.save(nib.Nifti1Image(np.zeros((64, 64, 64), dtype=np.int8), np.eye(4)), str(p))


def nifti_huge(p: Path) -> None:
    """A NIfTI-2 header declaring 10¹⁵ float32 voxels, 1 KiB of them held."""
    import nibabel as nib

    header = nib.Nifti2Header()
    header.set_data_shape((100_000, 100_000, 100_000))
    header.set_data_dtype(np.float32)
    with gzip.open(p, "wb") as f:
        f.write(header.binaryblock + bytes(int(header["vox_offset"]) - header.sizeof_hdr + 1024))


def hdf5_bomb(p: Path) -> None:
    import h5py

    with h5py.File(p, "w") as f:
        f.create_dataset("kspace", data=np.zeros((4, 2, 64, 64), dtype=np.complex64), compression="gzip")


def dicom_frames(p: Path) -> None:
    """One DICOM file declaring 2³¹ − 1 frames of 65535² int16 values and holding 16 bytes of them."""
    # the file tests/conftest.py's write_dicom writes, written here: CASES is built at import, which no fixture reaches
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID = CTImageStorage, generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID, ds.SOPInstanceUID, ds.SeriesInstanceUID = CTImageStorage, meta.MediaStorageSOPInstanceUID, "1.2.3"
    ds.Rows, ds.Columns, ds.SamplesPerPixel, ds.PhotometricInterpretation = 65535, 65535, 1, "MONOCHROME2"
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 1
    ds.InstanceNumber, ds.NumberOfFrames, ds.PixelData = 1, 2**31 - 1, bytes(16)
    ds.save_as(p, enforce_file_format=True)


def _npy(header: str, data: bytes = b"", version: int = 1) -> bytes:
    text = header.encode("latin1")
    start = 10 if version == 1 else 12
    text += b" " * (64 - (start + len(text) + 1) % 64) + b"\n"
    length = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text + data


def npy(header: str, data: bytes = b"", version: int = 1) -> Callable[[Path], None]:
    return lambda p: p.write_bytes(_npy(header, data, version))


def npy_large(p: Path) -> None:
    np.save(p, np.zeros((64, 64, 16), dtype=np.float32))  # 256 KiB, beyond half of 1 MiB once converted


def npz_bomb(p: Path) -> None:
    np.savez_compressed(p, images=np.zeros((16, 128, 128, 3), dtype=np.uint8))  # 768 KiB in a few KiB


def npz_member(header: str, data: bytes) -> Callable[[Path], None]:
    def write(p: Path) -> None:
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("images.npy", _npy(header, data))

    return write


def wav(
    channels: int = 1, bits: int = 16, block: int = 2, rate: int = 8000, fmt_size: int = 16, data: bytes = bytes(400), held=None
) -> Callable[[Path], None]:
    """A PCM WAV whose fmt chunk says what it is given to say; ``held`` bytes of its data kept (default all)."""
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * block, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", fmt_size) + fmt + b"data" + struct.pack("<I", len(data)) + data
    whole = b"RIFF" + struct.pack("<I", len(body)) + body
    return lambda p: p.write_bytes(whole if held is None else whole[: len(whole) - len(data) + held])


def wav_long(p: Path) -> None:
    wav(channels=2, block=4, data=bytes(4 * 40_000))(p)  # 40,000 stereo samples: 1.1 MB once read


def json_deep(p: Path) -> None:
    p.write_text('{"camera_path": ' + "[" * 100_000 + "]" * 100_000 + "}")


def json_large(p: Path) -> None:
    with open(p, "wb") as f:
        f.truncate(65 * MiB)  # sparse: its size is what a reader would take in


def garbage(p: Path) -> None:
    p.write_bytes(b"this is not what its name says " * 8)


@dataclass(frozen=True)
class Case:
    """A hostile file: its name (the suffix decides which readers meet it), how it is made, what the refusal
    says (the same words from every reader), and whether the memory is reported small (1 MiB)."""

    name: str
    write: Callable[[Path], None]
    says: str
    small_memory: bool = False

    @property
    def suffix(self) -> str:
        return ".nii.gz" if self.name.endswith(".nii.gz") else Path(self.name).suffix


SIZED = "needs an estimated"
CASES = [
    # beyond memory, declared by a header: refused before the data is read or inflated
    Case("bomb.nii.gz", nifti_bomb, "a 64×64×64 int8 NIfTI volume (its header) " + SIZED, small_memory=True),
    Case("huge.nii.gz", nifti_huge, "a 100000×100000×100000 float32 NIfTI volume (its header) " + SIZED),
    Case("bomb.h5", hdf5_bomb, "dataset 'kspace' of 4×2×64×64 complex64 (its header) " + SIZED, small_memory=True),
    Case("frames.dcm", dicom_frames, "a DICOM series of 2147483647×65535×65535 values of 2 bytes (its headers)"),
    Case("large.npy", npy_large, "of 64×64×16 float32 (its header) " + SIZED, small_memory=True),
    Case("bomb.npz", npz_bomb, "array 'images' of 16×128×128×3 uint8 (its header) " + SIZED, small_memory=True),
    Case("bomb.png", png_bomb(8), SIZED, small_memory=True),
    Case("bomb16.png", png_bomb(16), SIZED, small_memory=True),
    Case("huge.png", lambda p: p.write_bytes(_png(2**31 - 1, 2**31 - 1, 16, 6, b"\0" * 64)), SIZED),
    Case("huge.jpg", jpeg_huge, "4,225,000,000 pixels, beyond Pillow's decompression-bomb limit"),
    Case("bomb.tif", tiff_bomb, SIZED, small_memory=True),
    Case("frames.gif", gif_frames, "40 frames of 128×128 (its header) " + SIZED, small_memory=True),
    Case("long.wav", wav_long, "40,000 samples of 2 channels (its header) " + SIZED, small_memory=True),
    Case("large.json", json_large, "65.0 MiB, more than the 64.0 MiB"),
    Case("deep.json", json_deep, "nested too deeply"),
    Case("large.ply", lambda p: p.write_bytes(bytes(64 * 1024)), "triangles in 0.1 MiB) needs an estimated", small_memory=True),
    # decompression bombs beyond a decoder's own bound
    Case("ztxt.png", png_text_bomb(b"zTXt"), "its zTXt chunk inflates beyond 1 MiB, Pillow's bound on a PNG metadata chunk"),
    Case("iccp.png", png_text_bomb(b"iCCP"), "its iCCP chunk inflates beyond 1 MiB, Pillow's bound on a PNG metadata chunk"),
    # headers that lie
    Case(
        "header.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }" + " " * 20_000, bytes(32), version=2),
        "its .npy header is 20,084 bytes long, more than the 10,000 numpy reads from a file it does not trust",
    ),
    Case(
        "short.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (100, 100, 4), }", bytes(80)),
        "its .npy header declares 100×100×4 float64 (320,000 bytes) but 80 bytes of data follow it",
    ),
    Case(
        "negative.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (-5, 3, 3), }", bytes(80)),
        "its .npy header declares a negative dimension, shape (-5, 3, 3)",
    ),
    Case(
        "objects.npy",
        npy("{'descr': '|O', 'fortran_order': False, 'shape': (2, 2, 2), }", bytes(64)),
        "its .npy header declares Python objects (object), which only pickle reads",
    ),
    Case("text.npy", garbage, "not a .npy array (it does not start with numpy's magic string)"),
    Case(
        "short.npz",
        npz_member("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 8, 8, 3), }", bytes(100)),
        "array 'images': its .npy header declares 2×8×8×3 uint8 (384 bytes) but 100 bytes of data follow it",
    ),
    Case(
        "negative.npz",
        npz_member("{'descr': '|u1', 'fortran_order': False, 'shape': (-2, 8, 8, 3), }", bytes(100)),
        "array 'images': its .npy header declares a negative dimension",
    ),
    Case("text.npz", garbage, "not a readable .npz archive (not a zip file)"),
    Case("channels.wav", wav(channels=0), "its fmt chunk declares 0 channels"),
    Case("bits.wav", wav(bits=0), "its fmt chunk declares 0 bits per sample"),
    Case("rate.wav", wav(rate=0), "its fmt chunk declares a sample rate of 0"),
    Case("block.wav", wav(bits=8, block=2), "its fmt chunk declares 8-bit samples in 2-byte containers"),
    Case("fmt.wav", wav(fmt_size=0x7FFFFFF0), "its fmt chunk declares 2,147,483,632 bytes but 424 remain in the file"),
    Case("cut.wav", wav(held=100), "its data chunk declares 400 bytes but 100 follow"),
    # not what the name says
    Case("text.png", garbage, "not a readable image (its contents are no PNG or other format Pillow reads)"),
    Case("text.jpg", garbage, "not a readable image (its contents are no JPG or other format Pillow reads)"),
    Case("text.wav", garbage, "not a readable WAV file (File format"),
    Case("text.gif", garbage, "not a readable GIF"),
    Case("text.nii.gz", garbage, "not a readable NIfTI file"),
    Case("text.h5", garbage, "not a readable HDF5 file"),
    Case("text.dcm", garbage, "not a readable DICOM image"),
    Case("text.ply", garbage, "not a readable mesh (ValueError: Not a ply file!)"),
    Case("text.obj", garbage, "the mesh is empty (no triangles)"),
    Case("text.mp4", garbage, "not a readable video"),
    Case("text.json", garbage, "not valid JSON"),
]


def _reads(reader: Reader, case: Case) -> bool:
    return case.suffix in reader.suffixes


PAIRS = [pytest.param(r, c, id=f"{r.name.split(':')[1]}-{c.name}") for r in READERS for c in CASES if _reads(r, c)]
EXCEPTION_ONLY = r"\((\w+Error|\w+Exception|\w+Warning)\)"  # "(ValueError)": an exception's name for the fault


@pytest.mark.parametrize("reader, case", PAIRS)
def test_every_reader_refuses_every_hostile_file_in_one_line_naming_it(tmp_path, monkeypatch, reader, case):
    path = tmp_path / case.name
    case.write(path)
    assert path.stat().st_size < 512 * 1024 or case.name == "large.json"  # small (that one sparse)
    if case.small_memory:
        monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: MemoryLimit(MiB))
    with pytest.raises(InputError) as info:
        reader.read(path)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert str(path) in message and case.says in message, message
    assert not re.search(EXCEPTION_ONLY, message), message


IMAGE_CASES = [c for c in CASES if c.suffix in IMAGES]


@pytest.mark.parametrize("case", IMAGE_CASES, ids=[c.name for c in IMAGE_CASES])
def test_the_codec_command_refuses_every_hostile_image_in_one_line(tmp_path, monkeypatch, capsys, case):
    """``inr-codec encode`` through its entry point (``inr.commands:codec``): one ``error:`` line, exit 2,
    nothing written."""
    from inr.commands import codec

    path, out = tmp_path / case.name, tmp_path / "out.inr"
    case.write(path)
    if case.small_memory:
        monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: MemoryLimit(MiB))
    monkeypatch.setattr(sys, "argv", ["inr-codec", "encode", str(path), "-o", str(out), "--bpp", "1"])
    with pytest.raises(SystemExit) as exit_info:
        codec()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert exit_info.value.code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}: ") and case.says in lines[0] and "Traceback" not in err, err
    assert not out.exists()


def _read_functions() -> set[str]:
    """``module:function`` of every function named ``read_*`` defined in the packages and modules above."""
    names = list(MODULES)
    for package in PACKAGES:
        root = importlib.import_module(package)
        names += [f"{package}.{m.name}" for m in pkgutil.iter_modules(root.__path__)]
    found = set()
    for name in names:
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if attribute.startswith("read_") and inspect.isfunction(value) and value.__module__ == name:
                found.add(f"{name}:{attribute}")
    return found


def test_the_catalogue_meets_every_reader_the_package_has():
    listed = {r.name for r in READERS}
    assert _read_functions() == listed | set(THROUGH), "a reader is missing from READERS (or THROUGH, with a reason)"
    unmet = [r.name for r in READERS if not any(_reads(r, c) for c in CASES)]
    assert unmet == [], f"readers that meet no hostile case: {unmet}"


def test_every_extension_the_data_modules_dispatch_on_has_a_reader_here():
    from inr.data.image import IMAGE_EXTENSIONS
    from inr.data.medical import DICOM_SUFFIX, HDF5_SUFFIXES, NIFTI_SUFFIXES
    from inr.data.mesh import MESH_EXTENSIONS
    from inr.data.signal import WAV_EXTENSIONS
    from inr.data.video import VIDEO_EXTENSIONS
    from inr.data.volume import VOLUME_EXTENSIONS

    dispatched = {
        *IMAGE_EXTENSIONS,
        *WAV_EXTENSIONS,
        *VOLUME_EXTENSIONS,
        *NIFTI_SUFFIXES,
        *HDF5_SUFFIXES,
        DICOM_SUFFIX,
        *VIDEO_EXTENSIONS,
        *MESH_EXTENSIONS,
        ".npz",
        ".json",
    }
    read_here = {s for r in READERS for s in r.suffixes}
    assert dispatched <= read_here, sorted(dispatched - read_here)


@pytest.mark.parametrize("reader", [r for r in READERS if ".jpg" in r.suffixes], ids=lambda r: r.name.split(":")[1])
def test_every_image_reader_reads_a_cmyk_jpeg_as_its_colours(tmp_path, reader):
    """A CMYK JPEG (Pillow's, made from a known RGB image) is read by every image reader through Pillow's conversion
    to RGB: within 3 levels of the RGB image (JPEG at quality 95 of a smooth image; gray readers against its luma)."""
    from PIL import Image

    y, x = np.mgrid[0:32, 0:32] / 32
    rgb = (np.stack([y, x, 0.5 + 0.5 * np.sin(6 * x * y)], axis=-1) * 255).round().astype(np.uint8)
    path = tmp_path / "print.jpg"
    Image.fromarray(rgb).convert("CMYK").save(path, quality=95)
    out = reader.read(path)
    image = np.asarray(out[0] if isinstance(out, tuple) else out, dtype=np.float64).reshape(32, 32, -1)
    expected = rgb / 255.0 if image.shape[2] == 3 else (rgb / 255.0 @ [0.299, 0.587, 0.114])[..., None]
    assert np.abs(image - expected).max() <= 3 / 255, np.abs(image - expected).max()
