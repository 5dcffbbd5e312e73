"""Bad .inr files: every one is refused with one line naming the file and the problem, exit 2, and no output
written — truncated, wrong magic, a future version, absurd shapes, huge declared sizes, a payload shorter or longer
than declared, flipped bits, fixed tensors the decoder rebuilds differently."""

import struct
import zlib

import pytest

from inr.codec.architecture import Architecture
from inr.codec.bitstream import MAX_FILE_BYTES
from inr.codec.coding import decode, encode_network
from inr.errors import InputError

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
