"""What ``inr-codec`` writes over: never its own input (the same file by any name: the path itself, a hard link, a
symlink), never a user's file of the names ``learn-init`` writes; an ``-o`` that cannot be the output is one line.
Each refusal is one ``error:`` line, exit 2, and leaves the folder as it was."""

import os

import imageio.v3 as iio
import pytest


def folder_state(folder):
    """Every file under ``folder`` with its bytes: what a refusal must leave as it was."""
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_refused(outcome, expected: str) -> None:
    assert outcome.code == 2, outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1 and len(outcome.errors) == 1, outcome.stderr
    assert expected in outcome.errors[0], outcome.errors[0]


def test_decode_over_its_own_file_is_refused(codec_cli, tmp_path, tiny_file):
    named_png = tmp_path / "x.png"  # an .inr file named .png: decode -o x.png would replace it with its pixels
    named_png.write_bytes(tiny_file)
    before = folder_state(tmp_path)
    outcome = codec_cli(["decode", named_png, "-o", named_png])
    assert_refused(outcome, f"-o {named_png}: is the input {named_png}")
    assert folder_state(tmp_path) == before


@pytest.mark.parametrize("alias", ["hard link", "symlink", "dot path"])
def test_decode_over_another_name_of_its_file_is_refused(codec_cli, tmp_path, tiny_file, alias):
    source = tmp_path / "x.inr"
    source.write_bytes(tiny_file)
    out = tmp_path / "out.png"
    if alias == "hard link":
        os.link(source, out)
    elif alias == "symlink":
        out.symlink_to(source)
    else:
        out = tmp_path / "sub" / ".." / "x.png"
        (tmp_path / "sub").mkdir()
        source = source.rename(tmp_path / "x.png")
    before = folder_state(tmp_path)
    outcome = codec_cli(["decode", source, "-o", out])
    assert_refused(outcome, "is the input")
    assert folder_state(tmp_path) == before


def test_decode_to_another_file_still_writes(codec_cli, tmp_path, tiny_file):
    (tmp_path / "x.png").write_bytes(tiny_file)
    outcome = codec_cli(["decode", tmp_path / "x.png", "-o", tmp_path / "y.png"])
    assert outcome.code == 0 and iio.imread(tmp_path / "y.png").shape == (24, 20, 3), outcome.stderr


def test_encode_over_another_name_of_its_image_is_refused(codec_cli, tmp_path, crop):
    image = tmp_path / "photo.png"
    iio.imwrite(image, crop)
    os.link(image, tmp_path / "photo.inr")  # the photograph under the output's name
    before = folder_state(tmp_path)
    outcome = codec_cli(["encode", image, "-o", tmp_path / "photo.inr", "--params", "100", "--steps", "1"])
    assert_refused(outcome, f"-o {tmp_path / 'photo.inr'}: is the input {image}")
    assert folder_state(tmp_path) == before


LEARN = ["--width", "6", "--depth", "2", "--resolution", "16", "--steps", "3", "--inner-steps", "2"]


@pytest.fixture
def photos(tmp_path, crop):
    folder = tmp_path / "photos"
    folder.mkdir()
    iio.imwrite(folder / "a.png", crop)
    return folder


@pytest.mark.parametrize("name", ["siren_2x6.ckpt", "siren_2x6.json"])
def test_learn_init_refuses_to_replace_a_file_it_did_not_write(codec_cli, tmp_path, photos, name):
    inits = tmp_path / "inits"
    inits.mkdir()
    (inits / name).write_bytes(b"the user's own file")
    before = folder_state(tmp_path)
    outcome = codec_cli(["learn-init", photos, "-o", inits, *LEARN])
    assert_refused(outcome, f"-o {inits}: {name} there was not written by learn-init")
    assert folder_state(tmp_path) == before and sorted(p.name for p in inits.iterdir()) == [name]  # no held_out/ either


def test_learn_init_with_an_existing_file_as_its_folder_is_one_line(codec_cli, tmp_path, photos):
    target = tmp_path / "inits"
    target.write_bytes(b"a file")
    outcome = codec_cli(["learn-init", photos, "-o", target, *LEARN])
    assert_refused(outcome, f"-o {target}: is a file; learn-init writes a directory of inits")
    assert target.read_bytes() == b"a file"


@pytest.mark.slow
def test_learn_init_replaces_its_own_init_made_with_other_settings(codec_cli, tmp_path, photos):
    inits = tmp_path / "inits"
    first = codec_cli(["learn-init", photos, "-o", inits, *LEARN])
    assert first.code == 0, first.stderr
    written = (inits / "siren_2x6.ckpt").read_bytes()
    again = codec_cli(["learn-init", photos, "-o", inits, *LEARN[:-1], "3"])  # other settings: learned again
    assert again.code == 0, again.stderr
    assert (inits / "siren_2x6.ckpt").read_bytes() != written
