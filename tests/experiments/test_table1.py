"""python -m inr.experiments.table1 at toy size: every member is the single run of its image and seed, the table is
their mean ± std beside the baselines and the paper's row, and the sets and refusals behave."""

import json

import numpy as np
import pytest
from PIL import Image

from inr.data.image_sets import NATURAL, image_folder, natural_set
from inr.errors import InputError
from inr.experiments.compare_encoders import Encoders
from inr.experiments.comparison import Member, parse, train_row
from inr.experiments.table1 import main

TINY = ["--resolution", "32", "--steps", "6", "--width", "16", "--threads", "1"]


@pytest.mark.slow
def test_members_are_the_single_runs_and_the_table_is_their_mean(tmp_path, capsys):
    rows = main(
        ["--kind", "natural", "--count", "2", "--seeds", "2", "--methods", "none,gaussian", *TINY, "--out", str(tmp_path)]
    )
    models = [r for r in rows if r["kind"] == "model"]
    assert [(r["method"], r["signal"], r["seed"]) for r in models] == [
        (m, image, seed) for m in ("none", "gaussian") for image in ("astronaut", "camera") for seed in (0, 1)
    ]
    # member (camera, seed 1) of the Gaussian run is the image comparison's single run of that image and seed
    encoders = Encoders()
    image = str(tmp_path / "images" / "camera.png")
    p = encoders.protocol(parse(encoders, ["--image", image, "--resolution", "32", "--steps", "6", "--width", "16"]))
    single = train_row(encoders, p, "gaussian", Member(None, 1), tmp_path / "single")
    member = next(r for r in models if (r["method"], r["signal"], r["seed"]) == ("gaussian", "camera", 1))
    assert member["psnr"] == pytest.approx(single["psnr"], abs=0.02)
    assert member["ssim"] == pytest.approx(single["ssim"], abs=0.002)
    out = capsys.readouterr().out
    gaussian = [r["psnr"] for r in models if r["method"] == "gaussian"]
    assert f"| gaussian | {np.mean(gaussian):.2f} ± {np.std(gaussian, ddof=1):.2f} |" in out
    assert "| bicubic |" in out and "gaussian 25.57" in out
    assert "- gaussian − none: " in out and " dB over 4 pairs from 2 signals (gaussian above in " in out  # per image and seed
    assert "one pair from" not in out and ", 2 pairs from 2 signals, each signal's seeds averaged against bicubic" in out
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["rows"]) == 8 + 4  # 2 methods × 2 images × 2 seeds, then bilinear and bicubic per image
    assert (tmp_path / "results.md").read_text().startswith("Table 1, natural: 2 photographs")


def test_sets_and_refusals(tmp_path, capsys):
    paths = natural_set(tmp_path / "set", ("camera", "coins"))
    assert [p.name for p in paths] == ["camera.png", "coins.png"] and len(NATURAL) == 8
    assert image_folder(tmp_path / "set") == paths
    with pytest.raises(InputError, match="no image files"):
        image_folder(tmp_path)
    Image.new("RGB", (40, 30)).save(tmp_path / "flat.png")
    with pytest.raises(SystemExit) as exc:  # a constant image is refused before anything trains
        main(["--kind", "natural", "--images", str(tmp_path), *TINY, "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exc:
        main(["--kind", "ct", "--images", str(tmp_path)])
    assert exc.value.code == 2


def test_a_stale_image_under_a_builtin_name_is_refused_in_one_line(tmp_path, capsys):
    """A grey ramp saved as out/images/camera.png is not scored as scikit-image's camera."""
    out = tmp_path / "out"
    (out / "images").mkdir(parents=True)
    ramp = np.tile(np.linspace(0, 255, 512).astype(np.uint8), (512, 1))
    Image.fromarray(ramp).save(out / "images" / "camera.png")
    with pytest.raises(SystemExit) as exc:
        main(["--kind", "natural", "--count", "2", *TINY, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1
    assert (
        err[0]
        == f"error: {out / 'images' / 'camera.png'}: not scikit-image's camera (its pixels differ): remove it, or choose another folder"
    )
    assert not (out / "results.json").exists()


@pytest.mark.slow
def test_a_sigterm_keeps_the_finished_rows_and_the_same_command_resumes(tmp_path, monkeypatch, capsys):
    import os
    import signal

    from inr.experiments import comparison

    real, calls = comparison.fit_row, []

    def fit_then_signal(*args, **kwargs):
        calls.append(kwargs["label"])
        if len(calls) == 2:  # SIGTERM while the second phantom trains
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(comparison, "fit_row", fit_then_signal)
    argv = ["--kind", "ct", "--count", "2", "--seeds", "2", "--methods", "gaussian", *TINY, "--out", str(tmp_path)]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 143
    kept = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [(r["signal"], r["seed"]) for r in kept] == [("phantom 0", 0), ("phantom 0", 1)]  # the first stacked run
    rows = main(argv)
    assert calls[2:] == ["gaussian (2 members)"]  # only the second phantom trained again
    assert [r["psnr"] for r in rows[:2]] == [r["psnr"] for r in kept]
    assert [r["method"] for r in rows[4:]] == ["filtered back-projection", "grid optimisation"] * 2


@pytest.mark.parametrize(
    "seeds, words", [("1e20", "--seeds: Expected a <class 'int'>"), ("100000000000000000000", "--seeds must be 1 …")]
)
def test_a_huge_seed_count_is_one_line(seeds, words, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--kind", "ct", "--seeds", seeds])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and words in err[0], err
