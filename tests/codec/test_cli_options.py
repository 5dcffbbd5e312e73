"""Bad options of ``inr-codec encode``: one line, exit 2, refused before any training, nothing written."""

import pytest


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--bpp", "0"], "--bpp 0: bits per pixel must lie in (0, 24]"),
        (["--bpp", "-1"], "--bpp -1: bits per pixel must lie in (0, 24]"),
        (["--bpp", "nan"], "--bpp nan: not a finite number"),
        (["--psnr", "1000"], "--psnr 1000: a PSNR target must lie in (0, 60] dB"),
        (["--params", "0"], "--params 0: the number of weights must be a whole number ≥ 1"),
        (["--bpp", "0.3", "--psnr", "30"], "not allowed with argument"),
        (["--bpp", "abc"], "invalid float value: 'abc'"),
        (["--bpp", "0.3", "--method", "positional_rotated"], "--method 'positional_rotated': not a method for images"),
    ],
)
def test_bad_targets(tmp_path, codec_cli, crop_png, extra, expected):
    outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", *extra])
    assert outcome.code == 2 and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    assert expected in outcome.stderr
    assert not (tmp_path / "x.inr").exists()


def test_a_missing_image(tmp_path, codec_cli):
    outcome = codec_cli(["encode", tmp_path / "none.png", "-o", tmp_path / "x.inr", "--bpp", "1"])
    assert outcome.code == 2 and outcome.errors == [f"error: {tmp_path / 'none.png'}: file not found"]


@pytest.mark.parametrize(
    "output, expected",
    [
        ("missing/x.inr", "does not exist"),
        ("file.txt/x.inr", "does not exist"),
        ("folder.inr", "is a directory"),
        ("x.png", "encode writes .inr files"),
    ],
)
def test_an_unwritable_output_is_refused_before_training(tmp_path, codec_cli, crop_png, output, expected):
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "folder.inr").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    outcome = codec_cli(["encode", crop_png, "-o", tmp_path / output, "--bpp", "1", "--steps", "100000"])
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_rate_below_the_smallest_file(tmp_path, codec_cli, crop_png):
    outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", "--bpp", "0.01"])
    assert outcome.code == 2 and len(outcome.errors) == 1 and "is below the smallest network's file" in outcome.errors[0]
    assert not (tmp_path / "x.inr").exists()


def test_bad_training_settings(tmp_path, codec_cli, crop_png):
    for extra, expected in [
        (["--steps", "0"], "--steps 0: at least one training step"),
        (["--bits", "40"], "--bits 40: choose 4…16"),
        (["--method", "nope"], "--method 'nope': unknown"),
        (["--threads", "0"], "--threads 0: at least 1"),
    ]:
        outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", "--params", "100", *extra])
        assert outcome.code == 2 and expected in outcome.stderr and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    assert not (tmp_path / "x.inr").exists()
