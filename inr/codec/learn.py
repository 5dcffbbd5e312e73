"""Meta-learning the codec's initialisations: for each network size, θ₀ learned over crops of natural photographs by
the project's ``MetaLearning`` (Reptile), written as a file the encoder and the decoder take with ``--init``
(``inr.codec.init``).

    inr-codec learn-init PHOTOS -o inits/ --bpp 0.1,0.2,0.3,0.5,1 --resolution 192   # the sizes these rates use
    inr-codec learn-init PHOTOS -o inits/ --width 24,32

The signals are ``SignalSet(kind="natural")`` crops of the photographs in PHOTOS (a square of R to 2R pixels
resized to R, R = ``--resolution``), and held-out crops of ``--test``'s photographs (default: scikit-image's
``HELD_OUT``) scored as the outer loop runs.
The inner loop is the codec's own fit — the registry's optimiser at its learning rate (SIREN: Adam at 5e-4) — for
``inner_steps`` full-batch steps on a crop's [::2, ::2] pixels; Reptile's outer Adam (rate ``outer_lr``) moves θ₀
towards the adapted weights (``inr.tasks.meta``). Each file is ``init.file_name`` of its network in the output
directory, and records the digest of every photograph of PHOTOS (``init.TRAINED_ON_KEY``), so an image the init
was learned on is refused as a test of it. A record beside it (``<name>.json``: the settings, the seconds and the
held-out PSNR after 0 and ``inner_steps`` steps) lets the same command keep an init made with the same settings.
A file of those names that the command did not write (a user's own ``siren_4x24.ckpt``) is refused before any
training, never replaced.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import imageio.v3 as iio
import lightning as L
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
from inr.methods.training import fit_row, silence_lightning
from inr.tasks.init_from import PARTS, read_init
from inr.tasks.meta import MetaLearning

# the default held-out photographs: scikit-image's colour ones that none of the codec's sets codes
HELD_OUT = ("coffee", "rocket")
# the registry's optimisers as the inner loop names them
INNER = {torch.optim.Adam: "adam", torch.optim.SGD: "sgd"}
SETTINGS_KEY = "inr_codec_learned"  # the settings an init file was made with (plain values)


@dataclass(frozen=True)
class MetaSettings:
    """How the inits are meta-learned: ``steps`` outer steps of ``signals_per_step`` crops of ``resolution``² from
    ``train_signals`` crops of PHOTOS, each adapted by ``inner_steps`` steps of the codec's fit, the outer Adam at
    ``outer_lr``; ``test_signals`` crops of the test photographs scored."""

    resolution: int = 192
    steps: int = 200
    inner_steps: int = 10
    outer_lr: float = 1e-3
    signals_per_step: int = 4
    train_signals: int = 256
    test_signals: int = 4
    seed: int = 0

    def check(self) -> None:
        for key, least in (("resolution", 8), ("steps", 1), ("inner_steps", 1), ("signals_per_step", 1), ("test_signals", 1)):
            if getattr(self, key) < least:
                raise InputError(f"--{key.replace('_', '-')} must be ≥ {least}, got {getattr(self, key)}")
        if not self.outer_lr > 0:
            raise InputError(f"--outer-lr must be > 0, got {self.outer_lr}")


def photograph_digests(directory: str | Path) -> list[str]:
    """``signal_hash`` of every photograph in ``directory`` as RGB in [0, 1] (the codec's reading of an image)."""
    return sorted({signal_hash(read_image(path, "rgb")) for path in directory_files(directory, "natural", "train")})


def learn_init(arch: Architecture, photos: str, test: str, settings: MetaSettings, out: Path) -> Path:
    """θ₀ of ``arch`` meta-learned over crops of ``photos`` (module docstring), written to ``out``/``file_name(arch)``;
    kept when a file made with the same settings, photographs and network is there already."""
    settings.check()
    out.mkdir(parents=True, exist_ok=True)
    path, record_path = out / file_name(arch), out / file_name(arch).replace(SUFFIX, ".json")
    digests = photograph_digests(photos)
    described = {
        "network": dataclasses.asdict(arch),
        "settings": dataclasses.asdict(settings),
        "photographs": digests,
        "test": photograph_digests(test),
    }
    if path.is_file() and record_path.is_file():
        try:
            kept = json.loads(record_path.read_text()).get("described") == described
        except (OSError, ValueError):
            kept = False
        if kept:
            init_for(path, arch, settings.resolution, 3)  # still a readable init of this network
            print(f"{path}: an init made with these settings and photographs; kept", file=sys.stderr, flush=True)
            return path
    silence_lightning()
    spec = arch.resolve(settings.resolution, settings.steps)
    encoder, network, optimizer = spec.build()
    inner = INNER.get(optimizer.func)
    if inner is None:
        raise InputError(f"{arch.method}: its optimiser {optimizer.func.__name__} has no inner loop here (Adam or SGD)")
    data = SignalSet(
        kind="natural",
        train=str(photos),
        test=str(test),
        train_signals=settings.train_signals,
        test_signals=settings.test_signals,
        resolution=settings.resolution,
        signals_per_step=settings.signals_per_step,
        steps_per_epoch=max(1, settings.steps // 2),  # the held-out crops scored halfway and at the end
        seed=settings.seed,
    )
    L.seed_everything(settings.seed, verbose=False)
    model = MetaLearning(
        encoder=encoder,
        network=network,
        out_channels=3,
        optimizer=lambda params: torch.optim.Adam(params, lr=settings.outer_lr),
        task="inr.tasks.ImageFitting",
        algorithm="reptile",
        inner_loop_steps=settings.inner_steps,
        inner_loop_lr=spec.lr,
        inner_loop_optimizer=inner,
        eval_steps=[0, settings.inner_steps],
    )
    start = time.perf_counter()
    fit_row(model, data, settings.steps, label=f"{arch.label()}: meta-learning", limit_val_batches=1.0, check_val_every_n_epoch=1)
    seconds = time.perf_counter() - start
    checkpoint: dict[str, Any] = {
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items() if k.startswith(PARTS)},
        TRAINED_ON_KEY: digests,
        SETTINGS_KEY: {**dataclasses.asdict(settings), "method": arch.method, "width": arch.width, "depth": arch.depth},
    }
    model.on_save_checkpoint(checkpoint)  # the architecture its weights belong to
    with atomic_write(path, "wb") as f:
        torch.save(checkpoint, f)
    scores = model.evaluate()
    with atomic_write(record_path, "w") as f:
        f.write(json.dumps({"described": described, "seconds": seconds, "scores": scores}, indent=1))
    print(
        f"wrote {path}: {arch.label()} meta-learned in {seconds:.0f} s; held-out PSNR "
        + ", ".join(f"{v:.2f} dB after {k.rpartition('@')[2]} steps" for k, v in scores.items() if not k.endswith("/std")),
        file=sys.stderr,
        flush=True,
    )
    return path


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
