"""The two slow anchors of ``inr.codec.classical``: AVIF at libaom's speed 0 and HEVC in HEIF write files their
decoders read back to the pixels ``code`` returns, at 4:2:0 chroma; the codec study's codecs are the same three."""

import io
import sys

import imageio.v3 as iio
import numpy as np
import pytest
from PIL import Image

from inr.codec.classical import ANCHORS, CODECS, OPTIONS, at_rate, code
from inr.errors import InputError
from inr.resources import DATA_DIR

pillow_heif = pytest.importorskip("pillow_heif")


@pytest.fixture(scope="module")
def crop() -> np.ndarray:
    """A 48×40 crop of the astronaut (uint8, H, W, 3): odd chroma blocks are padded, not refused."""
    return iio.imread(DATA_DIR / "astronaut.png")[100:148, 200:240, :3]


def test_the_codec_study_keeps_its_three_codecs_and_the_anchors_are_five():
    assert CODECS == ("jpeg", "webp", "avif")
    assert ANCHORS == ("jpeg", "webp", "avif", "avif-slow", "heif")


def test_avif_slow_is_an_avif_file_pillow_decodes_to_the_returned_pixels(crop):
    coded = code(crop, "avif-slow", 40)
    with Image.open(io.BytesIO(coded.data)) as img:
        assert img.format == "AVIF"
        np.testing.assert_array_equal(np.asarray(img.convert("RGB")), coded.pixels)
    assert coded.pixels.shape == crop.shape


def test_avif_slow_differs_from_avif_at_the_same_quality(crop):
    """Speed 0 searches more than speed 6: a different file (the option reaches libaom)."""
    assert code(crop, "avif-slow", 40).data != code(crop, "avif", 40).data


def test_heif_is_an_hevc_file_pillow_heif_decodes_to_the_returned_pixels(crop):
    coded = code(crop, "heif", 40)
    assert pillow_heif.is_supported(io.BytesIO(coded.data))
    heif = pillow_heif.open_heif(io.BytesIO(coded.data))
    np.testing.assert_array_equal(np.asarray(heif.to_pillow().convert("RGB")), coded.pixels)
    assert coded.pixels.shape == crop.shape
    error = np.abs(coded.pixels.astype(int) - crop.astype(int)).mean()
    assert error < 12  # a lossy copy of the crop, not noise


def test_heif_encoding_leaves_its_options_unchanged(crop):
    """pillow-heif writes the chroma into the ``enc_params`` it is given; the stated settings must not drift."""
    code(crop, "heif", 30)
    assert OPTIONS["heif"] == {"chroma": 420, "enc_params": {"preset": "slow"}}


def test_heif_file_grows_with_quality_and_at_rate_fits_it(crop):
    sizes = [len(code(crop, "heif", q).data) for q in (0, 30, 60, 90)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    coded = at_rate(crop, "heif", 4.0)
    assert coded is not None and coded.size_bits <= 4.0 * crop.shape[0] * crop.shape[1]


def test_a_gray_image_comes_back_gray_from_both_anchors(crop):
    gray = crop[:, :, :1]
    for codec in ("avif-slow", "heif"):
        assert code(gray, codec, 50).pixels.shape == gray.shape


def test_a_missing_pillow_heif_is_one_line_naming_the_extra(monkeypatch, crop):
    monkeypatch.setitem(sys.modules, "pillow_heif", None)  # as if it were not installed
    with pytest.raises(InputError, match=r"^the heif anchor .* needs pillow-heif: pip install 'inr\[rd\]'$"):
        code(crop, "heif", 50)


def test_an_unknown_codec_names_the_anchors(crop):
    with pytest.raises(InputError, match="avif-slow, heif$"):
        code(crop, "bpg", 50)
