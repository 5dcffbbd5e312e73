"""Every reader of a user's file checks the sizes the file declares (a header's shape, an archive member's, a
JSON document's length, nesting and pose count) before it allocates or decompresses anything, and refuses
what would not fit in one line that says what reading it would take. The files are small bombs written here:
a few KiB on disk that declare (and, decompressed, hold) far more. The memory the reader allocated is
measured with tracemalloc (numpy's buffers included) against what decompressing would have taken."""

import gzip
import json
import struct
import tracemalloc
import wave
import zlib

import h5py
import nibabel as nib
import numpy as np
import pytest

import inr.errors
from inr.data.cameras import MAX_CAMERA_PATH_POSES, read_camera_path
from inr.data.image import read_image
from inr.data.measurements import read_array
from inr.data.medical import read_scan
from inr.data.posed_images import read_blender_split, read_npz
from inr.data.signal import read_wav
from inr.data.video import read_gif
from inr.data.volume import read_volume_array
from inr.errors import InputError

MiB = 2**20


@pytest.fixture
def little_memory(monkeypatch):
    """The host reports 4 MiB available: a reader may then take 2 MiB (``check_memory``'s half)."""
    monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: 4 * MiB)


def refused_within(call, limit_bytes: int) -> str:
    """The one-line refusal of ``call()``, and a check that it allocated under ``limit_bytes`` before refusing."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "\n" not in message and peak < limit_bytes, (peak, message)
    return message


def nifti_bomb(path, shape=(128, 128, 128)):
    """A gzipped NIfTI of zeros: 2 MiB of int8 voxels in a file of a few KiB."""
    nib.save(nib.Nifti1Image(np.zeros(shape, dtype=np.int8), np.eye(4)), str(path))
    assert path.stat().st_size < 64 * 1024
    return path


def test_a_gzipped_nifti_bomb_is_refused_before_it_is_decompressed(tmp_path, little_memory):
    bomb = nifti_bomb(tmp_path / "bomb.nii.gz")
    message = refused_within(lambda: read_scan(bomb), MiB // 2)  # the voxels alone are 2 MiB
    assert message.startswith(f"{bomb}: a 128×128×128 int8 NIfTI volume (its header) needs an estimated")
    assert "MiB available" in message and "crop or downsample the scan" in message


def test_a_nifti_header_declaring_more_than_any_memory_is_one_line_not_a_memory_error(tmp_path):
    """NIfTI-2 dimensions are int64: a 348-byte header may declare 10¹⁵ voxels (a bare MemoryError before)."""
    header = nib.Nifti2Header()
    header.set_data_shape((100_000, 100_000, 100_000))
    header.set_data_dtype(np.float32)
    path = tmp_path / "huge.nii.gz"
    with gzip.open(path, "wb") as f:
        f.write(header.binaryblock + b"\0" * (int(header["vox_offset"]) - header.sizeof_hdr) + b"\0" * 1024)
    message = refused_within(lambda: read_scan(path), 16 * MiB)
    assert message.startswith(f"{path}: a 100000×100000×100000 float32 NIfTI volume (its header) needs an estimated")
    assert "19558.6 GiB" in message or "GiB, more than" in message


def test_a_compressed_hdf5_dataset_is_refused_before_it_is_read(tmp_path, little_memory):
    path = tmp_path / "bomb.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("kspace", data=np.zeros((4, 2, 128, 128), dtype=np.complex64), compression="gzip")
    assert path.stat().st_size < 256 * 1024
    message = refused_within(lambda: read_scan(path), MiB // 2)  # the k-space alone is 1 MiB
    assert message.startswith(f"{path}: dataset 'kspace' of 4×2×128×128 complex64 (its header) needs an estimated")


def test_a_dicom_series_is_sized_from_its_headers_before_its_pixels_are_decoded(tmp_path, little_memory, write_dicom):
    folder = tmp_path / "series"
    folder.mkdir()
    for k in range(3):
        write_dicom(folder / f"s{k}.dcm", 256, 256, frames=4, instance=k + 1)  # 3 × 4 frames of 256² int16: 1.5 MiB stored
    message = refused_within(lambda: read_scan(folder), MiB // 2)
    assert message.startswith(f"{folder}: a DICOM series of 12×256×256 values of 2 bytes (its headers) needs an estimated")


def test_a_dicom_header_declaring_frames_it_does_not_hold_is_refused_before_decoding(tmp_path, write_dicom):
    path = tmp_path / "one.dcm"
    write_dicom(path, 65535, 65535, frames=2**31 - 1, pixels=b"\0\0" * 8, instance=1)  # 9·10¹⁸ bytes declared, 16 held
    message = refused_within(lambda: read_scan(path), 16 * MiB)
    assert message.startswith(f"{path}: a DICOM series of 2147483647×65535×65535 values of 2 bytes (its headers)")


def _png(path, width, height, depth, colour, rows: bytes):
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    return path


@pytest.mark.parametrize("depth", [8, 16])  # 16-bit colour goes through pypng, which has no limit of its own
def test_a_png_bomb_is_refused_before_its_pixels_are_inflated(tmp_path, little_memory, depth):
    side = 1024  # 3 MiB (8-bit) or 6 MiB (16-bit) of RGB zeros in a file of a few KiB
    row = bytes(1 + side * 3 * depth // 8)
    path = _png(tmp_path / "bomb.png", side, side, depth, 2, row * side)
    assert path.stat().st_size < 64 * 1024
    message = refused_within(lambda: read_image(path), MiB)
    assert message.startswith(f"{path}: a 1024×1024 image of 3 channels of {depth} bits (its header) needs an estimated")


def test_a_png_header_declaring_billions_of_pixels_is_one_line_with_the_estimate(tmp_path):
    path = _png(tmp_path / "huge.png", 2**31 - 1, 2**31 - 1, 16, 6, b"\0" * 64)
    message = refused_within(lambda: read_image(path), 16 * MiB)
    assert message.startswith(f"{path}: a 2147483647×2147483647 image of 4 channels of 16 bits (its header)")


def test_a_gif_of_many_frames_is_refused_before_they_are_decoded(tmp_path, little_memory):
    import imageio.v3 as iio

    frames = np.zeros((40, 128, 128, 3), dtype=np.uint8)
    frames[np.arange(40), np.arange(40), 0] = 255  # distinct frames, so the encoder keeps every one
    iio.imwrite(tmp_path / "many.gif", frames, loop=0)
    path = tmp_path / "many.gif"
    message = refused_within(lambda: read_gif(path), MiB)
    assert message.startswith(f"{path}: 40 frames of 128×128 (its header) needs an estimated")


def test_a_compressed_npz_volume_is_refused_before_its_member_is_inflated(tmp_path, little_memory):
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, volume=np.zeros((128, 128, 128), dtype=np.uint8))  # 2 MiB in a few KiB
    assert path.stat().st_size < 64 * 1024
    message = refused_within(lambda: read_volume_array(path), MiB // 2)
    assert message.startswith(f"{path}: array 'volume' of 128×128×128 uint8 (its header) needs an estimated")


def test_posed_images_in_a_compressed_npz_are_sized_before_they_are_inflated(tmp_path, little_memory):
    path = tmp_path / "scene.npz"
    np.savez_compressed(path, images=np.zeros((16, 128, 128, 3), dtype=np.uint8), poses=np.tile(np.eye(4), (16, 1, 1)), focal=1.0)
    message = refused_within(lambda: read_npz(path), MiB // 2)
    assert message.startswith(f"{path}: array 'images' of 16×128×128×3 uint8 (its header) needs an estimated")


def test_a_measured_array_is_sized_from_its_npy_header_before_it_is_read(tmp_path, little_memory):
    path = tmp_path / "kspace.npy"
    np.save(path, np.zeros((128, 128, 16), dtype=np.complex64))  # 2 MiB
    message = refused_within(lambda: read_array(path, "k-space", complex_ok=True), MiB // 2)
    assert message.startswith(f"{path}: k-space of 128×128×16 complex64 (its header) needs an estimated")


def test_a_wav_file_is_sized_from_its_header_before_it_is_read(tmp_path, little_memory):
    path = tmp_path / "long.wav"
    with wave.open(str(path), "wb") as f:
        f.setnchannels(2)
        f.setsampwidth(2)
        f.setframerate(8000)
        f.writeframes(bytes(2 * 2 * 300_000))  # 1.1 MiB of 16-bit stereo
    message = refused_within(lambda: read_wav(path), MiB // 2)
    assert message.startswith(f"{path}: 300,000 samples of 2 channels (its header) needs an estimated")


def _write_blender(directory, frames: int):
    import imageio.v3 as iio

    directory.mkdir()
    iio.imwrite(directory / "r.png", np.full((128, 128, 3), 7, dtype=np.uint8))
    pose = np.eye(4).tolist()
    data = {"camera_angle_x": 0.7, "frames": [{"file_path": "r", "transform_matrix": pose} for _ in range(frames)]}
    (directory / "transforms_train.json").write_text(json.dumps(data))


def test_a_scene_listing_one_image_many_times_is_sized_before_the_frames_are_read(tmp_path, little_memory):
    """Each frame alone fits; the 64 frames together (one 128² image listed 64 times) do not."""
    _write_blender(tmp_path / "scene", 64)
    message = refused_within(lambda: read_blender_split(tmp_path / "scene", "train", (1.0, 1.0, 1.0)), MiB)
    assert message.startswith(f"{tmp_path / 'scene' / 'transforms_train.json'}: 64 frames of 128×128 needs an estimated")


def _poses(count: int) -> list:
    return [{"camera_to_world": np.eye(4).flatten().tolist()} for _ in range(count)]


def test_a_camera_path_has_the_orbits_cap_on_poses(tmp_path):
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"camera_path": _poses(MAX_CAMERA_PATH_POSES + 1)}))
    with pytest.raises(InputError) as info:
        read_camera_path(path)
    assert str(info.value) == (
        f"--camera_path {path}: 100,001 poses, more than the 100,000 a camera path may have (as --frames of an orbit); "
        "split the path"
    )
    path.write_text(json.dumps({"camera_path": _poses(3)}))
    assert read_camera_path(path).poses.shape == (3, 4, 4)


def test_a_deeply_nested_camera_path_is_one_line_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"camera_path": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError) as info:
        read_camera_path(path)
    assert str(info.value) == f"--camera_path {path}: nested too deeply to be a camera path"


def test_a_camera_path_file_larger_than_its_bound_is_refused_unread(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(65 * MiB)  # a sparse file: its size is what a reader would have to take in
    message = refused_within(lambda: read_camera_path(path), MiB)
    assert message == f"--camera_path {path}: 65.0 MiB, more than the 64.0 MiB a camera path may have"


def test_a_deeply_nested_transforms_file_is_one_line(tmp_path):
    (tmp_path / "scene").mkdir()
    (tmp_path / "scene" / "transforms_train.json").write_text('{"frames": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError, match="transforms_train.json: nested too deeply to be a transforms file$"):
        read_blender_split(tmp_path / "scene", "train", (1.0, 1.0, 1.0))


def test_an_image_beyond_pillows_bomb_limit_says_so_where_memory_would_allow_it(tmp_path, monkeypatch):
    """On a host with memory for it (1 TiB reported), a PNG of 20,000² pixels passes the memory check and meets
    Pillow's own limit: named, with the pixel counts, instead of a bare exception name."""
    monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: 2**40)
    path = _png(tmp_path / "large.png", 20_000, 20_000, 8, 2, bytes(1 + 3 * 20_000) * 4)
    with pytest.raises(InputError) as info:
        read_image(path)
    assert str(info.value) == (
        f"{path}: 400,000,000 pixels, beyond Pillow's decompression-bomb limit of 178,956,970; downsample it first"
    )


def test_a_jpeg_beyond_pillows_bomb_limit_is_named_the_same_way(tmp_path, monkeypatch):
    """A JPEG's size is read by Pillow's header parse, which meets the limit first."""
    from PIL import Image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # a limit of 2000 pixels
    path = tmp_path / "photo.jpg"
    Image.new("RGB", (50, 50)).save(path)
    with pytest.raises(InputError) as info:
        read_image(path)
    assert str(info.value) == f"{path}: 2,500 pixels, beyond Pillow's decompression-bomb limit of 2,000; downsample it first"
