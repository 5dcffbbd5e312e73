"""Where a latent file's bits go, read from the file alone (``latent_coding.file_bits``) and printed by
benchmarks/codec_latent_bits.py: the byte counts add up to the file exactly, the latent levels' ideal bits to the
latent stream and the networks' to the weight stream within the range coder's rounding, the encoder reports the
same parts, a file coded against a decoder prior reads too, and a bad file is one line and exit 2."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch

from inr.codec.latent_coding import STREAMS, decode_latent_file, file_bits, read_latent_file
from inr.codec.latent_encode import encode_latent_image
from inr.codec.latent_file import unpack
from inr.codec.latent_fit import Preset
from inr.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "codec_latent_bits.py"
TINY = Preset("tiny", 40, 8, 8)
COUNTED = (*STREAMS, "scale codes", "header and CRC")
LATENT_MAX_AT = 18  # magic 4, version 1, size 5, model 5, prior field 1 (none), largest weight 2


def close(estimate: float, stream: float) -> bool:
    """The range coder's overhead: its last 32-bit words and fixed-point rounding, 64 bits + 0.5 %."""
    return abs(estimate - stream) <= 64 + 0.005 * stream


@pytest.fixture(scope="module")
def coded(crop):
    return encode_latent_image(torch.from_numpy(crop.astype(np.float32) / 255.0), 1e-3, TINY)


def check_parts(data: bytes) -> dict[str, float]:
    bits = file_bits(data)
    levels = unpack(data)[0].spec.levels
    assert list(bits) == [f"level {i}" for i in range(levels)] + ["synthesis weights", "entropy-model weights", *COUNTED]
    assert sum(bits[name] for name in COUNTED) == 8 * len(data)
    assert close(sum(bits[f"level {i}"] for i in range(levels)), bits["latent stream"])
    assert close(bits["synthesis weights"] + bits["entropy-model weights"], bits["weight stream"])
    assert all(value > 0 for value in bits.values())
    return bits


def test_the_parts_add_up_to_the_file_and_are_the_encoders(coded):
    bits = check_parts(coded.data)
    assert coded.parts == {name: value for name, value in bits.items() if name not in STREAMS}
    # level 0 is the finest grid: the image's own size
    read = read_latent_file(coded.data)
    assert read.grids[0].shape == (coded.spec.height, coded.spec.width)
    assert np.array_equal(decode_latent_file(coded.data), coded.pixels)


def test_a_file_coded_against_a_decoder_prior(crop, monkeypatch):
    from inr.codec import latent_prior
    from inr.codec.latent_prior_learn import learn_prior

    rng = np.random.default_rng(0)
    crops = [torch.from_numpy(rng.random((16, 16, 3), dtype=np.float32)) for _ in range(2)]
    prior = learn_prior(crops, 1e-3, TINY, levels=3)
    monkeypatch.setattr(latent_prior, "shipped", lambda: {prior.digest: prior})
    with_prior = encode_latent_image(torch.from_numpy(crop.astype(np.float32) / 255.0), 1e-3, TINY, levels=3, use_prior=True)
    assert unpack(with_prior.data)[0].prior == prior.digest
    # the weights' parts are of the changes the file codes (they add up to its weight stream), not of the prior's sums
    bits = check_parts(with_prior.data)
    assert with_prior.parts == {name: value for name, value in bits.items() if name not in STREAMS}
    monkeypatch.setattr(latent_prior, "shipped", lambda: {})
    with pytest.raises(InputError, match="which this inr does not ship"):
        file_bits(with_prior.data)


def run_script(*files) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, files)], capture_output=True, text=True, timeout=300)


def test_the_script_prints_a_table_per_file(coded, tmp_path):
    for name in ("a.inr", "b.inr"):
        (tmp_path / name).write_bytes(coded.data)
    run = run_script(tmp_path / "a.inr", tmp_path / "b.inr")
    assert run.returncode == 0 and run.stderr == ""
    lines = run.stdout.splitlines()
    bpp = 8 * len(coded.data) / (coded.spec.height * coded.spec.width)
    assert [line.split(":")[0] for line in lines if ".inr:" in line] == ["a.inr", "b.inr"]
    assert f"{bpp:.4f} bpp" in lines[0]
    rows = [line.split(" | ") for line in lines if line.startswith("| ") and not line.startswith("| part")]
    bits = file_bits(coded.data)
    assert [r[0][2:] for r in rows] == 2 * [*bits, "file"]
    assert sum(float(r[2].replace(",", "")) for r in rows[: len(bits) + 1] if r[0][2:] in COUNTED) == 8 * len(coded.data)


def test_the_script_refuses_a_bad_file_in_one_line(coded, tmp_path, crop):
    truncated = tmp_path / "truncated.inr"
    truncated.write_bytes(coded.data[:-9])
    damaged = tmp_path / "damaged.inr"  # its checksum matches, its latent bound does not hold
    body = bytearray(coded.data[:-4])
    struct.pack_into("<H", body, LATENT_MAX_AT, 0)
    damaged.write_bytes(bytes(body) + struct.pack("<I", zlib.crc32(bytes(body))))
    foreign = tmp_path / "image.png"
    foreign.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(40))
    cases = {
        truncated: "damaged or truncated",
        damaged: "largest latent residual 0 outside 1…1023",
        foreign: "not an inr latent file",
        tmp_path / "missing.inr": "no such file",
    }
    for path, says in cases.items():
        run = run_script(path)
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.splitlines() == [run.stderr.strip()] and run.stderr.startswith(f"error: {path}: ")
        assert says in run.stderr
