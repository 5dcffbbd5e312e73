"""Every comparison's verdicts come from the same rule (runner.difference_note): the codec comparison's lines
against JPEG and its learned init's gain, its two-run comparison, and the learned-initialisation study's verdicts
(each learned init against the paper's, at 2 steps and at the full count; CT at each angle count apart). And
``inr-codec compare --estimate-only`` writes nothing, the photographs it reads included."""

import pytest

from inr.errors import InputError
from inr.experiments import codec
from inr.experiments.comparison import parse, row_notes
from inr.experiments.learned_init import LearnedInit
from inr.experiments.results import results_record
from inr.experiments.runner import difference_note
from inr.io.files import atomic_write


def codec_rows(gap=-1.0, seeds=(0,), images=4, rate=0.2):
    rows = []
    for i in range(images):
        signal = f"s/{i} @ {rate:g} bpp"
        for seed in seeds:
            rows.append(
                {
                    "method": "siren",
                    "kind": "model",
                    "signal": signal,
                    "seed": seed,
                    "target_bpp": rate,
                    "psnr": 25.0 + gap + i / 10 + seed / 100,
                }
            )
        rows.append(
            {"method": "JPEG", "kind": "baseline", "signal": signal, "seed": None, "target_bpp": rate, "psnr": 25.0 + i / 7}
        )
    return rows


def test_the_codecs_lines_against_jpeg_are_the_rules_lines():
    rows = codec_rows(seeds=(0, 1, 2))
    sets = {r["signal"]: "s" for r in rows}
    (line,) = codec.target_gaps(rows, sets, (0.2, 0.5))
    # three seeds of each image against its one JPEG file: one pair per image
    assert line == f"- s, 0.2 bpp: {difference_note(rows, 'siren', 'JPEG')}"
    assert " over 4 pairs from 4 signals, each signal's seeds averaged against JPEG" in line and line.endswith("JPEG above siren")
    # a gap of +0.43 ± 0.85 dB over three images (docs/codec.md's Kodak crops at 0.2 bpp): level
    level = [
        {
            "method": m,
            "kind": "model",
            "signal": f"k/{i} @ 0.2 bpp",
            "seed": 0 if m == "siren" else None,
            "target_bpp": 0.2,
            "psnr": v,
        }
        for i, d in enumerate((0.43 + 0.85, 0.43 - 0.85, 0.43))
        for m, v in (("siren", 25.0 + d), ("JPEG", 25.0))
    ]
    (line,) = codec.paired_lines(level, "siren", "JPEG", {r["signal"]: "k" for r in level}, (0.2,))
    assert line.startswith("- k, 0.2 bpp: siren − JPEG: +0.43 ± 0.85 dB over 3 pairs from 3 signals") and line.endswith(": level")


def test_the_learned_inits_gain_and_two_runs_go_through_the_rule(tmp_path):
    rows = codec_rows(gap=0.5)
    learned = [{**r, "method": "siren+init", "psnr": r["psnr"] + 1.0} for r in rows if r["method"] == "siren"]
    sets = {r["signal"]: "s" for r in rows}
    (gain,) = codec.init_gains(rows + learned, sets, (0.2,))
    assert gain == f"- s, 0.2 bpp: {difference_note(rows + learned, 'siren+init', 'siren')}"
    # two runs' files, the same method in both: the other run's rows are named apart, not refused as duplicates
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    kept = [{**r, "seconds": 1.0, "steps": 5} for r in rows]  # what results.json holds of every row besides its scores
    for path, source in ((first, kept), (second, [{**r, "psnr": r["psnr"] - 0.25} for r in kept])):
        with atomic_write(path, "w") as f:
            import json

            f.write(json.dumps(results_record("inr-codec compare", "0", {"comparison": "codec"}, [0], source, [])))
    line = codec.compare_runs(first, "siren", second, "siren")
    assert line.startswith("- s, 0.2 bpp: siren − siren (other run): +0.25 ± 0.00 dB over 4 pairs from 4 signals")
    # a results file holding a row twice is refused in one line
    with pytest.raises(InputError, match="^two rows of siren for s/0 @ 0.2 bpp, seed 0"):
        codec.target_gaps(rows + rows[:1], sets, (0.2,))


def test_the_learned_init_study_prints_verdicts_per_angle_count():
    study = LearnedInit()
    p = study.protocol(parse(study, ["--kind", "ct", "--angles", "20", "--few-angles", "6", "--test-signals", "4"]))
    rows = []
    for angles, gain in ((20, 1.0), (6, 0.05)):
        for k in range(4):
            signal = f"phantom {k}, {angles} angles"
            noise = (-1) ** k * 0.5  # the 6-angle gain is within this spread: level there
            for method, start in (("reptile", 22.0 + gain + (noise if angles == 6 else k / 50)), ("paper", 22.0)):
                rows.append({"method": method, "signal": signal, "seed": 0, "angles": angles, "psnr_2": start, "psnr": start + 3})
            rows.append(
                {"method": "filtered back-projection", "signal": signal, "seed": None, "angles": angles, "psnr": 20.0 + k}
            )
    summary = study.summary(p, [{**r, "kind": "baseline" if r["seed"] is None else "model"} for r in rows])
    text = row_notes(study, p, rows, summary)
    at20, at6 = text.split("Paired differences of PSNR @2 at 6 angles")
    assert "Paired differences of PSNR @2 at 20 angles" in at20 and "Paired differences of PSNR full at 20 angles" in at20
    assert f"- {difference_note([r for r in rows if r['angles'] == 20], 'reptile', 'paper', 'psnr_2')}" in at20
    assert "- reptile − paper: +1.03 ± 0.03 dB over 4 pairs from 4 signals" in at20 and "reptile above paper" in at20
    assert "- reptile − paper: +0.05 ± 0.58 dB over 4 pairs from 4 signals" in at6 and "): level\n" in at6
    assert "- reptile − filtered back-projection: " in at20  # the best row against the baseline


def test_the_codec_estimate_writes_nothing(tmp_path, monkeypatch, capsys):
    """The photographs the estimate reads go to a scratch folder that is removed; neither --out nor the default
    output folder is created."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    argv = ["--images", "colour-photographs", "--resolution", "32", "--bpp", "1", "--steps", "2", "--threads", "1"]
    assert codec.main([*argv, "--methods", "siren,jpeg", "--estimate-only", "--out", str(out)]) == []
    assert "expected time" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.iterdir()) == [] and "scratch" not in vars(codec.COMPARISON)
    codec.main([*argv, "--methods", "jpeg", "--estimate-only"])  # the default --out
    assert list(tmp_path.iterdir()) == []


def test_the_inverse_problems_judge_a_seed_as_its_phantom_and_one_superresolution_as_one_signal():
    from inr.experiments.inverse import Inverse

    INVERSE = Inverse()

    def rows_for(task):
        rows = []
        for seed in range(3):
            rows.append({"method": "gaussian", "kind": "model", "signal": None, "seed": seed, "psnr": 20.0 + seed / 10})
            rows.append({"method": "bicubic interpolation", "kind": "baseline", "signal": None, "seed": seed, "psnr": 19.0})
        return rows

    summary = [
        {"method": "gaussian", "kind": "model", "psnr": 20.1},
        {"method": "bicubic interpolation", "kind": "baseline", "psnr": 19.0},
    ]
    ct = INVERSE.protocol(parse(INVERSE, ["--task", "ct", "--resolution", "16", "--seeds", "3"]))
    text = row_notes(INVERSE, ct, rows_for("ct"), summary)
    assert " over 3 pairs from 3 signals " in text and "gaussian above bicubic interpolation" in text
    superres = INVERSE.protocol(parse(INVERSE, ["--task", "superres", "--resolution", "16", "--seeds", "3"]))
    text = row_notes(INVERSE, superres, rows_for("superres"), summary)
    assert "+1.10 dB, one pair from 1 signal, each signal's seeds averaged against bicubic interpolation" in text
    assert text.strip().endswith(": level (a difference needs 3 pairs)")


def test_the_image_comparison_applies_the_machine_spread_measured_at_its_protocol():
    """compare_encoders at 256², 300 steps, the paper's natural settings: Gaussian features' 0.73 dB applies to any
    pair with them, and the verdict says so; at 128² nothing was measured and nothing applies."""
    from inr.experiments.compare_encoders import Encoders

    c = Encoders()
    rows = []
    for k in range(4):  # four images, one seed: Gaussian 0.5 dB above positional on every one
        for method, value in (("positional", 26.0 + k / 10), ("gaussian", 26.5 + k / 10 + (k % 2) / 100)):
            rows.append({"method": method, "kind": "model", "signal": f"image {k}", "seed": 0, "psnr": value})
    summary = [{"method": "positional", "kind": "model", "psnr": 26.2}, {"method": "gaussian", "kind": "model", "psnr": 26.7}]
    argv = ["--image", "data/astronaut.png", "--steps", "300"]
    at256 = c.protocol(parse(c, [*argv, "--resolution", "256"]))
    text = row_notes(c, at256, rows, summary)
    assert "machine spread applied where measured" in text
    assert "; machine spread 0.73 dB): level: within the machine spread (0.73 dB)" in text
    at128 = c.protocol(parse(c, [*argv, "--resolution", "128"]))
    text = row_notes(c, at128, rows, summary)
    assert "no machine spread measured for these rows" in text and text.strip().endswith(": gaussian above positional")
