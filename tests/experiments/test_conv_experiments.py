"""The three conv-decoder experiments end to end at toy size: figures, tables and what they measure."""

import json
import math

import pytest

from inr.experiments import conv_autoencoder, conv_bottlenecks, conv_shift


@pytest.mark.slow
def test_conv_bottlenecks_writes_its_figures(tmp_path, capsys):
    conv_bottlenecks.main(["--out", str(tmp_path), "--seeds", "2", "--steps", "20", "--threads", "1"])
    for name in ("conv_gain.png", "conv_padding.png", "conv_upsampling.png", "conv_training.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    printed = capsys.readouterr().out
    assert "kernel_size, μ ∝ 1/k² = 7" in printed and "shift" not in printed


@pytest.mark.slow
def test_conv_shift_table_and_floor(tmp_path, capsys):
    study = conv_shift.main(["--out", str(tmp_path), "--shifts", "0", "16", "--seeds", "2", "--steps", "20", "--threads", "1"])
    assert (tmp_path / "conv_shift.png").stat().st_size > 10_000
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert len(table) == 4 and table[3].startswith("| 16 (Nyquist) |")
    saved = json.loads((tmp_path / "conv_shift.json").read_text())
    assert set(saved) == {"0", "16"} and len(saved["16"]["final_error"]) == 2
    assert study[0]["linear_floor"] < 1e-6 < 0.5 < study[16]["linear_floor"]  # identity fits Δ = 0 only
    for row in study.values():  # no trained linear decoder goes below the least-squares floor
        assert min(row["linear_error"]) >= row["linear_floor"] - 1e-6


@pytest.mark.slow
def test_conv_autoencoder_table_has_baselines_and_sane_errors(tmp_path, capsys):
    results = conv_autoencoder.main(
        [
            "--out",
            str(tmp_path),
            "--modes",
            "zero",
            "nearest",
            "--kernels",
            "3",
            "--seeds",
            "2",
            "--steps",
            "15",
            "--width",
            "4",
            "--resolution",
            "64",
            "--block",
            "16",
            "--threads",
            "1",
        ]
    )
    assert (tmp_path / "conv_autoencoder.png").stat().st_size > 10_000
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 2 + 6  # header, separator, two AE configurations, six baselines
    assert any(line.startswith("| PCA, 64 components") for line in table)
    base = results["baselines"]
    assert base["patch mean (1 number)"]["dc"] < 1e-6 and all(abs(v - 1) < 1e-6 for v in base["patch mean (1 number)"]["bands"])
    assert base["PCA, 64 components"]["psnr"] > base["patch mean (1 number)"]["psnr"]
    for runs in results["runs"].values():
        assert len(runs) == 2 and all(math.isfinite(r["psnr"]) and len(r["fine"]) == 7 for r in runs)
    saved = json.loads((tmp_path / "conv_autoencoder.json").read_text())
    assert (
        saved["heldout_patches"] == results["heldout_patches"] == 2 * 8
    )  # 2 images × 8 held-out 16×16 blocks of a 64² image, one patch each
