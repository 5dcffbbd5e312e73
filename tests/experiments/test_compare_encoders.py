"""The encoder comparison, run tiny through its real ``main(argv)``."""
import json

import numpy as np
import pytest

from inr.encoders import IdentityEncoding
from inr.experiments import compare_encoders as ce
from inr.experiments.compare_encoders import PAPER_SCALES, VARIANTS, Protocol, Variant, main


def test_paper_mappings():
    p = Protocol()
    b = VARIANTS["positional"].encoder(p).b.double().numpy()
    # the paper's code: bvals = 2^linspace(0, 6, 128) − 1 on each axis
    np.testing.assert_allclose(b[:128, 0], 2.0 ** np.linspace(0, 6, 128) - 1, rtol=1e-6, atol=1e-6)
    assert (b[:128, 1] == 0).all() and (b[128:, 0] == 0).all()
    g = VARIANTS["gaussian"].encoder(p)
    assert g.out_dim == 512 and abs(float(g.b.std()) - 10.0) < 1.0
    text = Protocol(kind="text")
    assert VARIANTS["positional"].encoder(text).b.max() == pytest.approx(2**5 - 1)
    assert VARIANTS["gaussian"].encoder(text).b.std() > VARIANTS["gaussian"].encoder(p).b.std()
    assert [VARIANTS[n].lr for n in ("none", "basic", "positional", "gaussian")] == [1e-2, 1e-2, 1e-3, 1e-3]
    assert set(PAPER_SCALES) == {"natural", "text"}


def test_tiny_comparison_end_to_end(tmp_path, capsys):
    rows = main(["--image", "data/camera.png", "--resolution", "32", "--steps", "10", "--width", "32", "--out", str(tmp_path)])
    table = capsys.readouterr().out.strip().splitlines()
    assert table[0].startswith("| encoder | train PSNR (dB) | test PSNR (dB) |")
    assert [line.split("|")[1].strip() for line in table[2:]] == ["none", "basic", "positional", "gaussian", "siren", "hashgrid"]
    for r in rows:
        assert 5 < r["train_psnr"] < 60 and 5 < r["test_psnr"] < 60 and r["seconds"] > 0
        errors = np.array(r["history"]["errors"])
        assert errors.shape == (2, 16)  # measured at step 9 (reused) and 10 (final)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert [r["encoder"] for r in saved["rows"]] == ["none", "basic", "positional", "gaussian", "siren", "hashgrid"]
    assert saved["protocol"]["resolution"] == 32 and saved["protocol"]["kind"] == "natural"
    assert (tmp_path / "spectral_heatmaps.png").stat().st_size > 10_000
    assert (tmp_path / "tb" / "gaussian" / "version_0" / "spectral_history.npz").is_file()
    assert "| gaussian |" in (tmp_path / "results.md").read_text()


def test_text_image_and_an_added_row(tmp_path, monkeypatch, capsys):
    # adding a variant is one entry in the table
    monkeypatch.setitem(VARIANTS, "identity_slow", Variant(lambda p: IdentityEncoding(in_dim=2), lr=1e-4))
    rows = main(["--text", "--resolution", "24", "--steps", "3", "--width", "16", "--encoders", "gaussian,identity_slow",
                 "--out", str(tmp_path)])
    assert [r["encoder"] for r in rows] == ["gaussian", "identity_slow"]
    assert json.loads((tmp_path / "results.json").read_text())["protocol"]["kind"] == "text"
    assert (tmp_path / "text.png").is_file()
    assert "| identity_slow |" in capsys.readouterr().out


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main(["--image", str(tmp_path / "missing.png"), "--out", str(out)])
    assert exc.value.code == 2 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.png" in err[0] and "not found" in err[0]
    with pytest.raises(SystemExit) as exc:
        main(["--encoders", "none,fancy", "--out", str(out)])
    assert exc.value.code == 2 and "fancy" in capsys.readouterr().err


def test_protocol_from_arguments():
    cpu = ce.protocol_from_args(ce.parse_args([]))
    paper = ce.protocol_from_args(ce.parse_args(["--paper"]))
    assert (cpu.resolution, cpu.steps, cpu.kind) == (256, 300, "natural")
    assert (paper.resolution, paper.steps, paper.width, paper.depth) == (512, 2000, 256, 3)
    mixed = ce.protocol_from_args(ce.parse_args(["--paper", "--steps", "50", "--text"]))
    assert (mixed.resolution, mixed.steps, mixed.kind, mixed.gaussian_sigma) == (512, 50, "text", 14.0)
    assert ce.parse_args([]).names == ["none", "basic", "positional", "gaussian", "siren", "hashgrid"]
