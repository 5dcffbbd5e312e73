"""Files coded against a learned init (format version 2): the decoded weights are θ₀ + q·Δ bit for bit, the init is
named by a digest of its tensors (checked against an independent hashlib reference), coding the change from a
nearby init takes fewer bytes, and every problem with the init is one line, exit 2, nothing written — a missing
init, an init of another network, an init whose digest differs, a damaged init file, an undefined init field.
Version-1 files written before the init existed still decode to the same pixels."""

import hashlib
import struct
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec.architecture import Architecture, stored_tensors
from inr.codec.bitstream import read_header
from inr.codec.coding import decode, encode_network, quantised_tensors, read_network
from inr.codec.init import digest, file_name, init_for, init_in
from inr.data.signal_classes import signal_hash
from inr.errors import InputError

DATA = Path(__file__).parent / "data"
ARCH = Architecture("siren", width=8, depth=2, seed=3)
SHAPE = (12, 16, 3)


@pytest.fixture
def coded(tmp_path, init_file):
    """(init path, its θ₀ network, the 'fitted' network θ₀ + a small change, the file coded against the init)."""
    encoder, start = ARCH.build(min(SHAPE[:2]), 3)
    path = init_file(tmp_path / file_name(ARCH), encoder, start)
    _, fitted = ARCH.build(min(SHAPE[:2]), 3)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p, q in zip(fitted.parameters(), start.parameters()):
            p.copy_(q + 0.01 * torch.randn(q.shape, generator=generator))
    init = init_for(path, ARCH, min(SHAPE[:2]), 3)
    data = encode_network(encoder, fitted, ARCH, SHAPE, 8, True, init)
    return path, start, fitted, data


def refused(codec_cli, tmp_path, data: bytes, extra, expected: str) -> None:
    (tmp_path / "f.inr").write_bytes(data)
    before = sorted(p.name for p in tmp_path.iterdir())
    outcome = codec_cli(["decode", tmp_path / "f.inr", "-o", tmp_path / "out.png", *extra])
    assert outcome.code == 2, outcome.stderr
    assert len(outcome.errors) == 1 and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    assert expected in outcome.errors[0], outcome.errors[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_a_version_1_file_decodes_to_the_pixels_it_decoded_to_before_the_init_existed():
    data = (DATA / "siren_v1.inr").read_bytes()  # written by format version 1's encoder
    header, _ = read_header(data)
    assert header.version == 1 and header.init is None
    assert np.array_equal(decode(data), iio.imread(DATA / "siren_v1.png"))


def test_the_digest_is_sha256_of_names_shapes_and_float32_bytes():
    a, b = torch.randn(3, 4), torch.randn(5)
    expected = hashlib.sha256()
    for name, t in (("network.1.weight", a), ("network.1.bias", b)):
        expected.update(name.encode() + b"\0" + struct.pack(f"<{t.ndim}I", *t.shape) + t.numpy().astype("<f4").tobytes())
    assert digest([("network.1.weight", a), ("network.1.bias", b)]) == expected.digest()[:8]
    nudged = b.clone()
    nudged[2] = torch.nextafter(nudged[2], torch.tensor(np.inf))  # one weight one ulp away
    assert digest([("network.1.weight", a), ("network.1.bias", nudged)]) != digest(
        [("network.1.weight", a), ("network.1.bias", b)]
    )


def test_decoded_weights_are_the_init_plus_the_quantised_change_bit_for_bit(coded):
    path, start, fitted, data = coded
    header, _ = read_header(data)
    init = init_for(path, ARCH, min(SHAPE[:2]), 3)
    assert header.version == 2 and header.init == init.digest
    decoded = read_network(data, init=path)
    encoder, _ = ARCH.build(min(SHAPE[:2]), 3)
    changes = quantised_tensors(encoder, fitted, 8, True, init)
    expected = [s.detach() + q.dequantise() for s, q in zip(start.parameters(), changes)]
    got = [t for _, t in stored_tensors(decoded.encoder, decoded.network)]
    assert all(torch.equal(a, b) for a, b in zip(expected, got))
    # the change is what was quantised: within half a step of the fitted weights
    for (_, w), t, q in zip(stored_tensors(encoder, fitted), got, changes):
        steps = q.dequantise().new_tensor(2.0) ** ((q.codes.double() - 192) / 8)
        assert torch.all((w - t).abs().reshape(len(steps), -1) <= steps[:, None].float() / 2 * (1 + 1e-5) + 1e-7)


def test_coding_the_change_from_a_nearby_init_is_as_close_in_fewer_bytes(coded):
    path, start, fitted, _ = coded
    encoder, _ = ARCH.build(min(SHAPE[:2]), 3)
    init = init_for(path, ARCH, min(SHAPE[:2]), 3)

    def error(data: bytes) -> float:
        decoded = read_network(data, init=path)
        return max(
            float((a - b).abs().max()) for a, b in zip(fitted.state_dict().values(), decoded.network.state_dict().values())
        )

    plain = encode_network(encoder, fitted, ARCH, SHAPE, 8, True)
    change = encode_network(encoder, fitted, ARCH, SHAPE, 5, True, init)  # the change spans ~1/16 of the weights' range
    # 123 weights at about 3 bits fewer each (46 bytes), less the init field's 9 bytes
    assert error(change) <= error(plain) and len(change) <= len(plain) - 30, (
        error(change),
        error(plain),
        len(change),
        len(plain),
    )


def test_a_file_without_an_init_decodes_the_same_with_one_given(tiny_file, tmp_path, coded):
    path = coded[0]
    assert np.array_equal(decode(tiny_file), decode(tiny_file, init=path))  # as a compressor's frame naming no dictionary


def test_init_directories_name_each_network_and_refuse_a_missing_one(coded, tmp_path):
    path = coded[0]
    assert init_in(tmp_path, ARCH, 12, 3).digest == init_for(path, ARCH, 12, 3).digest
    other = Architecture("siren", width=16, depth=2)
    with pytest.raises(InputError, match=r"no init for siren 2 × 16 in it \(siren_2x16.ckpt\)"):
        init_in(tmp_path, other, 12, 3)


def test_decoding_without_the_init_is_refused(codec_cli, tmp_path, coded):
    refused(codec_cli, tmp_path, coded[3], [], "coded against a learned init (")


def test_an_init_of_another_network_is_refused(codec_cli, tmp_path, coded, init_file):
    other = Architecture("siren", width=12, depth=2)
    encoder, network = other.build(12, 3)
    wrong = init_file(tmp_path / "wrong.ckpt", encoder, network)
    refused(codec_cli, tmp_path, coded[3], ["--init", wrong], "an init of another network than siren 2 × 8")


def test_an_init_whose_digest_differs_is_refused(codec_cli, tmp_path, coded, init_file):
    path, start, _, data = coded
    encoder, _ = ARCH.build(12, 3)
    with torch.no_grad():
        next(start.parameters()).view(-1)[0] += 1e-3  # the same network, one weight changed
    changed = init_file(tmp_path / "changed.ckpt", encoder, start)
    refused(codec_cli, tmp_path, data, ["--init", changed], "coded against the learned init ")
    assert "and --init" in codec_cli(["decode", tmp_path / "f.inr", "-o", tmp_path / "o.png", "--init", changed]).errors[0]


def test_a_damaged_or_missing_init_file_is_refused(codec_cli, tmp_path, coded):
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(coded[0].read_bytes()[:300])
    refused(codec_cli, tmp_path, coded[3], ["--init", bad], f"--init {bad}: not a readable checkpoint")
    refused(codec_cli, tmp_path, coded[3], ["--init", tmp_path / "none.ckpt"], "file not found")


def test_an_undefined_init_field_and_every_flipped_bit_of_the_digest_are_refused(codec_cli, tmp_path, coded):
    import zlib

    data = coded[3]
    at = 11 + data[10] + 8  # name, network (7 bytes), quantiser (1): the init field
    assert data[at] == 1
    body = bytearray(data[:-4])
    body[at] = 2
    refused(codec_cli, tmp_path, bytes(body) + struct.pack("<I", zlib.crc32(bytes(body))), [], "init field 0x02")
    for i in range(at, at + 9):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            with pytest.raises(InputError):
                decode(bytes(flipped), init=coded[0])


def test_an_image_the_init_was_learned_on_is_refused(tmp_path, crop, init_file):
    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    encoder, network = ARCH.build(12, 3)
    path = init_file(tmp_path / "seen.ckpt", encoder, network, trained_on=[signal_hash(image)])
    init = init_for(path, ARCH, 12, 3)
    with pytest.raises(InputError, match="was meta-learned on this image"):
        init.check_unseen(image, "crop.png")
    init.check_unseen(image.flip(0), "flipped.png")  # another image passes
