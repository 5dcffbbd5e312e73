"""Rate–distortion curves and BD-rates: the deltas against closed forms, the two averaging conventions on a
two-image example computed by hand, CompressAI's JSON layout, each anchor's points against numpy, and the command."""

import json
import math

import imageio.v3 as iio
import numpy as np
import pytest
import torch
from torchmetrics.image import MultiScaleStructuralSimilarityIndexMeasure

from inr.codec.classical import ANCHORS
from inr.experiments import rd_codecs
from inr.experiments.rd import main
from inr.experiments.rd_bd import bd_psnr, bd_rate, mean_curves, per_image
from inr.experiments.rd_curve import MS_SSIM_MIN_SIDE, curve, ms_ssim
from inr.experiments.rd_results import document, mean_curve, read, write
from inr.resources import DATA_DIR

pytest.importorskip("bjontegaard")
pytest.importorskip("pillow_heif")

COMPRESSAI_METRICS = {"bpp", "psnr", "ms-ssim", "encoding_time", "decoding_time"}  # its baselines' results keys


def rate(psnr):
    """A convex rate–distortion law: log₁₀ R quadratic in the PSNR (a curve Akima does not reproduce exactly)."""
    d = np.asarray(psnr, dtype=np.float64)
    return 0.05 * 10 ** ((d - 25) / 12 + 0.002 * (d - 25) ** 2)


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    """A 48×48 crop of the astronaut (uint8, H, W, 3)."""
    return iio.imread(DATA_DIR / "astronaut.png")[100:148, 200:248, :3]


# --- BD-rate and BD-PSNR against closed forms ------------------------------------------------------------------
def test_a_test_curve_at_nine_tenths_of_the_rate_is_minus_ten_percent():
    psnr = np.linspace(26, 40, 8)
    anchor = {"bpp": rate(psnr), "psnr": psnr}
    same_points = {"bpp": 0.9 * rate(psnr), "psnr": psnr}
    assert bd_rate(anchor, same_points).value == pytest.approx(-10.0, abs=1e-9)  # interpolation commutes with the shift
    other = np.linspace(27.3, 39.1, 6)  # other PSNRs: the interpolation's error alone
    assert bd_rate(anchor, {"bpp": 0.9 * rate(other), "psnr": other}).value == pytest.approx(-10.0, abs=0.1)


def test_a_curve_shifted_up_by_half_a_decibel_is_half_a_decibel_of_bd_psnr():
    psnr = np.linspace(26, 40, 8)
    anchor = {"bpp": rate(psnr), "psnr": psnr}
    assert bd_psnr(anchor, {"bpp": rate(psnr), "psnr": psnr + 0.5}).value == pytest.approx(0.5, abs=1e-9)
    assert bd_psnr(anchor, anchor).value == pytest.approx(0.0, abs=1e-12)


def test_the_two_conventions_differ_as_computed_by_hand():
    """Image a: the test codec needs half the anchor's bits; image b (three times a's rate): the same bits.
    Per image: mean(−50 %, 0 %) = −25 %. Mean curves, at equal PSNRs: (0.5 + 3) / (1 + 3) − 1 = −12.5 %."""
    psnr = np.linspace(28, 38, 6)
    anchors = {"a": {"bpp": rate(psnr), "psnr": psnr}, "b": {"bpp": 3 * rate(psnr), "psnr": psnr}}
    tests = {"a": {"bpp": 0.5 * rate(psnr), "psnr": psnr}, "b": {"bpp": 3 * rate(psnr), "psnr": psnr}}
    assert per_image(anchors, tests).value == pytest.approx(-25.0, abs=1e-9)
    assert mean_curves(mean_curve(anchors), mean_curve(tests)).value == pytest.approx(-12.5, abs=1e-9)


def test_curves_that_do_not_overlap_have_no_delta_and_say_why():
    low, high = np.linspace(20, 25, 5), np.linspace(30, 35, 5)
    delta = bd_rate({"bpp": rate(low), "psnr": low}, {"bpp": rate(high), "psnr": high})
    assert math.isnan(delta.value) and "do not overlap" in delta.reason
    anchors = {"a": {"bpp": rate(low), "psnr": low}, "b": {"bpp": rate(high), "psnr": high}}
    tests = {"a": {"bpp": rate(high), "psnr": high}, "b": {"bpp": 0.8 * rate(high), "psnr": high}}
    mixed = per_image(anchors, tests)
    assert mixed.value == pytest.approx(-20.0, abs=1e-9) and mixed.images == 1 and mixed.reason.startswith("a: ")


def test_repeated_unsorted_and_missing_points_are_tolerated():
    """A codec whose lowest settings write one file (AVIF's qualities 0–5), points out of order, a NaN."""
    psnr = np.array([30.0, 26.0, 26.0, 34.0, np.nan, 38.0])
    bpp = rate(np.nan_to_num(psnr, nan=32.0))
    clean = np.array([26.0, 30.0, 34.0, 38.0])
    assert bd_rate({"bpp": rate(clean), "psnr": clean}, {"bpp": 0.9 * bpp, "psnr": psnr}).value == pytest.approx(-10.0)


# --- CompressAI's layout ----------------------------------------------------------------------------------------
def test_the_json_has_compressai_keys_and_round_trips(tmp_path):
    per = {
        "a.png": {"bpp": [0.1, 0.4], "psnr": [28.0, 33.0], "ms-ssim": [math.nan, math.nan], "encoding_time": [0.1, 0.2],
                  "decoding_time": [0.01, 0.02]},
        "b.png": {"bpp": [0.3, 0.8], "psnr": [30.0, 35.0], "ms-ssim": [math.nan, math.nan], "encoding_time": [0.3, 0.4],
                  "decoding_time": [0.03, 0.04]},
    }  # fmt: skip
    doc = document("jpeg", "JPEG", per, {"points": [10, 50], "chroma": "4:2:0"})
    write(tmp_path / "jpeg.json", doc)
    text = (tmp_path / "jpeg.json").read_text()
    raw = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert list(raw)[:3] == ["name", "description", "results"]
    assert set(raw["results"]) <= COMPRESSAI_METRICS and "ms-ssim" not in raw["results"]  # never measured: left out
    assert raw["results"]["bpp"] == pytest.approx([0.2, 0.6]) and raw["results"]["psnr"] == pytest.approx([29.0, 34.0])
    assert raw["per_image"]["a.png"]["ms-ssim"] == [None, None]
    back = read(tmp_path / "jpeg.json")
    assert back["results"] == doc["results"] and back["settings"] == doc["settings"]
    assert math.isnan(back["per_image"]["a.png"]["ms-ssim"][0]) and back["per_image"]["b.png"]["bpp"] == [0.3, 0.8]


# --- the anchors' curves ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("codec", ANCHORS)
def test_each_anchor_grows_with_quality_and_its_psnr_is_numpy_s(monkeypatch, photo, codec):
    """Through a registered wrapper that keeps the files and decoded pixels, as any other codec would plug in."""
    kept = []
    run = rd_codecs.CODECS[codec].run

    def spy(pixels, point):
        result = run(pixels, point)
        kept.append(result)
        return result

    monkeypatch.setitem(rd_codecs.CODECS, "spy", rd_codecs.CODECS[codec])
    rd_codecs.register("spy", spy, rd_codecs.LADDERS[codec][:: 3 if codec == "avif-slow" else 1])
    got = curve(photo, "spy")
    assert np.all(np.diff(got["bpp"]) >= -0.02 * np.array(got["bpp"][1:]))  # monotone, up to a small wobble
    assert got["bpp"][-1] > 2 * got["bpp"][0]
    for (data, decoded, *_), bpp, psnr in zip(kept, got["bpp"], got["psnr"]):
        assert bpp == 8 * len(data) / (48 * 48)
        mse = np.mean((decoded.astype(np.float64) - photo.astype(np.float64)) ** 2)
        assert psnr == pytest.approx(10 * np.log10(255.0**2 / mse), abs=1e-9)
    assert all(t > 0 for t in got["encoding_time"] + got["decoding_time"])


def test_ms_ssim_is_torchmetrics_on_the_pixels_over_255_and_nan_on_a_small_crop(photo):
    big = iio.imread(DATA_DIR / "astronaut.png")[:MS_SSIM_MIN_SIDE, :MS_SSIM_MIN_SIDE, :3]
    noisy = np.clip(big.astype(int) + np.random.default_rng(0).integers(-8, 9, big.shape), 0, 255).astype(np.uint8)
    metric = MultiScaleStructuralSimilarityIndexMeasure(data_range=1.0)
    as_tensor = lambda x: torch.from_numpy(x.astype(np.float64) / 255).permute(2, 0, 1)[None]  # noqa: E731
    reference = float(metric(as_tensor(noisy), as_tensor(big)))  # float64 pixels
    assert ms_ssim(noisy, big) == pytest.approx(reference, abs=1e-5)  # computed in float32
    assert math.isnan(ms_ssim(photo, photo))


def test_a_codec_that_times_nothing_gets_its_call_as_encoding_time(monkeypatch, photo):
    def coarse(pixels, step):  # "file" = the quantised pixels, one byte each
        decoded = (np.round(pixels / step) * step).clip(0, 255).astype(np.uint8)
        return decoded.tobytes(), decoded

    monkeypatch.setitem(rd_codecs.CODECS, "coarse", None)
    rd_codecs.register("coarse", coarse, (32, 8), point="step")
    got = curve(photo, "coarse")
    assert got["bpp"] == [24.0, 24.0] and got["psnr"][0] < got["psnr"][1]
    assert all(t >= 0 for t in got["encoding_time"]) and all(math.isnan(t) for t in got["decoding_time"])


def test_the_network_weights_codec_is_a_file_of_at_most_its_point_in_weights(photo):
    """COIN's design as the registry's ``weights`` codec runs it (here 3 steps): the bytes are a file that decodes, in
    the codec's own reader, to the pixels measured, of a network no larger than the point asks."""
    from inr.codec.coding import decode, read_network

    assert rd_codecs.CODECS["weights"].point == "params" and rd_codecs.CODECS["weights"].suffix == ".inr"
    data, decoded, encode_s, decode_s = rd_codecs._weights("siren", 3)(photo[:16, :16], 400)
    assert np.array_equal(decode(data), decoded) and decoded.shape == (16, 16, 3) and decoded.dtype == np.uint8
    network = read_network(data)
    weights = sum(t.numel() for t in (*network.encoder.parameters(), *network.network.parameters()))
    assert 300 < weights <= 400 and encode_s > 0 and decode_s > 0
    assert rd_codecs.CODECS["weights"].settings()["steps"] == rd_codecs.WEIGHTS_STEPS == 1000


def test_every_preset_has_a_prior_codec_that_names_the_prior_its_encodes_start_from():
    import dataclasses

    from inr.codec.latent_fit import PRESETS
    from inr.codec.latent_model import Spec
    from inr.codec.latent_prior import prior_for

    for name, preset in PRESETS.items():
        codec = f"{'latents' if name == 'medium' else f'latents-{name}'}+prior"
        settings = rd_codecs.CODECS[codec].settings()
        used = prior_for(Spec(256, 256, 3, 7, preset.synthesis, preset.arm))
        assert settings["prior"] == used.digest.hex() and settings["steps"] == preset.steps
        assert settings["prior_lr"] == preset.prior_lr == 1.0
    # the published row held near the prior reruns under its own name, at a tenth of the rate
    assert rd_codecs.CODECS["latents+prior-held"].settings()["prior_lr"] == 0.1
    assert rd_codecs._preset_named("medium", prior_lr=0.1) == dataclasses.replace(PRESETS["medium"], prior_lr=0.1)


# --- the command ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    astronaut = iio.imread(DATA_DIR / "astronaut.png")[:, :, :3]
    iio.imwrite(folder / "a.png", astronaut[100:180, 150:230])
    iio.imwrite(folder / "b.png", astronaut[300:372, 200:290])
    return folder


def test_the_command_writes_a_json_per_codec_the_table_and_the_figure(images, tmp_path, capsys):
    out = tmp_path / "rd"
    main(["--images", str(images), "--crop", "64", "--codecs", "jpeg,webp,avif", "--anchor", "jpeg", "--out", str(out)])
    assert sorted(p.name for p in out.iterdir()) == ["avif.json", "bd.md", "jpeg.json", "rd.png", "webp.json"]
    doc = read(out / "webp.json")
    assert set(doc["per_image"]) == {"a.png", "b.png"} and doc["settings"]["crop"] == 64
    assert doc["settings"]["points"] == list(rd_codecs.LADDERS["webp"]) and "libwebp" in doc["settings"]["versions"]
    assert doc["results"]["bpp"] == pytest.approx(mean_curve(doc["per_image"])["bpp"])
    table = (out / "bd.md").read_text()
    assert "| jpeg | anchor |" in table and "| webp | " in table and "| avif | " in table
    webp_row = next(line for line in table.splitlines() if line.startswith("| webp"))
    assert webp_row.split("|")[2].strip().endswith("%")  # a BD-rate, not n/a
    assert table in capsys.readouterr().out
    assert iio.imread(out / "rd.png").ndim == 3


def test_kept_files_are_the_files_measured_and_decode_to_the_image(images, tmp_path):
    out = tmp_path / "rd"
    main(
        ["--images", str(images), "--crop", "64", "--codecs", "jpeg,webp", "--anchor", "jpeg", "--out", str(out), "--keep-files"]
    )
    for codec, suffix in (("jpeg", ".jpg"), ("webp", ".webp")):
        doc = read(out / f"{codec}.json")
        for image in ("a", "b"):
            for point, bpp in zip(rd_codecs.LADDERS[codec], doc["per_image"][f"{image}.png"]["bpp"]):
                kept = out / "files" / codec / f"{image}_{point:g}{suffix}"
                assert 8 * kept.stat().st_size / 64**2 == bpp  # the file the curve's rate was measured on
                assert iio.imread(kept).shape == (64, 64, 3)
    assert sorted(p.name for p in out.iterdir()) == ["bd.md", "files", "jpeg.json", "rd.png", "webp.json"]


def test_a_registered_codec_is_measured_by_the_command(monkeypatch, images, tmp_path):
    def identity(pixels, point):
        return pixels.tobytes(), pixels

    monkeypatch.setitem(rd_codecs.CODECS, "raw", None)
    rd_codecs.register("raw", identity, (1, 2), point="lambda", description="raw pixels")
    out = tmp_path / "rd"
    main(["--images", str(images / "a.png"), "--crop", "32", "--codecs", "jpeg,raw", "--anchor", "jpeg", "--out", str(out)])
    doc = read(out / "raw.json")
    assert doc["results"]["bpp"] == [24.0, 24.0] and doc["settings"]["point"] == "lambda"
    assert "| raw | n/a |" in (out / "bd.md").read_text()  # infinite PSNR: no curve to compare


@pytest.mark.parametrize(
    "args, message",
    [
        (["--images", "{missing}"], "no such file or directory"),
        (["--codecs", "jpeg,bpg", "--anchor", "jpeg"], "unknown codec 'bpg'"),
        (["--crop", "100"], "--crop 100: .* smaller than the crop"),
        (["--codecs", "jpeg,webp"], "--anchor avif: not among --codecs"),
        (["--out", "{images}"], "--out .*: holds the input"),
    ],
    ids=["missing", "unknown-codec", "crop-too-large", "anchor-not-measured", "out-over-inputs"],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(images, tmp_path, capsys, args, message):
    out = tmp_path / "rd"
    given = {"--images": str(images), "--out": str(out), "--codecs": "jpeg,avif", "--crop": "64"}
    for flag, value in zip(args[::2], args[1::2]):
        given[flag] = value.format(missing=tmp_path / "none", images=images)
    before = sorted(images.iterdir())
    with pytest.raises(SystemExit) as exit_:
        main([x for pair in given.items() for x in pair])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert __import__("re").search(message, err[0]), err[0]
    assert not out.exists() and sorted(images.iterdir()) == before


def test_the_least_ms_ssim_side_is_torchmetrics_own_and_the_codec_comparison_uses_it():
    from torchmetrics.functional.image import multiscale_structural_similarity_index_measure as measure

    import inr.experiments.codec as codec_comparison

    image = torch.rand(1, 3, MS_SSIM_MIN_SIDE, MS_SSIM_MIN_SIDE)
    assert 0 < float(measure(image, image * 0.9, data_range=1.0)) <= 1
    small = image[..., 1:, 1:]  # one pixel short on each side: five scales no longer fit
    with pytest.raises(ValueError):
        measure(small, small * 0.9, data_range=1.0)
    assert codec_comparison.MS_SSIM_MIN_SIDE == MS_SSIM_MIN_SIDE and not hasattr(codec_comparison, "MS_SSIM_SIDE")


def test_a_codec_that_makes_every_point_in_one_run_is_measured_as_the_same_points(monkeypatch, photo):
    """The stacked latent codec: the λ's of an image trained together, at a tiny preset, against the same λ's
    trained one by one: the same files up to float rounding, so the same curve within 0.05 dB and 2 % of the rate."""
    from inr.codec.latent_fit import Preset

    tiny = Preset("tiny", 30, 8, 8)
    stacked = rd_codecs._latent_stacked(tiny)
    monkeypatch.setitem(rd_codecs.CODECS, "tiny-stacked", None)
    monkeypatch.setitem(rd_codecs.CODECS, "tiny", None)
    rd_codecs.register("tiny-stacked", lambda px, lam: stacked(px, [lam])[0], (0.02, 0.001), "lambda", run_points=stacked)
    rd_codecs.register("tiny", rd_codecs._latent(tiny), (0.02, 0.001), "lambda")
    together, alone = curve(photo, "tiny-stacked"), curve(photo, "tiny")
    assert together["bpp"][0] < together["bpp"][1]
    assert together["psnr"] == pytest.approx(alone["psnr"], abs=0.05) and together["bpp"] == pytest.approx(alone["bpp"], rel=0.02)
    assert rd_codecs.CODECS["latents-stacked"].run_points is not None and rd_codecs.CODECS["latents"].run_points is None
