"""Meta-learning the codec's initialisations: for each network size, θ₀ learned over crops of natural photographs by
the project's ``MetaLearning`` (Reptile), written as a file the encoder and the decoder take with ``--init``
(``inr.codec.init``).

    inr-codec learn-init PHOTOS -o inits/ --bpp 0.1,0.2,0.3,0.5,1 --resolution 192   # the sizes these rates use
    inr-codec learn-init PHOTOS -o inits/ --width 24,32

The signals are ``SignalSet(kind="natural")`` crops of the photographs in PHOTOS (a square of R to 2R pixels
resized to R, R = ``--resolution``), and held-out crops of ``--test``'s photographs (default: scikit-image's
``HELD_OUT``) scored as the outer loop runs.
The meta-training is the project's one driver (``inr.methods.meta.meta_train``) with the codec's settings
(``MetaSettings``' defaults, which the command's flags take): Reptile whose inner loop is the codec's own fit — the
registry's optimiser at its learning rate (SIREN: Adam at 5e-4) — for ``inner_steps`` full-batch steps on a crop's
[::2, ::2] pixels; the outer Adam (rate ``outer_lr``) moves θ₀ towards the adapted weights (``inr.tasks.meta``).
Each file is ``init.file_name`` of its network in the output directory, holds the field's tensors only, and records
the digest of every photograph of PHOTOS (``init.TRAINED_ON_KEY``), so an image the init was learned on is refused
as a test of it. A record beside it (``<name>.json``: the settings, the seconds and the held-out PSNR after 0 and
``inner_steps`` steps) lets the same command keep an init made with the same settings.
A file of those names that the command did not write (a user's own ``siren_4x24.ckpt``) is refused before any
training, never replaced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import imageio.v3 as iio
import numpy as np
import torch

from inr.codec.architecture import Architecture
from inr.codec.init import SUFFIX, TRAINED_ON_KEY, file_name, init_for
from inr.data.image import read_image
from inr.data.signal_classes import directory_files, photograph, signal_hash
from inr.data.signal_sets import SignalSet
from inr.errors import InputError
from inr.io.bounded import read_json
from inr.io.files import atomic_write
from inr.methods.meta import MetaSettings, meta_train
from inr.tasks.init_from import read_init

# the default held-out photographs: scikit-image's colour ones that none of the codec's sets codes
HELD_OUT = ("coffee", "rocket")
SETTINGS_KEY = "inr_codec_learned"  # the settings an init file was made with (plain values)


def photograph_digests(directory: str | Path) -> list[str]:
    """``signal_hash`` of every photograph in ``directory`` as RGB in [0, 1] (the codec's reading of an image)."""
    return sorted({signal_hash(read_image(path, "rgb")) for path in directory_files(directory, "natural", "train")})


def learn_init(arch: Architecture, photos: str, test: str, settings: MetaSettings, out: Path) -> Path:
    """θ₀ of ``arch`` meta-learned over crops of ``photos`` (module docstring), written to ``out``/``file_name(arch)``;
    kept when a file made with the same settings, photographs and network is there already."""
    settings.check()
    digests = photograph_digests(photos)
    described = {
        "network": dataclasses.asdict(arch),
        "settings": dataclasses.asdict(settings),
        "photographs": digests,
        "test": photograph_digests(test),
    }
    data = SignalSet(
        kind="natural",
        train=str(photos),
        test=str(test),
        train_signals=settings.train_signals,
        test_signals=settings.test_signals,
        resolution=settings.resolution,
        signals_per_step=settings.signals_per_step,
        seed=settings.seed,
    )
    made = {**dataclasses.asdict(settings), "method": arch.method, "width": arch.width, "depth": arch.depth}
    return meta_train(
        arch.resolve(settings.resolution, settings.steps),
        data,
        settings,
        out / file_name(arch),
        {"described": described},
        label=arch.label(),
        eval_steps=[0, settings.inner_steps],
        parts_only=True,
        extra={TRAINED_ON_KEY: digests, SETTINGS_KEY: made},
        check_kept=lambda path: init_for(path, arch, settings.resolution, 3),  # still a readable init of this network
    )


def held_out_photographs(directory: Path) -> Path:
    """scikit-image's colour photographs ``HELD_OUT`` as PNGs under ``directory`` (the default test side)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in HELD_OUT:
        path = directory / f"{name}.png"
        if not path.is_file():
            pixels = (photograph(name).numpy() * 255.0).round().astype(np.uint8)
            with atomic_write(path, "wb") as f:
                f.write(iio.imwrite("<bytes>", pixels, extension=".png"))
    return directory


def written_here(path: Path) -> bool:
    """Whether ``path`` is a file this command wrote: an init whose checkpoint records ``SETTINGS_KEY`` (read as
    data, its archive sized first), or a record whose JSON has the ``described`` entry."""
    try:
        if path.suffix == SUFFIX:
            read_init(path)
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
            return isinstance(checkpoint, dict) and SETTINGS_KEY in checkpoint
        record = read_json(path, "an init's record")
    except InputError:
        return False
    return isinstance(record, dict) and "described" in record


def check_output_directory(out: Path, archs: Sequence[Architecture], test: Optional[str]) -> None:
    """Refuse, before any training, an ``-o`` that is a file, and one holding a file of the names this command writes
    that it did not write (a user's own ``siren_4x24.ckpt``): it replaces only its own inits and records."""
    if out.exists() and not out.is_dir():
        raise InputError(f"-o {out}: is a file; learn-init writes a directory of inits (one file per network size)")
    for arch in archs:
        for name in (file_name(arch), file_name(arch).replace(SUFFIX, ".json")):
            if (out / name).exists() and not written_here(out / name):
                raise InputError(
                    f"-o {out}: {name} there was not written by learn-init, which would replace it; move it or choose another -o"
                )
    if test is None and (out / "held_out").exists() and not (out / "held_out").is_dir():
        raise InputError(f"-o {out}: held_out there is a file; learn-init keeps its default test photographs in that folder")


def learn_inits(archs: Sequence[Architecture], photos: str, test: Optional[str], settings: MetaSettings, out: Path) -> list[Path]:
    """``learn_init`` of each network, in order; the test photographs default to ``HELD_OUT`` (under ``out``)."""
    settings.check()
    for directory, flag in ((photos, "PHOTOS"), (test, "--test")):
        if directory is not None and not Path(directory).is_dir():
            raise InputError(f"{flag} {directory}: not a directory")
    check_output_directory(out, archs, test)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"-o {out}: cannot be made ({exc.strerror or exc})") from None
    test = str(held_out_photographs(out / "held_out")) if test is None else test
    return [learn_init(arch, photos, test, settings, out) for arch in dict.fromkeys(archs)]
