"""benchmarks/codec_latent_kodak.sh (the latent codec on the full Kodak set, meant for a GPU) on the CPU: its
expected time first, its bad arguments in one line; the latent codec as a codec of the rate–distortion run."""

import subprocess
from pathlib import Path

import imageio.v3 as iio
import numpy as np

from inr.codec import latent_fit
from inr.codec.coding import decode
from inr.codec.latent_fit import PRESETS, Preset
from inr.experiments.rd_codecs import LATENT_LAMBDAS, get

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "codec_latent_kodak.sh"


def images(folder: Path, count: int) -> Path:
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(count):
        iio.imwrite(folder / f"kodim{i:02d}.png", (rng.random((24, 32, 3)) * 255).astype(np.uint8))
    return folder


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(Path(__import__("sys").executable)), "PRESET": "fast"},
    )


def test_the_estimate_comes_first_and_names_the_run(tmp_path):
    out = run("--estimate-only", str(images(tmp_path / "kodak", 2)))
    assert out.returncode == 0, out.stderr
    assert (
        f"2 images × {len(LATENT_LAMBDAS)} λ × {PRESETS['fast'].steps} steps (fast)" in out.stdout and "in all here" in out.stdout
    )


def test_bad_arguments_are_one_line(tmp_path):
    for args, expected in (
        ([str(tmp_path / "none")], "no such directory"),
        (["--fast", "x"], "unknown option --fast"),
        ([], "usage"),
    ):
        out = run(*args)
        assert out.returncode == 2 and expected in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_the_latent_codec_runs_in_the_rate_distortion_run(monkeypatch):
    monkeypatch.setitem(latent_fit.PRESETS, "medium", Preset("medium", 20, 6, 6))
    pixels = (np.random.default_rng(1).random((20, 24, 3)) * 255).astype(np.uint8)
    data, decoded, encode_seconds, decode_seconds = get("latents").run(pixels, LATENT_LAMBDAS[0])
    assert np.array_equal(decode(data), decoded) and decoded.shape == pixels.shape
    assert encode_seconds > 0 and decode_seconds > 0
