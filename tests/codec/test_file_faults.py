"""Bad .inr files: every one is refused with one line naming the file and the problem, exit 2, and no output
written — truncated, wrong magic, a future version, absurd shapes, huge declared sizes, a payload shorter or longer
than declared, flipped bits (with the CRC kept, and recomputed after the flip: a sweep of mutations), fixed tensors the
decoder rebuilds differently, a header declaring more decoding work than the bound."""

import random
import struct
import time
import zlib
from collections import Counter

import numpy as np
import pytest

from inr.codec import entropy
from inr.codec.architecture import Architecture, stored_tensors
from inr.codec.bitstream import MAX_FILE_BYTES, Body, Header, pack, read_header, unpack
from inr.codec.coding import decode, encode_network, layout
from inr.codec.quantise import levels
from inr.errors import InputError
from inr.io.threads import torch_threads

NAME_AT = 11  # magic 4, version 1, channels 1, height 2, width 2, name length 1


def with_crc(body: bytes) -> bytes:
    """``body`` (a file less its CRC) with a valid CRC: the faults behind the checksum, as a crafted file has them."""
    return body + struct.pack("<I", zlib.crc32(body))


def patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    body = bytearray(data[:-4])
    struct.pack_into(fmt, body, offset, value)
    return with_crc(bytes(body))


def after_name(data: bytes) -> int:
    return NAME_AT + data[NAME_AT - 1]


def payload_at(data: bytes) -> int:
    """Offset of the payload length field: the file ends with length, payload, CRC."""
    for offset in range(after_name(data) + 8, len(data) - 8):
        (length,) = struct.unpack_from("<I", data, offset)
        if offset + 4 + length + 4 == len(data):
            return offset
    raise AssertionError("no payload length field found")


def refused(codec_cli, tmp_path, data: bytes, expected: str) -> None:
    path = tmp_path / "bad.inr"
    path.write_bytes(data)
    out = tmp_path / "out.png"
    outcome = codec_cli(["decode", path, "-o", out])
    assert outcome.code == 2, outcome.stderr
    assert len(outcome.errors) == 1 and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    assert outcome.errors[0].startswith(f"error: {path}: ") and expected in outcome.errors[0], outcome.errors[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.inr"]  # nothing written, no temporary left


def test_the_good_file_decodes(codec_cli, tmp_path, tiny_file):
    (tmp_path / "good.inr").write_bytes(tiny_file)
    outcome = codec_cli(["decode", tmp_path / "good.inr", "-o", tmp_path / "out.png"])
    assert outcome.code == 0 and (tmp_path / "out.png").is_file(), outcome.stderr


@pytest.mark.parametrize("keep", [0, 3, 4, 10, 20, -40, -5, -1])
def test_truncated_files(codec_cli, tmp_path, tiny_file, keep):
    data = tiny_file[:keep]
    refused(codec_cli, tmp_path, data, "not an inr image file" if len(data) < 4 else "truncated")


def test_wrong_magic(codec_cli, tmp_path, tiny_file):
    refused(codec_cli, tmp_path, b"\x89PNG" + tiny_file[4:], "not an inr image file")


def test_a_future_version(codec_cli, tmp_path, tiny_file):
    refused(
        codec_cli,
        tmp_path,
        patched(tiny_file, 4, "<B", 3),
        "format version 3, written by a newer inr; this one reads versions 1 and 2",
    )
    refused(codec_cli, tmp_path, patched(tiny_file, 4, "<B", 0), "format version 0, written by an unknown inr")


@pytest.mark.parametrize(
    "field, offset, fmt, value, expected",
    [
        ("channels", 5, "<B", 4, "4 channels"),
        ("height", 6, "<H", 0, "image height 0 outside 2…16384"),
        ("width", 8, "<H", 65535, "image width 65535 outside 2…16384"),
        ("area", 6, "<H", 16384, None),  # with the width below: 16384 × 16384 pixels
        ("name length", 10, "<B", 0, "method name of 0 bytes"),
    ],
)
def test_absurd_image_fields(codec_cli, tmp_path, tiny_file, field, offset, fmt, value, expected):
    data = patched(tiny_file, offset, fmt, value)
    if field == "area":
        data = patched(data, 8, "<H", 16384)
        expected = "16384×16384 pixels, more than 67,108,864"
    refused(codec_cli, tmp_path, data, expected)


@pytest.mark.parametrize(
    "delta, fmt, value, expected",
    [
        (0, "<H", 60000, "network width 60000 outside 1…1024"),
        (2, "<B", 200, "network depth 200 outside 1…16"),
        (6, "<B", 31, "network hash table log2 size 31 outside 0…18"),
        (7, "<B", 0x3F, "quantiser byte 0x3f sets bits"),
        (7, "<B", 17, "17 bits per weight outside 2…16"),
    ],
)
def test_absurd_network_fields(codec_cli, tmp_path, tiny_file, delta, fmt, value, expected):
    refused(codec_cli, tmp_path, patched(tiny_file, after_name(tiny_file) + delta, fmt, value), expected)


def test_unknown_and_non_ascii_method_names(codec_cli, tmp_path, tiny_file):
    name = tiny_file[NAME_AT : after_name(tiny_file)]
    assert name == b"siren"
    body = tiny_file[:-4]
    refused(codec_cli, tmp_path, with_crc(body.replace(b"siren", b"evils", 1)), "unknown method 'evils'")
    refused(codec_cli, tmp_path, with_crc(body.replace(b"siren", b"sir\xffn", 1)), "the method name is not ASCII")


def test_huge_declared_payload(codec_cli, tmp_path, tiny_file):
    data = patched(tiny_file, payload_at(tiny_file), "<I", 2**31)
    refused(codec_cli, tmp_path, data, "the payload is shorter than declared")


def test_payload_shorter_or_longer_than_declared(codec_cli, tmp_path, tiny_file):
    body = tiny_file[:-4]
    refused(codec_cli, tmp_path, with_crc(body[:-4]), "the payload is shorter than declared")
    refused(codec_cli, tmp_path, with_crc(body + b"\x00\x00\x00\x00"), "the payload is longer than declared")
    at = payload_at(tiny_file)
    (length,) = struct.unpack_from("<I", tiny_file, at)
    longer = bytearray(body + bytes(range(1, 9)))
    struct.pack_into("<I", longer, at, length + 8)  # declared and held agree, the coder finds words to spare
    refused(codec_cli, tmp_path, with_crc(bytes(longer)), "hold more data than the network's weights need")


def test_every_single_bit_flip_is_refused(tiny_file):
    for i in range(len(tiny_file)):
        flipped = bytearray(tiny_file)
        flipped[i] ^= 1 << (i % 8)
        with pytest.raises(InputError):
            decode(bytes(flipped))


def test_fixed_tensors_rebuilt_differently(codec_cli, tmp_path):
    arch = Architecture("gaussian", width=4, depth=1)
    encoder, network = arch.build(16, 3)
    data = encode_network(encoder, network, arch, (16, 16, 3), 8, False)
    at = payload_at(data) - 4  # the buffers' CRC sits right before the payload length
    refused(codec_cli, tmp_path, patched(data, at, "<I", 12345), "rebuilds the gaussian network's fixed tensors differently")


def test_a_file_larger_than_any_codec_file_is_not_read(codec_cli, tmp_path):
    path = tmp_path / "bad.inr"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing of it is written or read
    outcome = codec_cli(["decode", path, "-o", tmp_path / "out.png"])
    assert outcome.code == 2 and len(outcome.errors) == 1 and "more than an image file may hold" in outcome.errors[0]
    assert not (tmp_path / "out.png").exists()


def test_a_missing_file(codec_cli, tmp_path):
    outcome = codec_cli(["decode", tmp_path / "none.inr", "-o", tmp_path / "out.png"])
    assert outcome.code == 2 and outcome.errors == [f"error: {tmp_path / 'none.inr'}: no such file"]


# A valid 105-byte file: SIREN 16 × 1024 (the largest network a file may name) at 16384 × 4096 (the largest image),
# per-tensor steps, every weight 0 (the range coder's one word). Decoding it would be ≈ 1e15 multiply-adds.
LARGEST = pack(
    Header(4096, 16384, 3, Architecture("siren", 1024, 16), bits=2, per_channel=False),
    Body(step_codes=bytes([100] * 34), scale_codes=bytes(34), buffers_crc=None, payload=bytes.fromhex("739a6b6c")),
)


def test_a_file_declaring_days_of_work_is_refused_from_its_header_with_the_estimate(codec_cli, tmp_path):
    assert len(LARGEST) == 105
    path = tmp_path / "bad.inr"
    path.write_bytes(LARGEST)
    start = time.perf_counter()
    outcome = codec_cli(["decode", path, "-o", tmp_path / "out.png"])
    assert time.perf_counter() - start < 30  # refused from the header; the network is not even built
    assert outcome.code == 2 and len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    (line,) = outcome.errors
    assert line.startswith(
        f"error: {path}: decoding 16384×4096 pixels through siren 16 × 1024 takes an estimated 1.1e+15 multiply-adds"
    )
    assert "more than the bound of 1e+12; give --max-work 1e16 to decode it anyway" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.inr"]


def test_the_work_bound_is_the_users_to_set(codec_cli, tmp_path, tiny_file):
    path = tmp_path / "x.inr"
    path.write_bytes(tiny_file)
    work = 24 * 20 * (2 * 8 + 8 * 8 + 8 * 3)  # pixels × the multiply-adds of SIREN 2 × 8's layers
    outcome = codec_cli(["decode", path, "-o", tmp_path / "out.png", "--max-work", "1e4"])
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr
    assert f"takes an estimated {work:.2g} multiply-adds" in outcome.errors[0] and "give --max-work 1e5" in outcome.errors[0]
    assert not (tmp_path / "out.png").exists()
    outcome = codec_cli(["decode", path, "-o", tmp_path / "out.png", "--max-work", "1e5"])
    assert outcome.code == 0 and (tmp_path / "out.png").is_file(), outcome.stderr
    outcome = codec_cli(["decode", path, "-o", tmp_path / "out.png", "--max-work", "0"])
    assert outcome.code == 2 and outcome.errors == ["error: --max-work 0: a number of multiply-adds > 0, e.g. 1e13"]


def unflipped_file(per_channel: bool) -> bytes:
    """A file of SIREN 2 × 8 as drawn from seed 0 (no fit: the same bytes on every machine), 6 bits a weight."""
    arch = Architecture("siren", width=8, depth=2, seed=0)
    return encode_network(*arch.build(20, 3), arch, (24, 20, 3), bits=6, per_channel=per_channel)


def decoded_or_refused(data: bytes) -> str:
    """'decoded' (pixels of the size its header says) or 'refused' (one ``InputError`` line naming the file); any
    other exception is the test's failure."""
    try:
        pixels = decode(data)
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("file: "), str(exc)
        return "refused"
    header, _ = read_header(data)
    assert pixels.dtype == np.uint8 and pixels.shape == (header.height, header.width, header.channels)
    return "decoded"


def mutations(data: bytes, header_end: int, seed: int = 0, random_ones: int = 40):
    """Every single-bit flip of the fixed header (through the init field), one flip per byte after it, and
    ``random_ones`` mutations of 1 to 3 bytes drawn with ``seed``: each with the CRC recomputed, as a crafted or
    carelessly repaired file has it."""
    body = data[:-4]
    for i in range(4, len(body)):
        for bit in range(8) if i < header_end else [i % 8]:
            flipped = bytearray(body)
            flipped[i] ^= 1 << bit
            yield with_crc(bytes(flipped))
    rng = random.Random(seed)
    for _ in range(random_ones):
        mutated = bytearray(body)
        for _ in range(rng.randint(1, 3)):
            mutated[rng.randrange(4, len(body))] = rng.randrange(256)
        yield with_crc(bytes(mutated))


@pytest.mark.parametrize("per_channel", [False, True])
def test_a_mutation_sweep_behind_a_recomputed_checksum_is_decoded_or_refused(per_channel):
    data = unflipped_file(per_channel)
    header_end = after_name(data) + 9  # network 7, quantiser 1, init field 1
    with torch_threads(1):
        outcomes = Counter(decoded_or_refused(m) for m in mutations(data, header_end))
    assert set(outcomes) == {"decoded", "refused"}, outcomes


def test_every_flipped_bit_of_the_coded_weights_is_decoded_or_refused():
    """The range decoder alone, on every flipped bit of the payload: constriction's AssertionError for a stream no
    encoder writes is a refusal like the others."""
    data = unflipped_file(per_channel=True)
    header, body = unpack(data, lambda h: layout(*h.arch.build(h.side, h.channels), h.per_channel))
    encoder, network = header.arch.build(header.side, header.channels)
    sizes = [t.numel() for _, t in stored_tensors(encoder, network)]
    damaged = 0
    for i in range(len(body.payload) * 8):
        payload = bytearray(body.payload)
        payload[i // 8] ^= 1 << (i % 8)
        try:
            symbols = entropy.decode(bytes(payload), sizes, levels(header.bits), list(body.scale_codes))
        except InputError as exc:
            damaged += "are damaged" in str(exc)
            continue
        assert [len(s) for s in symbols] == sizes
    assert damaged > 0  # the sweep reaches the decoder's own check, not only the word count's


def test_a_width_that_no_longer_fits_the_payload_is_one_line(codec_cli, tmp_path):
    data = unflipped_file(per_channel=False)  # one step per tensor: another width keeps the layout, not the payload
    for bit in range(16):
        flipped = patched(data, after_name(data), "<H", 8 ^ (1 << bit))
        try:
            decode(flipped)
        except InputError as exc:
            if "are damaged" in str(exc):
                break
    else:
        raise AssertionError("no width flip reached the range decoder")
    refused(codec_cli, tmp_path, flipped, "the coded weights are damaged: the range decoder found words no encoder writes")
