"""The codecs a rate–distortion curve measures, by name: ``run(pixels, point) -> (file bytes, decoded pixels)``, one
file per setting, with the settings measured by default and what the codec was run with.

The classical anchors (``inr.codec.classical.ANCHORS``) are registered here, a point being their quality; another
codec joins with ``register``, a point being whatever setting it has (a learned codec's λ)::

    register("latent", lambda pixels, lam: (file_bytes, decoded), points=(0.001, 0.01, 0.1), point="lambda")

``pixels`` and the decoded pixels are 8-bit (H, W, C ∈ {1, 3}). A ``run`` may return the encode and decode seconds
as a third and fourth item; without them the call's whole wall time is its encoding time and its decoding time is
not reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from inr.codec.classical import ANCHORS, OPTIONS, code
from inr.errors import InputError
from inr.extras import require

Run = Callable[[np.ndarray, float], tuple]  # (pixels (H, W, C) uint8, point) -> (bytes, decoded (H, W, C) uint8[, s, s])

# quality ladders spanning about 0.05–2 bpp on a 256² Kodak crop (and up to 3–4 bpp on a detailed one): 8 points
# each, where the settings still change the file (AVIF qualities 0–5 give one file, libaom's coarsest quantiser)
LADDERS: dict[str, tuple[int, ...]] = {
    "jpeg": (2, 5, 10, 20, 35, 50, 70, 85),
    "webp": (0, 5, 15, 30, 50, 70, 80, 90),
    "avif": (10, 20, 30, 40, 50, 60, 70, 80),
    "avif-slow": (10, 20, 30, 40, 50, 60, 70, 80),  # avif's ladder: the two differ in speed only
    "heif": (0, 5, 10, 20, 30, 40, 50, 60),
}
DESCRIPTIONS = {
    "jpeg": "JPEG (libjpeg-turbo, optimised Huffman tables, 4:2:0) through Pillow",
    "webp": "WebP (libwebp, method 6, 4:2:0) through Pillow",
    "avif": "AVIF (libavif with libaom, speed 6, 4:2:0) through Pillow",
    "avif-slow": "AVIF (libavif with libaom, speed 0, 4:2:0) through Pillow",
    "heif": "HEVC intra in HEIF (libheif with x265, preset slow, 4:2:0) through pillow-heif",
}


# the files the anchors write, as their own tools name them
SUFFIXES = {"jpeg": ".jpg", "webp": ".webp", "avif": ".avif", "avif-slow": ".avif", "heif": ".heic"}


@dataclass(frozen=True)
class RDCodec:
    """A codec by name: its ``run``, the settings measured by default (``points``, a ``point`` each: "quality",
    "lambda"), a one-line ``description`` and ``settings()``, what it was run with (library versions, options)."""

    name: str
    run: Run
    points: tuple[float, ...]
    point: str = "quality"
    description: str = ""
    settings: Callable[[], dict[str, Any]] = field(default=dict)
    suffix: str = ".bin"  # a coded file's extension (``rd --keep-files``)
    # every point's result from one call (a codec that trains its points together); None: ``run`` per point
    run_points: Optional[Callable[[np.ndarray, Sequence[float]], list[tuple]]] = None


CODECS: dict[str, RDCodec] = {}


def register(
    name: str,
    run: Run,
    points: Sequence[float],
    point: str = "quality",
    description: str = "",
    settings: Callable[[], dict[str, Any]] = dict,
    suffix: str = ".bin",
    run_points: Optional[Callable[[np.ndarray, Sequence[float]], list[tuple]]] = None,
) -> RDCodec:
    """Add (or replace) the codec ``name``; returns its entry."""
    if not points:
        raise InputError(f"codec {name!r}: no settings to measure")
    CODECS[name] = RDCodec(name, run, tuple(points), point, description or name, settings, suffix, run_points)
    return CODECS[name]


def get(name: str) -> RDCodec:
    """The registered codec ``name``, or one line naming those registered."""
    if name not in CODECS:
        raise InputError(f"unknown codec {name!r}; choose from {', '.join(CODECS)}")
    return CODECS[name]


def anchor_settings(codec: str) -> dict[str, Any]:
    """The library versions and encoder options one classical anchor runs with."""
    import PIL
    from PIL import features

    versions = {"pillow": PIL.__version__}
    if codec == "heif":
        heif = require("pillow_heif", extra="rd", what="the heif anchor (HEVC through libheif)")
        info = heif.libheif_info()
        versions |= {"pillow-heif": heif.__version__, "libheif": info["libheif"], "x265": info["HEIF"]}
    elif codec.startswith("avif"):
        from PIL import _avif  # the libavif binding of Pillow's wheel: the encoder and decoder versions

        versions |= {"libavif": features.version("avif"), "codecs": _avif.codec_versions()}
    else:
        versions[{"jpeg": "libjpeg-turbo", "webp": "libwebp"}[codec]] = features.version({"jpeg": "jpg", "webp": "webp"}[codec])
    return {"versions": versions, "options": OPTIONS[codec], "chroma": "4:2:0"}


def _anchor(codec: str) -> Run:
    def run(pixels: np.ndarray, quality: float) -> tuple:
        coded = code(pixels, codec, int(quality))
        return coded.data, coded.pixels, coded.encode_seconds, coded.decode_seconds

    return run


for _name in ANCHORS:
    register(
        _name,
        _anchor(_name),
        LADDERS[_name],
        description=DESCRIPTIONS[_name],
        settings=lambda c=_name: anchor_settings(c),
        suffix=SUFFIXES[_name],
    )


# the latent codec's λ ladder: about 0.1–1 bpp on 256² Kodak crops at the medium preset
LATENT_LAMBDAS = (0.02, 0.008, 0.003, 0.001)


def _latent(preset: Any, use_prior: bool = False) -> Run:
    """Each λ its own encode at ``preset`` (a name, a ``latent_fit.Preset``, or a function that gives one)."""

    def run(pixels: np.ndarray, lam: float) -> tuple:
        import time

        import torch

        from inr.codec.latent_coding import decode_latent_file
        from inr.codec.latent_encode import encode_latent_image, preset_of

        image = torch.from_numpy(pixels.astype(np.float32) / 255.0)
        chosen = preset_of(preset) if isinstance(preset, str) else preset() if callable(preset) else preset
        coded = encode_latent_image(image, float(lam), chosen, use_prior=use_prior)
        start = time.perf_counter()
        decoded = decode_latent_file(coded.data)
        return coded.data, decoded, coded.seconds, time.perf_counter() - start

    return run


def _preset_named(name: str, **changes: Any) -> Any:
    """The preset of that name (``changes``: fields replaced); imported when a codec runs, not when it registers."""
    import dataclasses

    from inr.codec.latent_encode import preset_of

    return dataclasses.replace(preset_of(name), **changes)


def _latent_stacked(preset: Any) -> Callable[[np.ndarray, Sequence[float]], list[tuple]]:
    """Every λ of an image trained as one stacked run (``inr.codec.latent_stack``), each member from seed 0 as the
    per-λ encodes are; a file's encode seconds are the shared training's over the members plus its coding."""

    def run_points(pixels: np.ndarray, lams: Sequence[float]) -> list[tuple]:
        import time

        import torch

        from inr.codec.latent_coding import decode_latent_file
        from inr.codec.latent_encode import encode_latent_images

        image = torch.from_numpy(pixels.astype(np.float32) / 255.0)
        out = []
        for coded in encode_latent_images([image] * len(lams), [float(lam) for lam in lams], preset, seeds=[0] * len(lams)):
            start = time.perf_counter()
            decoded = decode_latent_file(coded.data)
            out.append((coded.data, decoded, coded.seconds, time.perf_counter() - start))
        return out

    return run_points


def _latent_settings(preset: str, use_prior: bool = False) -> dict[str, Any]:
    from inr.codec.latent_fit import PRESETS
    from inr.codec.latent_model import Spec
    from inr.codec.latent_prior import prior_for

    p = PRESETS[preset]
    settings = {"preset": preset, "steps": p.steps, "synthesis width": p.synthesis, "entropy-model width": p.arm, "levels": 7}
    if use_prior:
        used = prior_for(Spec(256, 256, 3, 7, p.synthesis, p.arm))  # the newest shipped prior of these networks
        settings |= {"prior": used.digest.hex() if used else None, "prior_lr": p.prior_lr}
    return settings


for _preset in ("fast", "medium", "slow"):
    register(
        "latents" if _preset == "medium" else f"latents-{_preset}",
        _latent(_preset),
        LATENT_LAMBDAS,
        point="lambda",
        description=f"inr latent grids + autoregressive entropy model ({_preset} preset)",
        settings=lambda p=_preset: _latent_settings(p),
        suffix=".inr",
    )
    # the same encodes, an image's λ's trained as one stacked run (``inr.codec.latent_stack``): for a GPU
    register(
        f"{'latents' if _preset == 'medium' else f'latents-{_preset}'}-stacked",
        lambda pixels, lam, p=_preset: _latent_stacked(_preset_named(p))(pixels, [lam])[0],
        LATENT_LAMBDAS,
        point="lambda",
        description=f"inr latent grids + autoregressive entropy model ({_preset} preset), an image's λ's trained as one stacked run",
        settings=lambda p=_preset: _latent_settings(p) | {"stacked": "every λ of an image in one run"},
        suffix=".inr",
        run_points=lambda pixels, lams, p=_preset: _latent_stacked(_preset_named(p))(pixels, lams),
    )
    # the networks trained from the shipped decoder prior and coded as their change from it
    register(
        f"{'latents' if _preset == 'medium' else f'latents-{_preset}'}+prior",
        _latent(_preset, use_prior=True),
        LATENT_LAMBDAS,
        point="lambda",
        description=f"inr latent grids + autoregressive entropy model ({_preset} preset), networks coded as their change from the shipped decoder prior",
        settings=lambda p=_preset: _latent_settings(p, use_prior=True),
        suffix=".inr",
    )
# the networks held near the prior, at a tenth of the latents' learning rate (``prior_lr`` until it was measured
# worse than none: docs/codec.md); kept so that the published row reruns
register(
    "latents+prior-held",
    _latent(lambda: _preset_named("medium", prior_lr=0.1), use_prior=True),
    LATENT_LAMBDAS,
    point="lambda",
    description="inr latent grids + autoregressive entropy model (medium preset), networks held near the shipped decoder prior (a tenth of the latents' rate) and coded as their change from it",
    settings=lambda: _latent_settings("medium", use_prior=True) | {"prior_lr": 0.1},
    suffix=".inr",
)


# the network-weights codec (COIN's design) at its encode defaults: a point is the network's size in weights; SIREN
# widths 24, 40, 56, 80 (depth 4) give about 0.2–2 bpp on a 256² Kodak crop at the knee's bit depth
WEIGHTS_PARAMS = (2000, 5200, 10000, 20000)
WEIGHTS_STEPS = 1000  # ``inr-codec encode``'s default


def _weights(method: str, steps: int) -> Run:
    def run(pixels: np.ndarray, params: float) -> tuple:
        import time

        import torch

        from inr.codec.coding import decode
        from inr.codec.encode import Target, encode_images

        image = torch.from_numpy(pixels.astype(np.float32) / 255.0)
        start = time.perf_counter()
        (choice,) = encode_images([image], Target("params", float(params)), method=method, steps=steps)
        encode_seconds = time.perf_counter() - start
        start = time.perf_counter()
        decoded = decode(choice.data)
        return choice.data, decoded, encode_seconds, time.perf_counter() - start

    return run


def _weights_settings(method: str, steps: int) -> dict[str, Any]:
    from inr.codec.sizes import default_depth

    return {"method": method, "depth": default_depth(method), "steps": steps, "bits": "the knee of 4…16 (inr.codec.search)"}


register(
    "weights",
    _weights("siren", WEIGHTS_STEPS),
    WEIGHTS_PARAMS,
    point="params",
    description=f"inr network weights: a SIREN fitted for {WEIGHTS_STEPS} steps, quantised and range-coded (COIN's design)",
    settings=lambda: _weights_settings("siren", WEIGHTS_STEPS),
    suffix=".inr",
)
