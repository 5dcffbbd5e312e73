"""benchmarks/codec_cpu_decode.py: each file decoded in two fresh CPU-only processes, at one thread and at two, the
same pixels for a latent file; a damaged file is reported and makes the exit status 1; different pixels are told
apart."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec.latent_encode import encode_latent_image
from inr.codec.latent_fit import Preset

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "codec_cpu_decode.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.slow
def test_a_latent_file_decodes_to_the_same_pixels_at_one_and_two_threads_and_a_damaged_one_fails(tmp_path):
    pixels = torch.from_numpy((np.random.default_rng(0).random((24, 32, 3))).astype(np.float32))
    good = tmp_path / "a.inr"
    good.write_bytes(encode_latent_image(pixels, 1e-3, Preset("tiny", 30, 4, 4)).data)
    damaged = tmp_path / "b.inr"
    damaged.write_bytes(good.read_bytes()[:-7])
    out = run(str(good), "--threads", "2")
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("| a.inr"))
    assert row.endswith("| 32×24 | same |") and "1 of 1 files decode to the same pixels at 1 and 2 threads" in out.stdout
    out = run(str(good), str(damaged), "--threads", "2")
    assert out.returncode == 1
    row = next(line for line in out.stdout.splitlines() if line.startswith("| b.inr"))
    assert "| — | — |" in row and "error" in row.lower()
    assert "1 of 2 files decode to the same pixels" in out.stdout


def test_different_pixels_are_told_apart(tmp_path):
    spec = importlib.util.spec_from_file_location("codec_cpu_decode", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    same_pixels = script.same_pixels
    image = np.zeros((4, 5, 3), np.uint8)
    for name, values in (("a.png", image), ("b.png", image), ("c.png", image + 1), ("d.png", image[:, :4])):
        iio.imwrite(tmp_path / name, values)
    assert same_pixels(tmp_path / "a.png", tmp_path / "b.png")
    assert not same_pixels(tmp_path / "a.png", tmp_path / "c.png") and not same_pixels(tmp_path / "a.png", tmp_path / "d.png")
