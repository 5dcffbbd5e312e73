"""The latent codec end to end on a small crop: the file decodes to the encoder's pixels from its bytes, in another
process and at another thread count; gray images; every damaged or hostile file is one line; the command's options;
the λ search behind --bpp and --psnr."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec import latent_encode
from inr.codec.coding import decode
from inr.codec.latent_encode import encode_latent_image, encode_to_target, psnr
from inr.codec.latent_file import MAGIC, unpack
from inr.codec.latent_fit import Preset
from inr.errors import InputError

TINY = Preset("tiny", 40, 8, 8)
LEVELS_AT = 10  # magic 4, version 1, channels 1, height 2, width 2


@pytest.fixture(scope="module")
def coded(crop):
    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    return encode_latent_image(image, 1e-3, TINY)


def with_crc(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


def patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    body = bytearray(data[:-4])
    struct.pack_into(fmt, body, offset, value)
    return with_crc(bytes(body))


def test_the_file_decodes_to_the_encoders_pixels(coded, crop):
    assert coded.data[:4] == MAGIC
    back = decode(coded.data)
    assert np.array_equal(back, coded.pixels)
    assert back.shape == crop.shape and back.dtype == np.uint8
    assert coded.psnr == pytest.approx(psnr(back, crop))
    assert coded.bpp == 8 * len(coded.data) / (crop.shape[0] * crop.shape[1])
    # where the bits went adds up to the file, to within the coder's rounding (a 32-bit word per stream)
    assert sum(coded.parts.values()) == pytest.approx(8 * len(coded.data), abs=2 * 32 + 8)


def test_an_image_whose_latents_are_all_predicted_exactly_still_codes():
    # a flat image after a few steps: every latent 0 and predicted 0, one symbol, which the range coder refuses alone
    flat = torch.full((24, 24, 3), 0.5)
    coded = encode_latent_image(flat, 0.01, Preset("few", 2, 4, 4))
    assert unpack(coded.data)[0].latent_bound == 1
    assert np.array_equal(decode(coded.data), coded.pixels)


def test_the_file_decodes_alike_in_another_process_at_either_thread_count(coded, tmp_path):
    path = tmp_path / "crop.inr"
    path.write_bytes(coded.data)
    for threads in (1, 2):
        out = tmp_path / f"back{threads}.png"
        run = subprocess.run(
            [sys.executable, "-m", "inr.codec", "decode", str(path), "-o", str(out), "--threads", str(threads)],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        assert np.array_equal(iio.imread(out).reshape(coded.pixels.shape), coded.pixels)


def test_a_gray_image_is_coded_as_one_channel(crop):
    gray = torch.from_numpy(crop.mean(axis=2, keepdims=True).astype(np.float32) / 255.0)
    result = encode_latent_image(gray, 1e-3, Preset("tiny", 20, 6, 6))
    assert result.pixels.shape == (24, 20, 1)
    assert np.array_equal(decode(result.data), result.pixels)


def test_a_larger_lambda_gives_a_smaller_file(crop):
    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    small = encode_latent_image(image, 0.1, TINY)
    large = encode_latent_image(image, 1e-4, TINY)
    assert len(small.data) < len(large.data) and small.psnr < large.psnr


def test_every_truncation_is_one_line(coded):
    for end in range(len(coded.data)):
        with pytest.raises(InputError):
            decode(coded.data[:end], "cut.inr")


def test_every_flipped_byte_behind_a_recomputed_crc_is_decoded_or_refused(coded):
    body = coded.data[:-4]
    for offset in range(len(body)):
        for flip in (0x01, 0x80):
            damaged = bytearray(body)
            damaged[offset] ^= flip
            try:
                pixels = decode(with_crc(bytes(damaged)), "bad.inr")
            except InputError:
                continue
            assert pixels.dtype == np.uint8 and pixels.ndim == 3


@pytest.mark.parametrize(
    "offset, fmt, value, expected",
    [
        (4, "<B", 2, "latent format version 2"),
        (5, "<B", 2, "2 channels"),
        (6, "<H", 1, "image height 1"),
        (LEVELS_AT, "<B", 13, "latent levels 13"),
        (LEVELS_AT + 1, "<B", 0, "synthesis width 0"),
        (LEVELS_AT + 2, "<B", 65, "entropy-model width 65"),
        (LEVELS_AT + 3, "<B", 30, "entropy-model bits 30"),
        (LEVELS_AT + 5, "<B", 2, "prior field 0x02"),
        (LEVELS_AT + 8, "<H", 5000, "largest latent residual 5000"),
        (LEVELS_AT + 8, "<H", 0, "largest latent residual 0"),
    ],
)
def test_hostile_headers_are_refused_in_one_line(coded, offset, fmt, value, expected):
    with pytest.raises(InputError, match=expected):
        decode(patched(coded.data, offset, fmt, value), "bad.inr")


def test_a_file_declaring_more_work_than_the_bound_is_refused_before_decoding(coded):
    header, _ = unpack(coded.data)
    big = patched(patched(coded.data, 6, "<H", 16384), 8, "<H", 4096)
    with pytest.raises(InputError, match="multiply-adds"):
        decode(big, "big.inr", max_work=1e9)
    assert header.spec.height == 24


def test_the_command_encodes_and_decodes(codec_cli, crop_png, tmp_path, monkeypatch):
    monkeypatch.setitem(latent_encode.PRESETS, "fast", TINY)
    out = tmp_path / "crop.inr"
    result = codec_cli(["encode", crop_png, "-o", out, "--method", "latents", "--lambda", "0.001", "--preset", "fast"])
    assert result.code == 0, result.stderr
    assert "bpp, PSNR" in result.stdout and "multiply-adds a pixel" in result.stdout
    back = tmp_path / "back.png"
    assert codec_cli(["decode", out, "-o", back]).code == 0
    assert iio.imread(back).shape == (24, 20, 3)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--method", "latents", "--params", "100"], "--params"),
        (["--method", "latents", "--lambda", "-1"], "--lambda -1"),
        (["--method", "latents", "--lambda", "0.01", "--preset", "warp"], "--preset 'warp'"),
        (["--method", "latents", "--lambda", "0.01", "--levels", "13"], "--levels 13"),
        (["--method", "latents", "--bpp", "0"], "--bpp 0"),
        (["--method", "siren", "--lambda", "0.01"], "--lambda"),
    ],
)
def test_bad_options_are_one_line_and_nothing_is_written(codec_cli, crop_png, tmp_path, args, expected):
    out = tmp_path / "x.inr"
    result = codec_cli(["encode", crop_png, "-o", out, *args])
    assert result.code == 2 and len(result.errors) == 1 and expected in result.errors[0], result.stderr
    assert not out.exists()


def test_a_rate_target_is_met_by_the_search(crop):
    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    lines = []
    got = encode_to_target(image, "bpp", 6.0, Preset("tiny", 20, 6, 6), fits=3, say=lines.append)
    assert got.bpp <= 6.0 and len(lines) == 3
    with pytest.raises(InputError, match="no file of 2 λ's met it"):
        encode_to_target(image, "psnr", 59.0, Preset("tiny", 10, 6, 6), fits=2)


@pytest.fixture
def tiny_prior(monkeypatch):
    """A prior fitting the tiny preset at 3 levels, shipped for the test's duration (learned over two crops)."""
    from inr.codec import latent_prior
    from inr.codec.latent_prior_learn import learn_prior

    rng = np.random.default_rng(0)
    crops = [torch.from_numpy(rng.random((16, 16, 3), dtype=np.float32)) for _ in range(2)]
    prior = learn_prior(crops, 1e-3, TINY, levels=3)
    monkeypatch.setattr(latent_prior, "shipped", lambda: {prior.digest: prior})
    return prior


def test_a_prior_learned_over_several_lambdas_gives_each_crop_its_own_in_turn():
    from inr.codec.latent_prior_learn import learn_prior

    rng = np.random.default_rng(0)
    crops = [torch.from_numpy(rng.random((16, 16, 3), dtype=np.float32)) for _ in range(2)]
    one = learn_prior(crops, 1e-3, Preset("tiny", 5, 8, 8), levels=3)
    # the same λ named for each crop is the one-λ prior, to the integer
    assert learn_prior(crops, [1e-3, 1e-3], Preset("tiny", 5, 8, 8), levels=3).digest == one.digest
    # a second λ reaches the second crop only: the shared networks then train on another loss
    assert learn_prior(crops, [1e-3, 1.0], Preset("tiny", 5, 8, 8), levels=3).digest != one.digest
    assert (
        learn_prior(crops, [1e-3, 1.0, 5.0], Preset("tiny", 5, 8, 8), levels=3).digest
        == learn_prior(crops, [1e-3, 1.0], Preset("tiny", 5, 8, 8), levels=3).digest
    )  # a third λ with two crops is never taken


def test_a_file_coded_against_the_prior_names_it_and_decodes(crop, tiny_prior, monkeypatch):
    from inr.codec import latent_prior

    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    with_prior = encode_latent_image(image, 1e-3, TINY, levels=3, use_prior=True)
    header, _ = unpack(with_prior.data)
    assert header.prior == tiny_prior.digest
    assert np.array_equal(decode(with_prior.data), with_prior.pixels)
    without = encode_latent_image(image, 1e-3, TINY, levels=3)
    assert unpack(without.data)[0].prior is None
    # a decoder that ships no such prior says so in one line
    monkeypatch.setattr(latent_prior, "shipped", lambda: {})
    with pytest.raises(InputError, match=f"decoder prior {tiny_prior.digest.hex()}, which this inr does not ship"):
        decode(with_prior.data, "x.inr")
    # an encoder asked for a prior that no shipped one fits says so, instead of coding without one
    with pytest.raises(InputError, match="--prior: no shipped decoder prior fits 3 grids with networks 8 and 8 wide"):
        encode_latent_image(image, 1e-3, TINY, levels=3, use_prior=True)


def test_from_the_prior_the_networks_train_at_the_latents_rate_unless_held_near_it(crop, tiny_prior):
    """The default prior_lr 1: the prior is where the networks start, and they move as freely as without one; with
    prior_lr 0.1 Adam's steps, and so the networks' change after a few steps, are a tenth as large."""
    import dataclasses

    from inr.codec.latent_fit import fit_latents
    from inr.codec.latent_model import LatentImage, Spec
    from inr.codec.latent_prior import load_prior

    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    start = LatentImage(Spec(*image.shape[:2], 3, 3, TINY.synthesis, TINY.arm))
    load_prior(start, tiny_prior)

    def change(preset):
        model = fit_latents(image, 1e-3, dataclasses.replace(preset, steps=4), 3, prior=tiny_prior)
        return max(float((a - b).abs().max()) for a, b in zip(model.synthesis.parameters(), start.synthesis.parameters()))

    assert TINY.prior_lr == 1.0
    free, held = change(TINY), change(dataclasses.replace(TINY, prior_lr=0.1))
    assert free > 5 * held > 0


def test_the_shipped_priors_match_their_digests_and_the_medium_preset():
    from inr.codec.latent_fit import PRESETS
    from inr.codec.latent_model import Spec
    from inr.codec.latent_prior import prior_for, shipped

    priors = shipped()
    assert priors, "the package ships a decoder prior"
    for name, prior in priors.items():
        assert prior.digest == name and len(name) == 8
    medium = PRESETS["medium"]
    assert prior_for(Spec(256, 256, 3, 7, medium.synthesis, medium.arm)) is not None
