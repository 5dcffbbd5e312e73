"""The encoder comparison, run tiny through its real ``main(argv)``."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import yaml

from inr.encoders import IdentityEncoding
from inr.experiments.compare_encoders import Encoders, main
from inr.experiments.comparison import Context, Member, parse
from inr.experiments.heldout import COLUMNS
from inr.experiments.results import load_results
from inr.methods import registry as methods
from inr.methods.registry import INSTANT_NGP_ADAM, METHODS, Component, Method
from inr.networks import BACON, FINER, MFN, WIRE, GaussMLP
from inr.networks.mlp import MLP

REPO = Path(__file__).resolve().parents[2]

MODELS = ["none", "basic", "positional", "gaussian", "siren", "hashgrid", "hashgrid_hashed"]
BASELINE_ROWS = ["constant", "bilinear", "bicubic"]
ENCODERS = Encoders()


def Protocol(*argv):
    """The comparison's protocol for a command line."""
    return ENCODERS.protocol(parse(ENCODERS, list(argv)))


def resolve(name, p):
    return ENCODERS.spec(Context(p, Member(None, 0), name))


def build_model(spec, out_channels, p=None):
    return ENCODERS.model(Context(p, Member(None, 0), spec.name, SimpleNamespace(out_channels=out_channels), spec))


def table_lines(text):
    return [line for line in text.splitlines() if line.startswith("|")]


def test_paper_mappings():
    p = Protocol("--resolution", "512")  # the paper's image size: its values unchanged by the grid rule
    b = resolve("positional", p).build()[0].b.double().numpy()
    # the paper's code: bvals = 2^linspace(0, 6, 128) − 1 on each axis
    np.testing.assert_allclose(b[:128, 0], 2.0 ** np.linspace(0, 6, 128) - 1, rtol=1e-6, atol=1e-6)
    assert (b[:128, 1] == 0).all() and (b[128:, 0] == 0).all()
    g = resolve("gaussian", p).build()[0]
    assert g.out_dim == 512 and abs(float(g.b.std()) - 10.0) < 1.0
    # the default 128² (64² training pixels, Nyquist 32): both bands capped at 16 cycles; given values as given
    small = Protocol()
    assert resolve("gaussian", small).encoder.init_args["sigma"] == pytest.approx(16 / 3)
    assert float(resolve("positional", small).build()[0].b.max()) == pytest.approx(16.0, rel=1e-5)
    given = Protocol("--sigma", "7", "--scale", "3")
    assert resolve("gaussian", given).encoder.init_args["sigma"] == 7.0
    assert resolve("positional", given).encoder.init_args["sigma"] == 8.0


def test_paper_network_and_optimisers():
    model = build_model(resolve("gaussian", Protocol("--kind", "text")), 3)
    assert isinstance(model.network, MLP) and model.network.init == "paper" and model.network.depth == 3
    optimizer = model.configure_optimizers()
    assert optimizer.defaults["lr"] == 1e-3
    hashed = build_model(resolve("hashgrid_hashed", Protocol("--resolution", "256")), 3)
    adam = hashed.configure_optimizers().defaults
    assert (adam["lr"], list(adam["betas"]), adam["eps"]) == (1e-2, INSTANT_NGP_ADAM["betas"], INSTANT_NGP_ADAM["eps"])
    # at 256² (finest level 128) T = 2^19 holds every level densely; T = 2^12 hashes the six finest
    dense = build_model(resolve("hashgrid", Protocol("--resolution", "256")), 3).encoder
    assert dense.dense_levels == 16 and hashed.encoder.dense_levels == 10
    assert (
        resolve("hashgrid_hashed", Protocol("--resolution", "256")).describe
        == "T = 2^12: levels 0–9 dense (N 16–55), 10–15 hashed (N 64–128)"
    )


@pytest.mark.slow
def test_tiny_comparison_end_to_end(tmp_path, capsys):
    rows = main(["--image", "data/camera.png", "--resolution", "32", "--steps", "10", "--width", "32", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert captured.out.strip() == (tmp_path / "results.md").read_text().strip()  # printed as written
    table = table_lines(captured.out)
    assert table[0].startswith("| row | setting | lr | train PSNR (dB) | test PSNR (dB) |")
    assert "test Δ DC" in table[0] and len(table[0].split("|")) == len(COLUMNS) + 2
    assert "[1/10] none (seed 0): train PSNR (dB)" in captured.err and "[7/10] hashgrid_hashed (seed 0)" in captured.err
    assert [line.split("|")[1].strip() for line in table[2:]] == MODELS + BASELINE_ROWS
    models, baselines = rows[: len(MODELS)], rows[len(MODELS) :]
    for r in models:
        assert 5 < r["train_psnr"] < 60 and 5 < r["psnr"] < 60 and r["seconds"] > 0
        errors = np.array(r["history"]["errors"])
        assert errors.shape == (2, 16) and len(r["history"]["dc"]) == 2  # measured at step 9 (reused) and 10 (final)
        assert 0 <= r["dc"] and 0 < r["low"] and 0 < r["high"]
    # the training-grid errors of the table are the callback's last measurement
    gaussian = models[3]
    assert gaussian["method"] == "gaussian"
    assert gaussian["lr"] == 1e-3 and models[0]["lr"] == 1e-2  # natural-image learning rates
    for r in baselines:
        assert r["kind"] == "baseline" and "params" not in r and r["steps"] == 0 and 0 <= r["seconds"] < 5
    assert "| bicubic |" in table[-1] and "| ∞ |" in table[-1]  # interpolation reproduces the training pixels
    saved = json.loads((tmp_path / "results.json").read_text())
    assert [r["method"] for r in saved["rows"]] == MODELS + BASELINE_ROWS
    assert saved["rows"][-1]["train_psnr"] == "inf"  # ∞ written as a string: the file stays strict JSON
    assert load_results(tmp_path / "results.json").rows[-1]["train_psnr"] == float("inf")  # and read back as ∞
    assert (
        saved["protocol"]["resolution"] == 32 and saved["protocol"]["kind"] == "natural" and saved["protocol"]["init"] == "paper"
    )
    assert saved["protocol"]["settings"]["lr"]["none"] == 1e-2
    # without --target-psnr the target is bilinear interpolation's held-out PSNR on the same pixels
    bilinear = next(r for r in baselines if r["method"] == "bilinear")
    assert saved["protocol"]["target_psnr"] == round(bilinear["psnr"], 2)
    assert f"≥ {round(bilinear['psnr'], 2):g} dB (bilinear interpolation's)" in (tmp_path / "results.md").read_text()
    assert (tmp_path / "spectral_heatmaps.png").stat().st_size > 10_000
    history = np.load(tmp_path / "tb" / "gaussian" / "seed_0" / "spectral_history.npz")
    np.testing.assert_allclose(history["low"][-1], gaussian["train_low"], rtol=1e-4)
    np.testing.assert_allclose(history["high"][-1], gaussian["train_high"], rtol=1e-4)
    results = (tmp_path / "results.md").read_text()
    assert "| gaussian |" in results and "Table 1" in results and "19.32" in results


@pytest.mark.slow
def test_text_image_and_an_added_row(tmp_path, monkeypatch, capsys):
    # adding a method is one entry in the registry
    slow = Method(
        "identity_slow",
        "raw coordinates, a slow learning rate",
        lambda s: (methods.identity(s), methods.paper_mlp(s), 1e-4, {}, ""),
    )
    monkeypatch.setitem(METHODS, "identity_slow", slow)
    threads = torch.get_num_threads()
    rows = main(
        [
            "--text",
            "--resolution",
            "24",
            "--steps",
            "3",
            "--width",
            "16",
            "--methods",
            "none,identity_slow",
            "--threads",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    assert torch.get_num_threads() == threads  # --threads applies to the comparison only
    assert [r["method"] for r in rows] == ["none", "identity_slow"] + BASELINE_ROWS
    assert rows[0]["lr"] == 1e-3 and rows[1]["lr"] == 1e-4  # text: the paper's 1e-3 for no mapping
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["protocol"]["kind"] == "text" and "Gaussian σ = 14" in (tmp_path / "results.md").read_text()
    assert saved["protocol"]["settings"]["gaussian_sigma"] == pytest.approx(1.0)  # 12² training pixels: ν 6, 3σ capped at 3
    assert (tmp_path / "text.png").is_file()
    assert "| identity_slow |" in capsys.readouterr().out


def test_estimate_only_prints_the_expected_time_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    rows = main(
        [
            "--text",
            "--paper",
            "--estimate-only",
            "--resolution",
            "32",
            "--width",
            "8",
            "--methods",
            "gaussian,hashgrid",
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert rows == [] and not out.exists()
    line = [l for l in err.splitlines() if l.startswith("expected time:")]
    assert len(line) == 1 and "2 methods × 1 members × 2000 steps at 32²" in line[0] and "an estimate" in line[0]
    assert "gaussian" in line[0] and "hashgrid" in line[0]


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main(["--image", str(tmp_path / "missing.png"), "--out", str(out)])
    assert exc.value.code == 2 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.png" in err[0] and "not found" in err[0]
    with pytest.raises(SystemExit) as exc:
        main(["--methods", "none,fancy", "--out", str(out)])
    assert exc.value.code == 2 and "fancy" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--image", "data/camera.png", "--text", "--out", str(out)])
    assert exc.value.code == 2 and capsys.readouterr().err.strip() == "error: --image and --text: choose one"
    assert not out.exists()


def test_protocol_from_arguments():
    cpu, paper = Protocol(), Protocol("--paper")
    assert (cpu.resolution, cpu.steps, cpu.kind, cpu.init) == (128, 300, "natural", "paper")
    assert (paper.resolution, paper.steps, paper.width, paper.depth) == (512, 2000, 256, 3)
    mixed = Protocol("--paper", "--steps", "50", "--text")
    assert (mixed.resolution, mixed.steps, mixed.kind, mixed.settings.gaussian_sigma) == (512, 50, "text", 14.0)
    assert Protocol("--init", "torch").init == "torch"
    assert parse(ENCODERS, []).methods.split(",") == MODELS
    assert Component("torch.optim.Adam").cls().__name__ == "Adam"


ARCHITECTURES = {
    "wire": (WIRE, 1e-3),
    "gauss": (GaussMLP, 2e-3),
    "finer": (FINER, 5e-4),
    "bacon": (BACON, 5e-3),
    "mfn": (MFN, 1e-2),
}


def test_architecture_rows_follow_their_configs():
    p = Protocol("--resolution", "256")  # the configs' image size
    for name, (cls, lr) in ARCHITECTURES.items():
        model = build_model(resolve(name, p), 3)
        assert isinstance(model.network, cls) and isinstance(model.encoder, IdentityEncoding)
        optimizers = model.configure_optimizers()
        optimizer = optimizers["optimizer"] if isinstance(optimizers, dict) else optimizers
        assert optimizer.defaults["lr"] == lr
        assert isinstance(optimizers, dict) == (name == "finer")  # FINER's release decays its learning rate
        # the row is configs/methods/<name>.yaml: the same network arguments and learning rate
        config = yaml.safe_load((REPO / "configs" / "methods" / f"{name}.yaml").read_text())["model"]["init_args"]
        assert config["optimizer"]["init_args"]["lr"] == lr
        assert config["network"] == resolve(name, p).network.as_config()
    # BACON's band limit is the training pixels' Nyquist: 64 cycles per unit for 128² of a 256² image
    bacon = build_model(resolve("bacon", p), 3).network
    setting = lambda p: ENCODERS.setting(Context(p, Member(None, 0)))
    assert bacon.max_frequency == methods.bacon_band_limit(setting(p)) == 64
    assert methods.bacon_band_limit(setting(Protocol("--resolution", "512"))) == 128
    assert build_model(resolve("wire", p), 3).network.hidden_width == 181
    assert ENCODERS.available(None) == tuple(n for n, m in METHODS.items() if 2 in m.dims)


@pytest.mark.slow
def test_architecture_rows_end_to_end_with_the_target_columns(tmp_path, capsys):
    names = list(ARCHITECTURES)
    rows = main(
        [
            "--image",
            "data/camera.png",
            "--resolution",
            "16",
            "--steps",
            "6",
            "--width",
            "8",
            "--methods",
            ",".join(names),
            "--target-psnr",
            "11.5",
            "--threads",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    table = table_lines(capsys.readouterr().out)
    assert table[0].rstrip().endswith("| params | steps to target | time to target (s) |")
    assert [r["method"] for r in rows] == names + BASELINE_ROWS
    for r, line in zip(rows[: len(names)], table[2:]):
        h = r["progress"]
        assert h["steps"] == [0, 6] and len(h["test_psnr"]) == 2  # step 0 and the final step (6 < 10)
        np.testing.assert_allclose(h["test_psnr"][-1], r["psnr"], rtol=1e-5)  # the same held-out pixels
        cells = [c.strip() for c in line.split("|")[-3:-1]]
        if max(h["test_psnr"]) < 11.5:
            assert r["target_step"] is None and r["target_seconds"] is None and cells == ["—", "—"]
        else:
            first = next(i for i, v in enumerate(h["test_psnr"]) if v >= 11.5)
            assert r["target_step"] == h["steps"][first] and r["target_seconds"] == h["train_seconds"][first]
            assert cells == [str(r["target_step"]), f"{r['target_seconds']:.1f}"]
    for line in table[-len(BASELINE_ROWS) :]:
        assert line.rstrip().endswith("| — | — | — | — |")  # baselines do not train: no steps, parameters or target
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["protocol"]["target_psnr"] == 11.5 and "progress" in saved["rows"][0]
    assert "held-out PSNR ≥ 11.5 dB" in (tmp_path / "results.md").read_text()
    assert (tmp_path / "spectral_heatmaps.png").stat().st_size > 10_000
    with pytest.raises(SystemExit) as exc:
        main(["--target-psnr", "nan", "--out", str(tmp_path / "x")])
    assert exc.value.code == 2


def test_seed_table_spreads_measurements_not_settings():
    """Over seeds a measurement reads mean ± std, while the learning rate (the same on every seed) reads once."""
    from inr.experiments.runner import markdown_table, summarise

    rows = [{"method": "gaussian", "setting": "σ = 5", "lr": 1e-3, "psnr": v} for v in (20.0, 22.0)]
    numeric = [c.key for c in COLUMNS if c.spec != "s"]
    line = markdown_table(summarise(rows, numeric), COLUMNS).splitlines()[2]
    assert line.startswith("| gaussian | σ = 5 | 1e-03 | — | 21.00 ± 1.41 |")
