"""Bad options of ``inr-codec encode``: one line, exit 2, refused before any training, nothing written; an encode
expected to take longer than its budget likewise; what the command says while it works (its expected time, which
network of how many) and in its help (the defaults, the time–quality trade)."""

import functools
import re

import pytest

from inr.io import progress
from inr.methods import training


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
        (["--method", "nope"], "--method 'nope': not a method for images"),
        (["--threads", "0"], "--threads 0: at least 1"),
    ]:
        outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", "--params", "100", *extra])
        assert outcome.code == 2 and expected in outcome.stderr and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    assert not (tmp_path / "x.inr").exists()


def test_an_encode_past_its_budget_is_refused_before_training_with_its_estimate(tmp_path, codec_cli, crop_png):
    outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", "--bpp", "2", "--budget-minutes", "0.0001"])
    assert outcome.code == 2 and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    (line,) = outcome.errors
    assert re.fullmatch(
        r"error: encoding takes an estimated [0-9.]+ (s|min|h) \([1-3] network\(s\) × 1000 steps\), more than "
        r"--budget-minutes 0\.0001; use fewer --steps .*, or a larger --budget-minutes",
        line,
    ), line
    assert not (tmp_path / "x.inr").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in"]
    outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", "--bpp", "2", "--budget-minutes", "0"])
    assert outcome.code == 2 and outcome.errors == ["error: --budget-minutes 0: the minutes the encode may take, > 0"]


def test_a_quality_search_past_its_budget_is_refused_before_its_first_network(tmp_path, codec_cli, crop_png):
    outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", "--psnr", "30", "--budget-minutes", "0.0001"])
    assert outcome.code == 2 and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    assert "error: encoding takes an estimated " in outcome.stderr and "(siren 4 × 4 × 1000 steps)" in outcome.stderr
    assert not (tmp_path / "x.inr").exists()


def test_the_encode_prints_its_expected_time_then_which_network_of_how_many(tmp_path, codec_cli, crop_png, monkeypatch):
    monkeypatch.setattr(training, "reporting", functools.partial(progress.reporting, interval=0.0))  # every step's line
    outcome = codec_cli(["encode", crop_png, "-o", tmp_path / "x.inr", "--bpp", "2", "--steps", "3"])
    assert outcome.code == 0, outcome.stderr
    lines = outcome.stderr.splitlines()
    assert re.fullmatch(
        r"expected time: about [0-9.]+ (s|min) for ([1-3]) network\(s\) × 3 steps on 20×24 \(an estimate: .*\)", lines[0]
    )
    count = int(re.search(r"for (\d) network", lines[0]).group(1))
    named = {
        re.match(r"network (\d) of (\d) \(siren 4 × \d+\): training: ", line).groups() for line in lines[1:] if "training" in line
    }
    assert named == {(str(k), str(count)) for k in range(1, count + 1)}, lines


def test_help_shows_the_defaults_and_the_time_quality_trade(codec_cli):
    def help_text(command: str) -> str:
        return " ".join(codec_cli([command, "--help"]).stdout.split())  # argparse's line breaks aside

    text = help_text("encode")
    for expected in ("(default: 1000)", "default: siren)", "(default: 60)", "time and quality:", "the time grows with steps"):
        assert expected in text, text
    assert "(default: 1e+12" in help_text("decode") and "(default: 192)" in help_text("learn-init")


def test_the_codec_module_names_the_comparisons_command_for_compare(capsys):
    """``python -m inr.codec compare`` (the codec alone, below the comparison) says in one line which command
    compares; ``inr-codec compare`` (inr.commands) runs it."""
    from inr.codec.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["compare", "photos/"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1 and "python -m inr.experiments.codec" in err[0]
