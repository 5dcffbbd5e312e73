"""Shared pieces of the codec tests: a small photograph crop, a briefly fitted tiny network's file, the
``inr-codec`` command run in this process with its exit code and stderr lines."""

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.codec.architecture import Architecture
from inr.codec.coding import encode_network
from inr.codec.fit import fit
from inr.codec.init import TRAINED_ON_KEY
from inr.commands import codec as main
from inr.resources import DATA_DIR
from inr.tasks.init_from import INIT_KEY, architecture

TINY = Architecture("siren", width=8, depth=2, seed=0)


@pytest.fixture(scope="session")
def crop() -> np.ndarray:
    """A 24×20 crop of the astronaut (uint8, H, W, 3)."""
    return iio.imread(DATA_DIR / "astronaut.png")[100:124, 200:220, :3]


@pytest.fixture(scope="session")
def tiny_fit(crop):
    """(architecture, image (H, W, 3) in [0, 1], fitted network) after 150 steps."""
    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    (fitted,) = fit(TINY, [image], steps=150)
    return TINY, image, fitted


@pytest.fixture(scope="session")
def tiny_file(tiny_fit) -> bytes:
    arch, image, fitted = tiny_fit
    return encode_network(fitted.encoder, fitted.network, arch, tuple(image.shape), bits=8, per_channel=True)


def write_init(path: Path, encoder, network, trained_on=()) -> Path:
    """An init file as ``inr-codec learn-init`` writes one: the field's tensors, its architecture, its photographs."""
    parts = (("encoder", encoder), ("network", network))
    state = {f"{prefix}.{k}": v.detach().clone() for prefix, m in parts for k, v in m.state_dict().items()}
    record = architecture(SimpleNamespace(stack=None, encoder=encoder, network=network))
    torch.save({"state_dict": state, INIT_KEY: record, TRAINED_ON_KEY: list(trained_on)}, path)
    return path


@pytest.fixture(scope="session")
def init_file():
    """``init_file(path, encoder, network, trained_on=())``: ``write_init``."""
    return write_init


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def errors(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if "error:" in line]


@pytest.fixture
def codec_cli(capsys):
    """``codec_cli(args)``: ``inr-codec`` in this process -> Outcome(exit code, stdout, stderr)."""

    def run(args) -> Outcome:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out = capsys.readouterr()
        return Outcome(code, out.out, out.err)

    return run


@pytest.fixture
def crop_png(tmp_path, crop):
    """The crop as a PNG file in a folder of its own (the tests' outputs go to tmp_path)."""
    folder = tmp_path / "in"
    folder.mkdir()
    iio.imwrite(folder / "crop.png", crop)
    return folder / "crop.png"
