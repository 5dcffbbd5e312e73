"""Encode → decode: the decoded weights are the quantised ones bit for bit, the decoded image's PSNR is the one
the encoder printed, the file's size is the rate, and the same file gives the same pixels on every call and thread
count (checked on this machine's CPU with 1 and 2 threads)."""

import re

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec.architecture import Architecture, codec_methods, stored_tensors
from inr.codec.coding import decode, encode_network, quantised_tensors, read_network
from inr.io.threads import torch_threads
from inr.metrics import psnr

SIZES = {"hashgrid": (16, 2), "hashgrid_hashed": (16, 2), "bacon": (8, 4)}


@pytest.mark.parametrize("method", codec_methods())
@pytest.mark.parametrize("bits, per_channel", [(8, False), (5, True)])
def test_decoded_weights_are_the_quantised_weights_bit_for_bit(method, bits, per_channel):
    width, depth = SIZES.get(method, (8, 2))
    hashed = dict(hash_levels=4, hash_log2=8) if method.startswith("hashgrid") else {}
    arch = Architecture(method, width, depth, seed=7, **hashed)
    encoder, network = arch.build(12, 3)
    data = encode_network(encoder, network, arch, (12, 16, 3), bits, per_channel)
    decoded = read_network(data)
    expected = [t.dequantise() for t in quantised_tensors(encoder, network, bits, per_channel)]
    got = [t for _, t in stored_tensors(decoded.encoder, decoded.network)]
    assert len(expected) == len(got) and all(torch.equal(a, b) for a, b in zip(expected, got))
    assert decoded.header.arch == arch and (decoded.header.height, decoded.header.width) == (12, 16)


def test_the_same_file_decodes_to_the_same_pixels_on_every_call_and_thread_count():
    arch = Architecture("siren", width=64, depth=3, seed=1)
    encoder, network = arch.build(96, 3)
    last = [m for m in network.modules() if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():  # spread the output over [0, 1]: many pixels near rounding boundaries
        last.weight.mul_(20.0)
        last.bias.fill_(0.5)
    data = encode_network(encoder, network, arch, (96, 128, 3), 10, True)
    outputs = []
    for threads in (1, 2, 1, 2):
        with torch_threads(threads):
            outputs.append(decode(data))
    assert outputs[0].dtype == np.uint8 and outputs[0].shape == (96, 128, 3)
    assert all(np.array_equal(outputs[0], o) for o in outputs[1:])
    assert len(np.unique(outputs[0])) > 200  # a real image, not a constant


@pytest.mark.slow
def test_encode_then_decode_through_the_command(tmp_path, codec_cli, crop):
    image = tmp_path / "crop.png"
    iio.imwrite(image, crop)
    encoded = codec_cli(["encode", image, "-o", tmp_path / "crop.inr", "--params", "400", "--steps", "30"])
    assert encoded.code == 0, encoded.stderr
    line = encoded.stdout.strip().splitlines()[-1]
    size, bpp, printed_psnr = re.search(r": ([\d,]+) bytes = ([\d.]+) bpp, PSNR ([\d.]+) dB", line).groups()
    held = (tmp_path / "crop.inr").stat().st_size
    pixels = crop.shape[0] * crop.shape[1]
    assert int(size.replace(",", "")) == held and float(bpp) == pytest.approx(8 * held / pixels, abs=5e-5)
    decoded = codec_cli(["decode", tmp_path / "crop.inr", "-o", tmp_path / "back.png"])
    assert decoded.code == 0, decoded.stderr
    back = iio.imread(tmp_path / "back.png")
    assert back.shape == crop.shape and back.dtype == np.uint8
    score = psnr(torch.from_numpy(back / 255.0), torch.from_numpy(crop / 255.0))
    assert f"{score:.2f}" == printed_psnr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back.png", "crop.inr", "crop.png"]


def test_a_gray_image_is_one_channel_both_ways(tmp_path, crop):
    from inr.codec.encode import Target, encode_images, read_codec_image

    path = tmp_path / "gray.png"
    iio.imwrite(path, crop[:, :, 1])
    image = read_codec_image(path)
    assert image.shape == (*crop.shape[:2], 1)
    (choice,) = encode_images([image], Target("params", 200), steps=5)
    assert decode(choice.data).shape == (*crop.shape[:2], 1)
    assert np.array_equal(decode(choice.data), choice.pixels)


def test_a_fitted_network_beats_its_initialisation_and_every_choice_meets_the_rate(tiny_fit):
    from inr.codec.search import best_under, choices

    arch, image, fitted = tiny_fit
    files = choices(arch, fitted, image, bits=[4, 8, 12])
    assert [c.bits for c in files] == [4, 8, 12, 4, 8, 12]
    assert files[2].psnr > files[0].psnr  # finer steps, closer to the fitted network
    start = arch.build(min(image.shape[:2]), 3)
    initial = encode_network(*start, arch, tuple(image.shape), 12, False)
    initial_psnr = psnr(torch.from_numpy(decode(initial) / 255.0), image.double())
    assert files[2].psnr > initial_psnr + 3
    budget = sorted(c.size_bits for c in files)[2]
    best = best_under(files, budget)
    assert best.size_bits <= budget and best.psnr == max(c.psnr for c in files if c.size_bits <= budget)
