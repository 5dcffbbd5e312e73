"""``inr-codec compare`` in one run: two sets of images, the coordinate-network rows with and without a learned init
and the classical codecs at the same rates, one table per set, the figure; its own estimate; the refusals that come
before any training (an image the init was learned on, a rate without an init, a missing init directory). And
``inr-codec learn-init`` end to end: inits the encoder and decoder share, the photographs they were learned on
refused."""

import re

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec.architecture import Architecture
from inr.codec.init import file_name
from inr.codec.search import ladder, size_for_budget
from inr.data.signal_classes import signal_hash
from inr.experiments.codec import compare_runs
from inr.experiments.results import load_results
from inr.metrics import psnr
from inr.resources import DATA_DIR

SIDE, RATES = 32, (1.0, 2.0)


@pytest.fixture
def sets(tmp_path):
    """Two folders of 36² crops of the astronaut: a/ with two images, b/ with one."""
    photo = iio.imread(DATA_DIR / "astronaut.png")[:, :, :3]
    for folder, corners in (("a", [(100, 200), (300, 100)]), ("b", [(0, 0)])):
        (tmp_path / folder).mkdir()
        for k, (top, left) in enumerate(corners):
            iio.imwrite(tmp_path / folder / f"{folder}{k}.png", photo[top : top + 36, left : left + 36])
    return tmp_path / "a", tmp_path / "b"


@pytest.fixture
def inits(tmp_path, init_file):
    """A directory with a (random) init of the size each rate trains at 32²."""
    folder = tmp_path / "inits"
    folder.mkdir()
    for rate in RATES:
        arch = size_for_budget(ladder("siren", 4), rate * SIDE * SIDE, SIDE, 3)
        init_file(folder / file_name(arch), *arch.build(SIDE, 3))
    return folder


def compare_args(sets, out, *extra):
    return [
        "compare",
        f"{sets[0]},{sets[1]}",
        "--resolution",
        SIDE,
        "--bpp",
        ",".join(map(str, RATES)),
        "--steps",
        5,
        "--out",
        out,
        *extra,
    ]


@pytest.mark.slow
def test_one_run_measures_every_row_on_both_sets(codec_cli, tmp_path, sets, inits):
    out = tmp_path / "out"
    methods = "siren,siren+init,jpeg,webp,avif"
    outcome = codec_cli(compare_args(sets, out, "--init", inits, "--methods", methods))
    assert outcome.code == 0, outcome.stderr
    results = load_results(out / "results.json")
    labels = {(r["method"], r["signal"]) for r in results.rows}
    for folder, stems in (("a", ["a0", "a1"]), ("b", ["b0"])):
        for stem in stems:
            for rate in RATES:
                for method in ("siren", "siren+init", "JPEG", "WEBP", "AVIF"):
                    assert (method, f"{folder}/{stem} @ {rate:g} bpp") in labels
    for row in results.rows:
        if np.isfinite(row.get("bpp", np.nan)):
            assert row["bpp"] <= row["target_bpp"]  # the file's size is within the rate
    learned = [r for r in results.rows if r["method"] == "siren+init"]
    assert learned and all("from the learned init" in r["setting"] for r in learned)
    assert results.protocol["init_digests"] and len(results.protocol["init_digests"]) == len(RATES)
    # one table per set, each rate's rows together
    table = (out / "results.md").read_text()
    assert re.search(r"\| a \| siren\+init \| 1\.00 \|", table) and re.search(r"\| b \| JPEG \| 2\.00 \|", table)
    assert [(r["signal"], r["target_bpp"]) for r in results.summary][:5] == [("a", 1.0)] * 5
    assert iio.imread(out / "rd.png").shape[0] > 100
    # the learned init's gain, paired per image, in the notes; and the same across two runs' files
    gains = table.split("The learned init's gain at the same 5 steps (paired per image; two-sided paired t-test")[1]
    gains = gains.split("):\n", 1)[1].splitlines()
    assert len(gains) == 2 * len(RATES) and all(
        re.match(r"- [ab], [12] bpp: siren\+init − siren: [+-]\d+\.\d\d", g) for g in gains
    )
    assert all(" pairs from 2 signals" in g for g in gains if g.startswith("- a")) and all(
        "one pair from 1 signal: level" in g for g in gains if g.startswith("- b")
    )
    assert compare_runs(out / "results.json", "siren+init", out / "results.json", "siren").splitlines() == gains


@pytest.mark.slow
def test_the_estimate_times_every_rate_and_writes_nothing(codec_cli, tmp_path, sets, inits):
    out = tmp_path / "out"
    outcome = codec_cli(compare_args(sets, out, "--init", inits, "--methods", "siren,siren+init,jpeg", "--estimate-only"))
    assert outcome.code == 0, outcome.stderr
    line = next(line for line in outcome.stderr.splitlines() if line.startswith("expected time"))
    for rate in RATES:
        for method in ("siren", "siren+init"):
            assert f"{method} @ {rate:g} bpp" in line
    assert not out.exists()


def test_refusals_before_any_training(codec_cli, tmp_path, sets, inits, init_file):
    out = tmp_path / "out"
    missing = codec_cli(compare_args(sets, out, "--init", tmp_path / "none", "--methods", "siren+init"))
    assert missing.code == 2 and "not a directory of learned inits" in missing.errors[0]
    unknown = codec_cli(compare_args(sets, out, "--methods", "siren+init"))
    assert unknown.code == 2 and "--methods: unknown siren+init" in unknown.errors[0]
    # an init learned on one of the images: refused, naming it
    seen = torch.from_numpy(iio.imread(sets[1] / "b0.png").astype(np.float32) / 255.0)
    arch = size_for_budget(ladder("siren", 4), RATES[0] * SIDE * SIDE, SIDE, 3)
    init_file(inits / file_name(arch), *arch.build(SIDE, 3), trained_on=[signal_hash(seen)])
    outcome = codec_cli(compare_args(sets, out, "--init", inits, "--methods", "siren+init"))
    assert outcome.code == 2 and len(outcome.errors) == 1 and "b0.png: --init" in outcome.errors[0]
    assert "was meta-learned on this image" in outcome.errors[0]
    # a rate whose size has no init
    (inits / file_name(arch)).unlink()
    outcome = codec_cli(compare_args(sets, out, "--init", inits, "--methods", "siren+init"))
    assert outcome.code == 2 and f"no init for {arch.label()}" in outcome.errors[0]
    assert not (out / "results.json").exists()


@pytest.mark.slow
def test_learn_init_then_encode_and_decode_against_it(codec_cli, tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    photo = iio.imread(DATA_DIR / "astronaut.png")[:, :, :3]
    iio.imwrite(photos / "top.png", photo[:256])
    iio.imwrite(photos / "left.png", photo[256:, :256])
    inits = tmp_path / "inits"
    learn = ["learn-init", photos, "-o", inits, "--width", "6", "--depth", "2", "--resolution", "16", "--steps", "3"]
    learn += ["--inner-steps", "2"]
    learned = codec_cli([*learn, "--test", photos.parent / "held"])
    assert learned.code == 2 and "--test" in learned.errors[0]  # a missing test folder, before any work
    learned = codec_cli(learn)
    assert learned.code == 0, learned.stderr
    arch = Architecture("siren", 6, 2)
    assert (inits / file_name(arch)).is_file() and (inits / "siren_2x6.json").is_file()
    # an image it has not seen, coded against it and decoded with it
    image = tmp_path / "image.png"
    iio.imwrite(image, photo[300:320, 300:324])
    encoded = codec_cli(
        [
            "encode",
            image,
            "-o",
            tmp_path / "image.inr",
            "--params",
            "200",
            "--depth",
            "2",
            "--steps",
            "4",
            "--init",
            inits,
            "--finetune-steps",
            "2",
        ]
    )
    assert encoded.code == 0, encoded.stderr
    assert "the change from the learned init" in encoded.stdout
    printed = float(re.search(r"PSNR ([\d.]+) dB", encoded.stdout).group(1))
    decoded = codec_cli(["decode", tmp_path / "image.inr", "-o", tmp_path / "back.png", "--init", inits / file_name(arch)])
    assert decoded.code == 0, decoded.stderr
    back = iio.imread(tmp_path / "back.png")
    assert f"{psnr(torch.from_numpy(back / 255.0), torch.from_numpy(photo[300:320, 300:324] / 255.0)):.2f}" == f"{printed:.2f}"
    # the photographs it was learned on are refused as tests of it
    refused = codec_cli(
        ["encode", photos / "top.png", "-o", tmp_path / "top.inr", "--params", "200", "--depth", "2", "--init", inits]
    )
    assert refused.code == 2 and "was meta-learned on this image" in refused.errors[0]
    assert not (tmp_path / "top.inr").exists()
