"""Golden files: a small file of every network the codec's table holds, and one coded against a learned init, each
decodes to the pixels it decoded to when it was written, bit for bit (``np.array_equal``); one of them again in a
fresh process with another thread count, through ``inr-codec decode``, which imports no Lightning, no tasks, no
methods and no comparisons (nor does ``--help``, nor a decode against a learned init).

The files are ``tests/codec/data/<network>_v<version>.inr`` with the PNG their decode gave beside them
(``siren_init_v2.inr`` with its init ``siren_init.ckpt``), 20 × 16 crops of the astronaut (one gray) through tiny
networks fitted for a few steps. They were written by

    .venv/bin/python tests/codec/test_golden.py --write

which writes only the files missing (a new network, or a new format version: ``inr.codec.networks``). An existing
golden file is history — the bytes an encoder of its version wrote — so ``--write`` never replaces one: a file that
decodes to other pixels is the failure this test is here to catch, not a file to write again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

from inr.codec.architecture import Architecture
from inr.codec.bitstream import VERSION, read_header
from inr.codec.coding import decode
from inr.codec.networks import table

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
CROP = (slice(100, 120), slice(200, 216))  # a 20 × 16 crop of the astronaut (H ≠ W: the grid's axes are told apart)
STEPS = 40
SINE_STEPS = 300  # SIREN and FINER train at 5e-4: 40 steps leave their output near 0, most pixels clamped
INIT_NAME = "siren_init"


@dataclass(frozen=True)
class Golden:
    """One golden file: its network, the image's channels, the quantiser."""

    arch: Architecture
    gray: bool = False
    bits: int = 8
    per_channel: bool = True
    steps: int = STEPS

    @property
    def name(self) -> str:
        return self.arch.method


# every network of the newest table, with the seed, sizes and quantisers varied across them
GOLDEN = [
    Golden(Architecture("none", 8, 2, seed=1)),
    Golden(Architecture("basic", 8, 2, seed=2), gray=True, bits=10, per_channel=False),
    Golden(Architecture("positional", 8, 2, seed=3)),
    Golden(Architecture("gaussian", 8, 2, seed=4), bits=9, per_channel=False),
    Golden(Architecture("siren", 8, 2, seed=5), steps=SINE_STEPS),
    Golden(Architecture("hashgrid", 8, 2, seed=6, hash_levels=4)),  # T = the table's 2^19: every level dense
    Golden(Architecture("hashgrid_hashed", 8, 2, seed=7, hash_levels=4, hash_log2=6)),  # finer levels hashed
    Golden(Architecture("wire", 8, 2, seed=8), bits=7),
    Golden(Architecture("gauss", 8, 2, seed=9), per_channel=False),
    Golden(Architecture("finer", 8, 2, seed=10), steps=SINE_STEPS),
    Golden(Architecture("bacon", 8, 4, seed=11), bits=10),
    Golden(Architecture("mfn", 8, 2, seed=12)),
]
INIT_ARCH = Architecture("siren", 8, 2, seed=13)


def paths(name: str, version: int = VERSION) -> tuple[Path, Path]:
    return DATA / f"{name}_v{version}.inr", DATA / f"{name}_v{version}.png"


def expected_pixels(png: Path) -> np.ndarray:
    pixels = iio.imread(png)
    return pixels[:, :, None] if pixels.ndim == 2 else pixels  # a gray PNG as the decoder's (H, W, 1)


def test_every_network_of_the_newest_table_has_a_golden_file():
    assert [g.name for g in GOLDEN] == list(table(VERSION)), "a network without a golden file: run --write (docstring)"
    missing = [str(p) for g in GOLDEN for p in paths(g.name) if not p.is_file()]
    assert not missing, f"missing golden files {missing}: write them with .venv/bin/python tests/codec/test_golden.py --write"


@pytest.mark.parametrize("name", [g.name for g in GOLDEN] + [INIT_NAME])
def test_a_golden_file_decodes_to_its_pixels_bit_for_bit(name):
    inr, png = paths(name)
    data = inr.read_bytes()
    header, _ = read_header(data)
    assert header.version == VERSION and header.arch.method == name.removesuffix("_init")
    init = DATA / f"{INIT_NAME}.ckpt" if name == INIT_NAME else None
    assert (header.init is not None) == (init is not None)
    assert np.array_equal(decode(data, init=init), expected_pixels(png))


PROBE = """
import atexit, json, sys
def report():
    print("@@" + json.dumps(sorted(sys.modules)), file=sys.__stderr__)
atexit.register(report)
from inr.commands import codec
codec(sys.argv[1:])
"""
TRAINING = ("lightning", "pytorch_lightning", "inr.tasks", "inr.methods", "inr.experiments", "inr.data")


def run_codec(args: list, cwd: Path) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``inr-codec args`` in a fresh interpreter: its outcome and the modules it had imported when it ended."""
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)
    reports = [line for line in done.stderr.splitlines() if line.startswith("@@")]
    assert reports, done.stderr[-2000:]
    return done, json.loads(reports[-1][2:])


def loaded(modules: list[str], prefixes=TRAINING) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


@pytest.mark.slow
@pytest.mark.parametrize("name, threads", [("siren", 1), (INIT_NAME, 2)])
def test_the_command_decodes_a_golden_file_in_a_fresh_process_without_the_training(tmp_path, name, threads):
    inr, png = paths(name)
    init = ["--init", DATA / f"{INIT_NAME}.ckpt"] if name == INIT_NAME else []
    done, modules = run_codec(["decode", inr, "-o", tmp_path / "out.png", "--threads", threads, *init], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert np.array_equal(expected_pixels(tmp_path / "out.png"), expected_pixels(png))
    # no data floor either: inr/data/__init__.py imports every DataModule, and with them Lightning
    assert loaded(modules) == [], f"decoding imported {loaded(modules)[:8]}"


@pytest.mark.slow
@pytest.mark.parametrize("command", [[], ["encode"], ["decode"], ["learn-init"]], ids=["top", "encode", "decode", "learn-init"])
def test_help_imports_no_training_and_no_torch(tmp_path, command):
    done, modules = run_codec([*command, "--help"], tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("usage: "), done.stderr[-2000:]
    # learn-init's settings are the meta-training's (inr.methods.meta, a module of plain settings): nothing else
    allowed = {"inr.methods", "inr.methods.meta"} if command == ["learn-init"] else set()
    assert [m for m in loaded(modules) if m not in allowed] == []
    assert loaded(modules, ("torch", "numpy")) == [], "--help loads torch or numpy"


# --- writing them (not a test: ``python tests/codec/test_golden.py --write``) -----------------------------------
def crop(gray: bool):
    import torch

    from inr.resources import DATA_DIR

    pixels = iio.imread(DATA_DIR / "astronaut.png")[CROP[0], CROP[1], :3].astype(np.float32) / 255.0
    if gray:
        pixels = pixels @ np.array([0.299, 0.587, 0.114], dtype=np.float32)[:, None]  # (H, W, 1)
    return torch.from_numpy(np.ascontiguousarray(pixels))


def write(name: str, data: bytes, init=None) -> None:
    inr, png = paths(name)
    pixels = decode(data, init=init)
    inr.write_bytes(data)
    iio.imwrite(png, pixels[:, :, 0] if pixels.shape[2] == 1 else pixels)
    print(f"wrote {inr.name} ({len(data)} bytes) and {png.name}")


def write_golden() -> None:
    """Fit and write every golden file that is missing (an existing one is never replaced)."""
    from types import SimpleNamespace

    import torch

    from inr.codec.coding import encode_network
    from inr.codec.fit import fit
    from inr.codec.init import TRAINED_ON_KEY, init_for
    from inr.tasks.init_from import INIT_KEY, architecture

    for g in GOLDEN:
        if paths(g.name)[0].exists():
            continue
        image = crop(g.gray)
        (fitted,) = fit(g.arch, [image], g.steps)
        write(g.name, encode_network(fitted.encoder, fitted.network, g.arch, tuple(image.shape), g.bits, g.per_channel))
    if not paths(INIT_NAME)[0].exists():
        # the init: the network fitted to another crop, standing in for a meta-learned one
        image, other = crop(False), torch.from_numpy(np.ascontiguousarray(crop(False).numpy()[::-1, ::-1]))
        (start,) = fit(INIT_ARCH, [other], SINE_STEPS)
        parts = (("encoder", start.encoder), ("network", start.network))
        state = {f"{prefix}.{k}": v.detach().clone() for prefix, m in parts for k, v in m.state_dict().items()}
        record = architecture(SimpleNamespace(stack=None, encoder=start.encoder, network=start.network))
        path = DATA / f"{INIT_NAME}.ckpt"
        torch.save({"state_dict": state, INIT_KEY: record, TRAINED_ON_KEY: []}, path)
        init = init_for(path, INIT_ARCH, min(image.shape[:2]), 3)
        (fitted,) = fit(INIT_ARCH, [image], STEPS, init=init)
        write(INIT_NAME, encode_network(fitted.encoder, fitted.network, INIT_ARCH, tuple(image.shape), 8, True, init), path)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(f"usage: python {os.path.relpath(__file__, ROOT)} --write")
    write_golden()
