"""``inr-codec encode --method latents`` with several images and λ's: one stacked run, one file per member, each
decoding to what the command reports and coding as the member's own encode does; what cannot be stacked or written
is one line before any training, and nothing is written."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec import latent_encode
from inr.codec.coding import decode, read_file
from inr.codec.latent_encode import encode_latent_image, encode_to_targets, psnr
from inr.codec.latent_fit import Preset

TINY = Preset("tiny", 30, 6, 6)


@pytest.fixture
def two_pngs(tmp_path, crop):
    """Two crops of one size in a folder of their own: the crop and its mirror image."""
    folder = tmp_path / "in"
    folder.mkdir()
    iio.imwrite(folder / "a.png", crop)
    iio.imwrite(folder / "b.png", np.ascontiguousarray(crop[:, ::-1]))
    return folder / "a.png", folder / "b.png"


def reported(stdout: str) -> dict[str, tuple[float, float]]:
    """{file name: (bpp, PSNR)} of the command's ``wrote`` lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("wrote "):
            name = line.split()[1].rstrip(":").rsplit("/", 1)[-1]
            bpp = float(line.split(" bpp")[0].rsplit("= ", 1)[1])
            out[name] = (bpp, float(line.split("PSNR ")[1].split(" dB")[0]))
    return out


def test_every_image_at_every_lambda_is_a_file_that_decodes_as_reported(codec_cli, two_pngs, tmp_path, monkeypatch):
    monkeypatch.setitem(latent_encode.PRESETS, "fast", TINY)
    out = tmp_path / "coded"
    out.mkdir()
    args = ["encode", *two_pngs, "-o", out, "--method", "latents", "--lambda", "0.1,0.0001", "--preset", "fast"]
    result = codec_cli(args)
    assert result.code == 0, result.stderr
    assert "× 4 members stacked" in result.stderr
    lines = reported(result.stdout)
    assert sorted(lines) == ["a_lambda0.0001.inr", "a_lambda0.1.inr", "b_lambda0.0001.inr", "b_lambda0.1.inr"]
    for name, (bpp, db) in lines.items():
        source = iio.imread(two_pngs[0] if name.startswith("a") else two_pngs[1])
        data = (out / name).read_bytes()
        assert 8 * len(data) / (24 * 20) == pytest.approx(bpp, abs=1e-4)
        assert psnr(decode(read_file(out / name)), source) == pytest.approx(db, abs=0.005)
    for image in "ab":  # the rate's weight still acts per member
        assert lines[f"{image}_lambda0.1.inr"][0] < lines[f"{image}_lambda0.0001.inr"][0]


def test_a_stacked_member_codes_as_its_own_encode(codec_cli, two_pngs, tmp_path, monkeypatch):
    """The stacked run is the members' own trainings within float rounding (test_latent_stack), so each file is
    the one-image encode's within a little of its PSNR and rate (the rounding may move a few latents by one)."""
    monkeypatch.setitem(latent_encode.PRESETS, "fast", TINY)
    out = tmp_path / "coded"
    out.mkdir()
    result = codec_cli(["encode", *two_pngs, "-o", out, "--method", "latents", "--lambda", "0.001", "--preset", "fast"])
    assert result.code == 0, result.stderr
    lines = reported(result.stdout)
    assert sorted(lines) == ["a.inr", "b.inr"]
    one = codec_cli(["encode", two_pngs[0], "-o", tmp_path, "--method", "latents", "--lambda", "0.001", "--preset", "fast"])
    assert one.code == 0 and reported(one.stdout)["a.inr"][1] == pytest.approx(lines["a.inr"][1], abs=0.05)  # <stem>.inr
    image = torch.from_numpy(iio.imread(two_pngs[1]).astype(np.float32) / 255.0)
    alone = encode_latent_image(image, 0.001, TINY)
    assert lines["b.inr"][1] == pytest.approx(alone.psnr, abs=0.05)
    assert lines["b.inr"][0] == pytest.approx(alone.bpp, rel=0.03)


def test_a_target_is_searched_per_image_in_stacked_rounds(crop):
    images = [torch.from_numpy(c.astype(np.float32) / 255.0) for c in (crop, np.ascontiguousarray(crop[::-1]))]
    lines = []
    got = encode_to_targets(images, "bpp", 6.0, TINY, fits=3, say=lambda k, line: lines.append((k, line)))
    assert len(got) == 2 and all(c.bpp <= 6.0 for c in got)
    assert [k for k, _ in lines] == [0, 1] * 3
    assert got[0].pixels.shape == got[1].pixels.shape == (24, 20, 3)
    with pytest.raises(Exception, match=r"no file of 2 λ's met it \(image 1 of 2\)"):
        encode_to_targets(images, "psnr", 59.0, Preset("tiny", 10, 6, 6), fits=2)


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--lambda", "0.01,0.01"], "a λ named twice"),
        (["--lambda", "0.01,x"], "--lambda 0.01,x: comma-separated"),
        (["--lambda", "0.01,0"], "--lambda 0: the rate's weight"),
        (["--lambda", "0.01", "--prior"], "--prior: one image at one λ"),
    ],
)
def test_what_cannot_be_stacked_is_one_line_and_nothing_is_written(codec_cli, two_pngs, tmp_path, extra, expected):
    out = tmp_path / "coded"
    out.mkdir()
    result = codec_cli(["encode", *two_pngs, "-o", out, "--method", "latents", *extra])
    assert result.code == 2 and len(result.errors) == 1 and expected in result.errors[0], result.stderr
    assert list(out.iterdir()) == []


def test_outputs_that_cannot_hold_the_members_are_one_line(codec_cli, two_pngs, crop, tmp_path):
    a, b = two_pngs
    result = codec_cli(["encode", a, b, "-o", tmp_path / "x.inr", "--method", "latents", "--lambda", "0.01"])
    assert result.code == 2 and "give an existing directory" in result.errors[0]
    assert not (tmp_path / "x.inr").exists()
    other = tmp_path / "other"
    other.mkdir()
    iio.imwrite(other / "a.png", crop)
    out = tmp_path / "coded"
    out.mkdir()
    result = codec_cli(["encode", a, other / "a.png", "-o", out, "--method", "latents", "--lambda", "0.01"])
    assert result.code == 2 and "two images named 'a'" in result.errors[0]
    iio.imwrite(other / "small.png", crop[:20])
    result = codec_cli(["encode", a, other / "small.png", "-o", out, "--method", "latents", "--lambda", "0.01"])
    assert result.code == 2 and len(result.errors) == 1 and "images of one size only" in result.errors[0], result.stderr
    result = codec_cli(["encode", a, b, "-o", out, "--bpp", "1"])
    assert result.code == 2 and "a network's file codes one image at a time" in result.errors[0]
    assert list(out.iterdir()) == []
