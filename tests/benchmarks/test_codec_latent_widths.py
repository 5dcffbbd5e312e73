"""benchmarks/codec_latent_widths.py at a toy size: a row per image and width with one point per λ, each point the
file the codec wrote (its bytes, the decoder's PSNR); bad widths or λ's are one line and exit 2."""

import importlib.util
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec.latent_encode import encode_latent_image
from inr.codec.latent_fit import Preset

ROOT = Path(__file__).resolve().parents[2]


def bench():
    spec = importlib.util.spec_from_file_location("codec_latent_widths", ROOT / "benchmarks" / "codec_latent_widths.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_point_is_the_file_the_codec_writes():
    rng = np.random.default_rng(0)
    pixels = (rng.random((24, 24, 3)) * 255).astype(np.uint8)
    points = bench().width_curve(pixels, 4, 6, 3, [0.02, 0.002])
    for i, lam in enumerate([0.02, 0.002]):
        coded = encode_latent_image(torch.from_numpy(pixels.astype(np.float32) / 255.0), lam, Preset("4x6", 3, 4, 6))
        assert points["bpp"][i] == coded.bpp and points["psnr"][i] == coded.psnr
        assert 0 < points["weights share"][i] < 1


def test_a_row_per_image_and_width(tmp_path, capsys):
    rng = np.random.default_rng(1)
    for name in ("a.png", "b.png"):
        iio.imwrite(tmp_path / name, (rng.random((20, 20, 3)) * 255).astype(np.uint8))
    bench().main(
        [
            str(tmp_path / "a.png"),
            str(tmp_path / "b.png"),
            "--crop",
            "16",
            "--steps",
            "2",
            "--widths",
            "4x4,6x4",
            "--lambdas",
            "0.01,0.001",
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if " BD-rate vs avif " in line and not line.startswith("mean")]
    assert [r.split(":")[0] for r in rows] == ["a.png 4x4", "a.png 6x4", "b.png 4x4", "b.png 6x4"]
    assert all(len(r.split(": ")[1].split(";")[0].split()) == 2 for r in rows)  # one bpp/PSNR point per λ
    assert [line.split(",")[1].split(":")[0].strip() for line in lines if line.startswith("mean")] == ["4x4", "6x4"]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--widths", "4by4"], "--widths '4by4'"),
        (["--lambdas", "0,1"], "--lambdas '0,1'"),
        (["--widths", "0x4"], "each width 1 … 64"),
    ],
)
def test_bad_settings_are_one_line(tmp_path, capsys, args, expected):
    iio.imwrite(tmp_path / "a.png", np.zeros((20, 20, 3), np.uint8))
    with pytest.raises(SystemExit) as exit_:
        bench().main([str(tmp_path / "a.png"), "--crop", "16", *args])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2 and len(err.splitlines()) == 1 and expected in err
