"""The field comparison (1D signal, 3D volume), run tiny through its real ``main(argv)``, and its baselines
against independent float64 numpy computations."""

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from inr.data import SignalDataModule, VolumeDataModule
from inr.experiments import compare_fields as cf
from inr.experiments.baselines import baseline_rows, upsample_axis
from inr.experiments.compare_fields import DOMAINS, Fields, field_methods
from inr.experiments.comparison import Member, context, parse
from inr.networks import BACON

FIELDS = Fields()


def field_baseline_rows(dm, data_range, num_bands, clamp):
    return baseline_rows(dm, data_range, num_bands, clamp)


def numpy_psnr(pred: np.ndarray, target: np.ndarray, data_range: float) -> float:
    return float(10 * np.log10(data_range**2 / np.mean((pred - target) ** 2)))


def keys_midpoints(x: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution (a = −0.75) halfway between samples, edge-replicated: weights −3/32, 19/32, 19/32, −3/32."""
    p = np.concatenate([x[:1], x, x[-1:], x[-1:]])
    return -3 / 32 * p[:-3] + 19 / 32 * p[1:-2] + 19 / 32 * p[2:-1] - 3 / 32 * p[3:]


def test_signal_baselines_equal_numpy():
    dm = SignalDataModule(generator="power_law", length=256)
    dm.setup("fit")
    s = dm.values[:, 0].double().numpy()
    train, held_out = s[0::2], s[1::2]
    rows = {r["method"]: r for r in field_baseline_rows(dm, 2.0, 8, None)}
    # np.interp holds the last training value beyond it: the edge replication of the baselines
    linear = np.interp(np.arange(1, 256, 2), np.arange(0, 256, 2), train)
    assert rows["linear"]["psnr"] == pytest.approx(numpy_psnr(linear, held_out, 2.0), abs=1e-6)
    cubic = keys_midpoints(train)[:-1]
    cubic = np.append(cubic, train[-1])  # the last held-out sample lies beyond the last training sample
    assert rows["cubic"]["psnr"] == pytest.approx(numpy_psnr(cubic, held_out, 2.0), abs=1e-6)
    constant = np.full_like(held_out, train.mean())
    assert rows["constant"]["psnr"] == pytest.approx(numpy_psnr(constant, held_out, 2.0), abs=1e-6)
    assert math.isinf(rows["linear"]["train_psnr"]) and math.isinf(rows["cubic"]["train_psnr"])
    assert rows["constant"]["low"] == pytest.approx(1.0) and rows["constant"]["dc"] < 0.2


def test_volume_baselines_equal_numpy():
    dm = VolumeDataModule(builtin="bumpy", resolution=16, mode="density")
    dm.setup("fit")
    v = dm.values_grid()[0].double().numpy()  # (16, 16, 16)
    train = np.pad(v[::2, ::2, ::2], ((0, 1), (0, 1), (0, 1)), mode="edge")
    # a held-out voxel (odd, odd, odd) is the mean of the 8 training voxels around it
    trilinear = sum(train[i : i + 8, j : j + 8, k : k + 8] for i in (0, 1) for j in (0, 1) for k in (0, 1)) / 8
    rows = {r["method"]: r for r in field_baseline_rows(dm, 1.0, 2, (0.0, 1.0))}
    assert rows["linear"]["psnr"] == pytest.approx(numpy_psnr(trilinear, v[1::2, 1::2, 1::2], 1.0), abs=1e-6)
    tricubic = v[::2, ::2, ::2]
    for axis in range(3):  # Keys' kernel along each axis in turn: the tensor-product kernel
        mid = np.apply_along_axis(lambda x: np.append(keys_midpoints(x)[:-1], x[-1]), axis, tricubic)
        tricubic = mid
    tricubic = np.clip(tricubic, 0, 1)
    assert rows["cubic"]["psnr"] == pytest.approx(numpy_psnr(tricubic, v[1::2, 1::2, 1::2], 1.0), abs=1e-6)


def test_upsampling_reproduces_the_training_samples():
    x = torch.rand(2, 5, 3, dtype=torch.float64)
    for mode in ("linear", "cubic"):
        up = upsample_axis(x, 1, 10, mode)
        assert up.shape == (2, 10, 3) and torch.equal(up[:, ::2], x) and torch.equal(up[:, 9], up[:, 8])
    with pytest.raises(ValueError):
        upsample_axis(x, 1, 12, "linear")


def test_rows_follow_the_dimension():
    for name, d in DOMAINS.items():
        p = FIELDS.protocol(parse(FIELDS, [f"--{name}", "--steps", "1", "--width", "16"]))
        assert "mfn" not in field_methods(d.ndim) and "hashgrid_hashed" not in field_methods(d.ndim)
        data = SimpleNamespace(out_channels=1)
        build = lambda row, p=p, data=data: FIELDS.model(context(FIELDS, p, row, Member(None, 0), data))
        for row in field_methods(d.ndim):
            assert build(row).encoder.in_dim == d.ndim, (name, row)
        bacon = build("bacon").network
        assert isinstance(bacon, BACON) and bacon.max_frequency == d.resolution // 4  # the training grid's Nyquist
        hashgrid = build("hashgrid").encoder
        assert hashgrid.resolutions[-1] == d.resolution // 2 and hashgrid.dense_levels == hashgrid.n_levels


@pytest.mark.slow
def test_signal_comparison_end_to_end(tmp_path, capsys):
    rows = cf.main(
        [
            "--signal",
            "--resolution",
            "64",
            "--steps",
            "10",
            "--width",
            "16",
            "--methods",
            "gaussian,hashgrid",
            "--threads",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert [line.split("|")[1].strip() for line in table[2:]] == ["gaussian", "hashgrid", "constant", "linear", "cubic"]
    assert "test SSIM" not in table[0] and "test Δ DC" in table[0]
    models, baselines = rows[:2], rows[2:]
    linear = round(baselines[1]["psnr"], 2)
    for r in models:
        assert r["seconds"] > 0 and 0 < r["psnr"] < 80
        assert np.array(r["history"]["errors"]).shape[1] == 8  # 32 training samples: Nyquist 16, 8 bands of 2 cycles
        reached = [s for s, v in zip(r["progress"]["steps"], r["progress"]["test_psnr"]) if v >= linear]
        assert r["target_step"] == (reached[0] if reached else None)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["protocol"]["target_psnr"] == linear and saved["protocol"]["ndim"] == 1
    assert [r["method"] for r in saved["rows"]] == [r["method"] for r in rows]
    # 32 training samples, ν = 16: the grid rule caps the signal protocol's σ = 10 at 3σ = 8 (its 1024 samples: 10)
    assert "σ = 2.67, m = 256" in (tmp_path / "results.md").read_text()
    assert (tmp_path / "spectral_heatmaps.png").stat().st_size > 10_000


@pytest.mark.slow
def test_volume_comparison_end_to_end(tmp_path, capsys):
    rows = cf.main(
        [
            "--volume",
            "--resolution",
            "16",
            "--steps",
            "4",
            "--width",
            "16",
            "--methods",
            "bacon",
            "--target-psnr",
            "5",
            "--out",
            str(tmp_path),
        ]
    )
    assert rows[0]["setting"] == "4 × 16, band limit 3 cycles/unit"
    assert rows[0]["target_step"] == 0  # 5 dB is met before the first step
    for name in ("results.md", "results.json", "spectral_heatmaps.png"):
        assert (tmp_path / name).is_file()
    assert "| bacon | 4 × 16, band limit 3 cycles/unit |" in capsys.readouterr().out


@pytest.mark.slow
def test_sweep_reads_only_the_training_samples(tmp_path, monkeypatch):
    monkeypatch.setattr(cf, "SWEEP_SIGMAS", (3.0,))
    monkeypatch.setattr(cf, "SWEEP_SCALES", (4.0,))
    args = ["--signal", "--resolution", "32", "--steps", "3", "--width", "8", "--sweep", "--out", str(tmp_path)]
    first = cf.main(args)
    assert [r["setting"] for r in first] == ["σ = 3, m = 256", "scale 4 (top 15 cycles/unit), 128 per axis"]
    assert not (tmp_path / "results.json").exists()  # the sweep's table lies apart from the comparison's
    # changing the held-out samples (odd positions) changes nothing the sweep measures
    original = SignalDataModule.load_values

    def odd_samples_scrambled(self):
        values = original(self).clone()
        values[1::2] = 0.5
        return values

    monkeypatch.setattr(SignalDataModule, "load_values", odd_samples_scrambled)
    second = cf.main([*args, "--fresh"])  # trained again, not read back from the first run's results
    assert [r["psnr"] for r in second] == [r["psnr"] for r in first]
    saved = json.loads((tmp_path / "sweep" / "results.json").read_text())
    assert saved["protocol"]["resolution"] == 16 and (tmp_path / "sweep" / "results.md").is_file()


@pytest.mark.slow
def test_a_sweep_of_several_values_of_one_method_writes_its_table(tmp_path, monkeypatch):
    """Two σ are two rows of the method gaussian: the sweep pairs no rows by method (it used to refuse them as a
    duplicate pair after training every row, writing nothing)."""
    monkeypatch.setattr(cf, "SWEEP_SIGMAS", (3.0, 5.0))
    monkeypatch.setattr(cf, "SWEEP_SCALES", (4.0,))
    rows = cf.main(["--signal", "--resolution", "32", "--steps", "2", "--width", "8", "--sweep", "--out", str(tmp_path)])
    assert [r["setting"] for r in rows][:2] == ["σ = 3, m = 256", "σ = 5, m = 256"] and len(rows) == 3
    saved = json.loads((tmp_path / "sweep" / "results.json").read_text())
    assert len(saved["rows"]) == 3


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    out = tmp_path / "out"
    for argv, word in (
        (["--signal", "--methods", "none,fancy"], "fancy"),
        (["--signal", "--methods", "mfn"], "unknown mfn"),  # a 2-D method
        (["--volume", "--resolution", "8"], "too small"),
        (["--signal", "--steps", "0"], "--steps"),
        (["--methods", "none"], "--signal"),
        (["--signal", "--sweep", "--sigma", "3"], "--sweep chooses σ"),
    ):
        with pytest.raises(SystemExit) as exc:
            cf.main([*argv, "--out", str(out)])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and word in err[0], (argv, err)
    assert not out.exists()
