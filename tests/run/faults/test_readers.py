"""Readers: 16-bit colour PNGs read at 16 bits, constant images refused after resizing, WAV lengths and
anti-phase channels, and render chunks that would render nothing."""

import struct
import zlib

import imageio.v3 as iio
import numpy as np
import pytest
from scipy.io import wavfile

from inr.data.image import read_image
from inr.run.mesh import main as mesh_main


def write_png16(path, array):
    """A 16-bit PNG written from the spec (every row Paeth-filtered, PNG 1.2 §6.6), independent of the readers."""
    h, w = array.shape[:2]
    channels = 1 if array.ndim == 2 else array.shape[2]
    raw = array.astype(">u2").reshape(h, -1).view(np.uint8).reshape(h, -1).astype(np.int16)  # (h, w·c·2) bytes
    bpp = 2 * channels
    left, up, up_left = np.zeros_like(raw), np.zeros_like(raw), np.zeros_like(raw)
    left[:, bpp:], up[1:], up_left[1:, bpp:] = raw[:, :-bpp], raw[:-1], raw[:-1, :-bpp]
    p = left + up - up_left
    pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
    predictor = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, up_left))
    rows = np.concatenate([np.full((h, 1), 4, np.uint8), ((raw - predictor) % 256).astype(np.uint8)], axis=1)

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    colour = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    header = struct.pack(">IIBBBBB", w, h, 16, colour, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes())) + chunk(b"IEND", b"")
    )
    return path


@pytest.mark.parametrize("channels", [2, 3, 4])  # gray+alpha, RGB, RGBA
def test_16_bit_colour_pngs_keep_all_16_bits(tmp_path, channels):
    values = np.random.default_rng(channels).integers(0, 65536, (9, 7, channels), dtype=np.uint16)
    values[..., -1] = 65535 if channels != 3 else values[..., -1]  # opaque, so that compositing leaves colours alone
    image = read_image(write_png16(tmp_path / "deep.png", values), channels="keep").numpy()
    np.testing.assert_allclose(image, values / 65535.0, rtol=0, atol=1e-7)
    assert np.abs(image - np.round(image * 255) / 255).max() > 1e-4  # finer than 8 bits: not read as 8-bit


def test_a_constant_image_is_refused_after_resizing(tmp_path, run_cli, kit):
    flat = tmp_path / "flat.png"
    iio.imwrite(flat, np.full((40, 40, 3), 77, dtype=np.uint8))
    framed = tmp_path / "framed.png"  # a constant centre inside a different border: constant once cropped
    image = np.full((40, 60, 3), 77, dtype=np.uint8)
    image[:, :10] = image[:, -10:] = 200
    iio.imwrite(framed, image)
    for path, expected in (
        (flat, "the image is constant (every pixel 0.302)"),
        (framed, "constant after cropping and resizing to 16"),
    ):
        outcome = run_cli(kit.tiny(tmp_path / "runs", "--data.init_args.path", str(path)))
        assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert kit.files_under(tmp_path / "runs") == []


def _signal_args(kit, save_dir, wav, *extra):
    path = ("--data.init_args.path", wav)
    return [*kit.flags("signal.yaml", None, *path, width=8, steps=2, bar=False, save_dir=save_dir), *extra]


@pytest.mark.slow
def test_wav_length_and_anti_phase_channels_are_refused_in_one_line(tmp_path, run_cli, kit):
    t = np.arange(400) / 400
    tone = (0.5 * np.sin(2 * np.pi * 7 * t) * 32767).astype(np.int16)
    mono, stereo = tmp_path / "mono.wav", tmp_path / "anti.wav"
    wavfile.write(mono, 8000, tone)
    wavfile.write(stereo, 8000, np.stack([tone, -tone], axis=1))
    cases = [
        (mono, ["--data.init_args.length", "-100"], "data.length must be ≥ 2 samples or null"),
        (mono, ["--data.init_args.offset", "-3"], "data.offset must be ≥ 0"),
        (stereo, [], "its 2 channels cancel when averaged to mono (anti-phase); use data.channels: keep"),
    ]
    for wav, extra, expected in cases:
        outcome = run_cli(_signal_args(kit, tmp_path / "runs", wav, *extra))
        assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert kit.files_under(tmp_path / "runs") == []
    kept = run_cli(_signal_args(kit, tmp_path / "kept", stereo, "--data.init_args.channels", "keep"))
    assert kept.code == 0, kept.stderr[-2000:]


@pytest.fixture(scope="module")
def volume_run(tmp_path_factory, kit):
    from inr.run.cli import cli_main

    save_dir = tmp_path_factory.mktemp("volume")
    data = ("--data.init_args.builtin", "sphere", "--data.init_args.batch_size", 64, "--data.init_args.steps_per_epoch", 2)
    cli_main(kit.flags("volume.yaml", 8, *data, width=8, features=8, steps=2, bar=False, callbacks="null", save_dir=save_dir))
    return save_dir / "volume" / "version_0" / "checkpoints" / "last.ckpt"


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--chunk", "0"], "--chunk must be at least 1"),
        (["--chunk", "-5"], "--chunk must be at least 1"),
        (["--resolution", "0"], "--resolution must be at least 2"),
        (["--resolution", "200000"], "GiB"),  # 8·10¹⁵ grid points: refused before allocating
    ],
)
def test_mesh_export_refuses_chunks_and_resolutions_that_render_nothing_or_too_much(
    tmp_path, capsys, volume_run, extra, expected
):
    out = tmp_path / "mesh.ply"
    with pytest.raises(SystemExit) as exit_info:
        mesh_main(["--ckpt", str(volume_run), "--out", str(out), *extra])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert exit_info.value.code == 2 and len(errors) == 1 and expected in errors[0], errors
    assert not out.exists()


def _ct_scan_args(kit, save_dir, scan):
    small = dict(width=8, features=8, steps=2, bar=False, callbacks="null", save_dir=save_dir)
    return kit.flags("ct.yaml", 16, "--data.init_args.scan", scan, **small)


def test_a_nifti_bomb_given_as_a_ct_scan_is_refused_from_its_header(tmp_path, run_cli, kit, monkeypatch):
    """``train.py --config ct.yaml --data.init_args.scan bomb.nii.gz`` with a 16 MiB volume of zeros gzipped to a few
    KiB, on a host with 16 MiB available: refused from its header (the volume was read, then called constant)."""
    import nibabel as nib

    import inr.errors

    bomb = tmp_path / "bomb.nii.gz"
    nib.save(nib.Nifti1Image(np.zeros((256, 256, 256), dtype=np.int8), np.eye(4)), str(bomb))
    assert bomb.stat().st_size < 100_000
    monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: 16 * 2**20)
    monkeypatch.setattr("inr.run.cli.check_model_memory", lambda *args, **kwargs: None)  # the scan's check, not the model's
    outcome = run_cli(_ct_scan_args(kit, tmp_path / "runs", bomb))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert f"{bomb}: a 256×256×256 int8 NIfTI volume (its header) needs an estimated" in outcome.errors[0]
    assert kit.files_under(tmp_path / "runs") == []


def test_a_nifti_header_of_more_voxels_than_any_memory_is_one_line_through_the_command(tmp_path, run_cli, kit):
    """A NIfTI-2 header declaring 10¹⁵ float32 voxels: the estimate in one line, not a bare MemoryError."""
    import gzip

    import nibabel as nib

    header = nib.Nifti2Header()
    header.set_data_shape((100_000, 100_000, 100_000))
    header.set_data_dtype(np.float32)
    path = tmp_path / "huge.nii.gz"
    with gzip.open(path, "wb") as f:
        f.write(header.binaryblock + bytes(int(header["vox_offset"]) - header.sizeof_hdr + 1024))
    outcome = run_cli(_ct_scan_args(kit, tmp_path / "runs", path))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert f"{path}: a 100000×100000×100000 float32 NIfTI volume (its header) needs an estimated" in outcome.errors[0]
    assert "GiB available; crop or downsample the scan first" in outcome.errors[0] and "MemoryError" not in outcome.stderr
    assert kit.files_under(tmp_path / "runs") == []
