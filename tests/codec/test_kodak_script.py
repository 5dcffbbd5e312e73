"""benchmarks/codec_kodak.sh (the full Kodak run, meant for a GPU) on the CPU at toy sizes: the widths it learns
inits for are the ones the comparison trains at those rates for those images (``inr.experiments.codec_sizes``), so every
learned row finds its init, and one run holds the random draw, the learned init and the classical codecs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

from inr.experiments.codec import CodecComparison
from inr.experiments.codec_sizes import main as sizes_main
from inr.experiments.codec_sizes import widths_for

ROOT = Path(__file__).resolve().parents[2]


def noise_images(folder: Path, shapes: list[tuple[int, int]], seed: int = 0) -> None:
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    for i, (height, width) in enumerate(shapes):
        iio.imwrite(folder / f"image{i}.png", (rng.random((height, width, 3)) * 255).astype(np.uint8))


def test_the_widths_are_the_comparisons_own(tmp_path, capsys):
    noise_images(tmp_path / "images", [(16, 24), (24, 16)])
    side, widths = widths_for(str(tmp_path / "images"), "4,8")
    comparison = CodecComparison()
    expected = {comparison.arch("siren", r, 0, (h, w, 3)).width for r in (4, 8) for h, w in [(16, 24), (24, 16)]}
    assert side == 16 and widths == sorted(expected) and len(widths) == 2
    sizes_main([str(tmp_path / "images"), "--bpp", "4,8"])
    assert capsys.readouterr().out.split() == ["16", ",".join(map(str, widths))]


def test_images_of_two_shorter_sides_are_refused(tmp_path):
    noise_images(tmp_path / "images", [(16, 24), (20, 24)])
    run = subprocess.run(
        [sys.executable, "-m", "inr.experiments.codec_sizes", str(tmp_path / "images"), "--bpp", "4"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "shorter sides [16, 20]" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.slow
def test_the_script_learns_the_inits_and_compares_in_one_run(tmp_path):
    noise_images(tmp_path / "kodak", [(16, 24), (16, 24), (24, 16)])
    noise_images(tmp_path / "photos", [(40, 48)] * 3, seed=1)
    env = {**os.environ, "PYTHON": sys.executable, "RATES": "4,8", "STEPS": "2", "META_STEPS": "2", "INNER_STEPS": "1"}
    out = tmp_path / "out"
    run = subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "codec_kodak.sh"), str(tmp_path / "kodak"), str(tmp_path / "photos"), str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    _, widths = widths_for(str(tmp_path / "kodak"), "4,8")
    assert sorted(p.name for p in (out / "inits").glob("*.ckpt")) == sorted(f"siren_4x{w}.ckpt" for w in widths)
    assert "expected time" in run.stdout + run.stderr
    rows = json.loads((out / "results.json").read_text())["rows"]
    methods = {r["method"] for r in rows}
    assert methods == {"siren", "siren+init", "JPEG", "WEBP", "AVIF"}
    learned = [r for r in rows if r["method"] == "siren+init"]
    assert len(learned) == 6 and all("from the learned init" in r["setting"] for r in learned)  # 3 images × 2 rates
