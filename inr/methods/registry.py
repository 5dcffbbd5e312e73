"""Every method of the package, named once with its settings: the one registry that comparisons, tables and the
config overlays (``configs/methods/*.yaml``) read.

A method is an input mapping and a network with its optimiser (and, where the protocol or its release decays
the learning rate, its scheduler). Its settings can depend on where it runs — the dimension of the coordinates,
the training grid (a hash grid's finest level, BACON's band limit, and the band of every frequency setting by the
grid rule below), the task's protocol (the paper's learning rate and scale per mapping and task,
``inr.methods.protocols``), the output activation the target needs, the seed, the run's length — so each
method resolves, for a ``Setting``, into a ``Resolved``: ``class_path``/``init_args`` of its encoder, network,
optimiser and scheduler, exactly as a config gives them.

The grid rule (``grid_bands``, ``protocols.MappingSettings.at``): the paper's scales were chosen on its own
grids (512² images, 96³ volumes, 400² views) and are kept in cycles per unit, but on training samples of
Nyquist frequency ν no band edge lies above ν/2 — the positional encoding's top frequency, the Gaussian's 3σ,
MFN's input scale (its release's 256 sits at that edge of its own 256² grid, so it scales as 256 ν/128 below
it). At the paper's size nothing changes. A combination that leaves the positional encoding under one cycle
per unit (below the basic mapping) is refused with one line. Fresh points (the shape protocol) have no training
grid, and their bands stay as given. Why a cap and not a ratio (scaling every band by ν/ν_paper would move CT's
σ = 4, chosen for the phantoms' edges, to σ = 1 at 128²): docs/spectral.md, "Settings that follow the grid".

    spec = METHODS["wire"].resolve(Setting(in_dim=1, train_side=512, output_activation="none"))
    spec.overlay()                     # the model.init_args block of a config
    encoder, network, optimizer = spec.build()   # the objects a task takes

Sources of each setting are in the comments beside it and in each class's docstring (docs/architectures.md).
``python -m inr.methods`` prints the registry; ``--write-configs`` regenerates the overlays.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Optional

import yaml

from inr.methods.protocols import PROTOCOLS, MappingSettings

# Instant-NGP's Adam: β₁ = 0.9, β₂ = 0.99, ε = 1e-15 (Müller et al. 2022, sec. 4), lr 1e-2 as its image runs.
INSTANT_NGP_ADAM = {"betas": [0.9, 0.99], "eps": 1e-15}
# BACON's band split over its 5 filters in its image experiment (computational-imaging/bacon, train_img.py)
BACON_FRACTIONS = [0.125, 0.125, 0.25, 0.25, 0.25]
# GaborNet's input_scale 256 fits every pixel of a 256² image (mfn/experiments/image_rep.py, data.py): a grid
# of Nyquist 128 cycles per unit; on coarser training samples the grid rule scales it down from there
MFN_INPUT_SCALE, MFN_NYQUIST = 256.0, 128.0
# FINER's release decays the learning rate as 0.1^(t/T) over its T training steps (liuzhen0212/FINER,
# train_image.py: LambdaLR(0.1 ** min(iter / num_epochs, 1)))
FINER_DECAY = 0.1
# The notebook's rotation of the positional frame (3d_simple_nerf.ipynb, posenc_new_rotated): 45° about z,
# then 45° about x; B ← B R_zᵀ R_xᵀ, i.e. every frequency vector rotated by R = R_x R_z
_H = math.sqrt(0.5)
NOTEBOOK_ROTATION = [[_H, -_H, 0.0], [0.5, 0.5, -_H], [0.5, 0.5, _H]]


@dataclass(frozen=True)
class Setting:
    """Where a method runs: what its settings depend on.

    ``train_side``: training samples per axis (its Nyquist frequency is train_side / 2 cycles per unit);
    ``protocol``: the task's mapping settings (``PROTOCOLS``: learning rates, positional scale, σ, m);
    ``hash_levels``/``hash_base``: the hash grid's level count and coarsest resolution (its finest is the
    training grid); ``width``/``depth``/``init``: the paper-style MLP of the four mappings; ``steps``: the run's
    optimiser steps (a decaying learning rate spans them); ``resolvable``: the highest frequency (cycles per
    unit) the training samples resolve when they are not a grid of ``train_side`` per axis (posed views), or
    None for train_side / 2. ``hash_finest``: the hash grid's finest resolution where it is not the training
    grid's (a protocol of fresh points has none); ``hash_log2_cap``: a cap on the hash grids' table size,
    T ≤ 2^k (None: each method's own T).
    """

    in_dim: int = 2
    train_side: int = 64
    protocol: MappingSettings = PROTOCOLS["natural"]
    output_activation: str = "sigmoid"
    width: int = 256
    depth: int = 3
    init: str = "paper"
    seed: int = 0
    hash_levels: int = 16
    hash_base: int = 16
    steps: int = 300
    resolvable: Optional[float] = None
    hash_finest: Optional[int] = None
    hash_log2_cap: Optional[int] = None

    @property
    def nyquist(self) -> float:
        """The training grid's Nyquist frequency, train_side / 2 cycles per unit (or ``resolvable``)."""
        return self.resolvable if self.resolvable is not None else self.train_side / 2


def grid_bands(s: Setting) -> MappingSettings:
    """The setting's protocol on its training samples: the paper's bands, none above ν/2 (``MappingSettings.at``);
    fresh points (no training grid) keep the protocol's bands."""
    return s.protocol if s.protocol.sampling == "fresh" else s.protocol.at(s.nyquist)


@dataclass(frozen=True)
class Component:
    """A class and its arguments, as a config's ``class_path`` and ``init_args``; an argument may itself be a
    ``Component`` (an encoder wrapped in ``AffineEncoding``)."""

    class_path: str
    init_args: Mapping[str, Any] = field(default_factory=dict)

    def as_config(self) -> dict[str, Any]:
        args = {k: v.as_config() if isinstance(v, Component) else v for k, v in self.init_args.items()}
        return {"class_path": self.class_path, "init_args": args}

    def cls(self) -> type:
        module, _, name = self.class_path.rpartition(".")
        return getattr(importlib.import_module(module), name)

    def instantiate(self) -> Any:
        """The object, its ``Component`` arguments built first."""
        return self.cls()(**{k: v.instantiate() if isinstance(v, Component) else v for k, v in self.init_args.items()})


@dataclass(frozen=True)
class Resolved:
    """A method for one ``Setting``: its encoder, network (built by the task as network(in, out)), optimiser and
    learning-rate scheduler (None: a constant rate). ``states_scheduler``: the overlay names the scheduler even
    when there is none (``scheduler: null``), so that a method without one also replaces the scheduler of a base
    config whose protocol decays the rate."""

    name: str
    encoder: Component
    network: Component
    optimizer: Component
    describe: str = ""
    scheduler: Optional[Component] = None
    states_scheduler: bool = False

    @property
    def lr(self) -> float:
        return float(self.optimizer.init_args["lr"])

    def overlay(self) -> dict[str, Any]:
        """The ``model.init_args`` entries of a config (``--config image.yaml --config methods/<name>.yaml``)."""
        out = {"encoder": self.encoder.as_config(), "network": self.network.as_config(), "optimizer": self.optimizer.as_config()}
        if self.scheduler is not None or self.states_scheduler:
            out["scheduler"] = None if self.scheduler is None else self.scheduler.as_config()
        return out

    def build(self) -> tuple[Any, Callable[..., Any], Callable[..., Any]]:
        """(encoder instance, network factory (in_dim, out_dim) -> module, optimizer factory params -> optimizer)."""
        optimizer_args = {k: tuple(v) if isinstance(v, list) else v for k, v in self.optimizer.init_args.items()}
        return (
            self.encoder.instantiate(),
            partial(self.network.cls(), **self.network.init_args),
            partial(self.optimizer.cls(), **optimizer_args),
        )

    def build_scheduler(self) -> Optional[Callable[..., Any]]:
        """The scheduler factory, optimizer -> scheduler (a task's ``scheduler``), or None for a constant rate."""
        return None if self.scheduler is None else partial(self.scheduler.cls(), **self.scheduler.init_args)


@dataclass(frozen=True)
class Method:
    """A named method: ``resolve(setting)`` gives its settings there; ``summary`` says what it is and its source.
    ``scheduled``: its learning rate follows the protocol's decay (``lr_schedule``), as the paper's mappings do."""

    name: str
    summary: str
    resolve_fn: Callable[[Setting], tuple[Component, Component, float, dict, str]]
    dims: tuple[int, ...] = (1, 2, 3)
    scheduled: bool = False

    def resolve(self, setting: Setting) -> Resolved:
        if setting.in_dim not in self.dims:
            raise ValueError(f"method {self.name!r} is defined for {', '.join(f'{d}-D' for d in self.dims)} coordinates only")
        encoder, network, lr, adam, describe, *rest = self.resolve_fn(setting)
        optimizer = Component("torch.optim.Adam", {"lr": lr, **adam})
        scheduler = rest[0] if rest else lr_schedule(setting.protocol) if self.scheduled else None
        decays = setting.protocol.lr_decay is not None
        return Resolved(self.name, encoder, network, optimizer, describe, scheduler, states_scheduler=decays)


def lr_schedule(p: MappingSettings) -> Optional[Component]:
    """lr_t = lr·d^(t / (steps/2)), per step: the protocol's decay d per half run (the shape notebook's
    ``optimizers.exponential_decay(lr, 5000, .1)``, lr = 5e-4, over its 10,000 steps); None for a constant rate.

    Example:
        >>> lr_schedule(PROTOCOLS["shape"]).init_args["gamma"] == 0.1 ** (1 / 5000)
        True
    """
    if p.lr_decay is None:
        return None
    return Component("torch.optim.lr_scheduler.ExponentialLR", {"gamma": p.lr_decay ** (1 / max(1, p.steps // 2))})


def identity(s: Setting) -> Component:
    return Component("inr.encoders.IdentityEncoding", {"in_dim": s.in_dim})


def paper_mlp(s: Setting) -> Component:
    """The paper's network: ``depth`` hidden ReLU layers of ``width``, the setting's output activation and init."""
    return Component(
        "inr.networks.MLP",
        {"width": s.width, "depth": s.depth, "activation": "relu", "output_activation": s.output_activation, "init": s.init},
    )


def frequencies(encoder: Component) -> int:
    """m, the number of frequencies of a Fourier-feature encoder (out_dim = 2m).

    Example:
        >>> frequencies(Component("inr.encoders.PositionalEncoding", {"in_dim": 3, "num_frequencies": 85}))
        255
    """
    args = encoder.init_args
    if "num_features" in args:
        return int(args["num_features"])
    return int(args["in_dim"]) * int(args.get("num_frequencies", 1))


def _mapping(name: str, encoder: Callable[[Setting], Component], describe: Callable[[Setting], str] = lambda s: ""):
    """One of the paper's mappings into its MLP at the protocol's learning rate; where the protocol asks (the shape
    notebook's ``input_encoder``), "none" feeds 2v − 1 and the Fourier features are divided by ‖a‖ = √m."""

    def resolve(s: Setting):
        enc, text, p = encoder(s), [describe(s)], s.protocol
        if name == "none" and p.centred_input:
            enc, text = Component("inr.encoders.AffineEncoding", {"encoder": enc, "scale": 2.0, "shift": -1.0}), ["2v − 1"]
        elif name != "none" and p.normalised_features:
            m = frequencies(enc)
            enc = Component("inr.encoders.AffineEncoding", {"encoder": enc, "scale": 1 / math.sqrt(m)})
            text.append(f"features ÷ √{m}")
        if p.lr_decay is not None:
            text.append(f"lr ×{p.lr_decay:g} per {max(1, p.steps // 2):,} steps")
        return enc, paper_mlp(s), p.learning_rate(name), {}, ", ".join(t for t in text if t)

    return resolve


def _positional(s: Setting, rotation: Optional[list[list[float]]] = None) -> Component:
    p = grid_bands(s)
    args = {
        "in_dim": s.in_dim,
        "num_frequencies": p.positional_per_axis,
        "sigma": 2.0**p.positional_scale,
        "endpoint": True,
        "minus_one": True,
    }
    return Component("inr.encoders.PositionalEncoding", {**args, "rotation": rotation} if rotation else args)


def _gaussian(s: Setting) -> Component:
    p = grid_bands(s)
    return Component(
        "inr.encoders.GaussianEncoding",
        {"in_dim": s.in_dim, "num_features": p.num_features, "sigma": p.gaussian_sigma, "seed": s.seed},
    )


def positional_text(s: Setting) -> str:
    p = grid_bands(s)
    return f"scale {p.positional_scale:.3g} (top {2**p.positional_scale - 1:.3g} cycles/unit), {p.positional_per_axis} per axis"


def gaussian_text(s: Setting) -> str:
    p = grid_bands(s)
    return f"σ = {p.gaussian_sigma:.3g}, m = {p.num_features}"


def hash_levels_text(n_levels: int, log2_size: int, base: int, finest: int, dim: int) -> str:
    """Which levels of a hash grid are dense and which hashed, e.g. "T = 2^12: levels 0–9 dense (N 16–55), 10–15 hashed (N 64–128)"."""
    from inr.encoders import HashGridEncoding

    encoder = HashGridEncoding(
        in_dim=dim, n_levels=n_levels, log2_hashmap_size=log2_size, base_resolution=base, finest_resolution=finest
    )
    n, dense = encoder.resolutions.tolist(), encoder.dense_levels
    parts = [f"levels 0–{dense - 1} dense (N {n[0]}–{n[dense - 1]})"] if dense else []
    parts.append(f"{dense}–{len(n) - 1} hashed (N {n[dense]}–{n[-1]})" if dense < len(n) else "none hashed")
    return f"T = 2^{log2_size}: " + ", ".join(parts)


def _hashgrid(own_log2_size: int):
    """tiny-cuda-nn's HashGrid (2 features per level) with the finest level at the training grid's resolution
    (or the setting's ``hash_finest``), a 2 × 64 ReLU MLP (PyTorch init) and Instant-NGP's Adam; its table
    T = 2^own_log2_size, or the setting's cap where that is smaller."""

    def resolve(s: Setting):
        finest = s.hash_finest or s.train_side
        log2_size = min(own_log2_size, s.hash_log2_cap or own_log2_size)
        base = min(s.hash_base, finest)
        encoder = Component(
            "inr.encoders.HashGridEncoding",
            {
                "in_dim": s.in_dim,
                "n_levels": s.hash_levels,
                "n_features_per_level": 2,
                "log2_hashmap_size": log2_size,
                "base_resolution": base,
                "finest_resolution": finest,
            },
        )
        network = Component(
            "inr.networks.MLP", {"width": 64, "depth": 2, "activation": "relu", "output_activation": s.output_activation}
        )
        levels = f"{s.hash_levels} levels × 2, " if s.hash_levels != 16 else ""
        levels += f"capped at 2^{log2_size}, " if log2_size < own_log2_size else ""
        return (
            encoder,
            network,
            1e-2,
            INSTANT_NGP_ADAM,
            levels + hash_levels_text(s.hash_levels, log2_size, base, finest, s.in_dim),
        )

    return resolve


def _siren(s: Setting):
    # SIREN's image network: 4 sine layers, ω₀ = 30 (Sitzmann et al. 2020), on raw coordinates, the
    # reference code's biases (PyTorch's default law); lr 5e-4. On fresh
    # points (the shape protocol): lr 1e-4, the rate of SIREN's own shape fitting on fresh points per step
    # (vsitzmann/siren experiment_scripts/train_sdf.py), and the depth of the setting's MLP, so that the shape
    # comparison sets networks of one size side by side
    fresh = s.protocol.sampling == "fresh"
    depth, lr = (s.depth, 1e-4) if fresh else (4, 5e-4)
    network = Component(
        "inr.networks.SIREN",
        {
            "width": s.width,
            "depth": depth,
            "first_omega_0": 30.0,
            "hidden_omega_0": 30.0,
            "bias_init": "torch",
            "output_activation": "none",
        },
    )
    return identity(s), network, lr, {}, f"{depth} × {s.width}, ω₀ = 30"


def _wire(s: Setting):
    # WIRE: 4 complex-Gabor layers, ω₀ = 20, s₀ = 10 (liuzhen0212/FINER run_wire.sh); lr 1e-3, as the released
    # 5e-3 stalls on the default image (docs/architectures.md)
    network = Component(
        "inr.networks.WIRE",
        {
            "width": s.width,
            "depth": 4,
            "first_omega_0": 20.0,
            "hidden_omega_0": 20.0,
            "scale": 10.0,
            "output_activation": "none",
        },
    )
    complex_units = f" (complex {int(s.width / math.sqrt(2))})" if s.in_dim == 2 else ""
    return identity(s), network, 1e-3, {}, f"4 × {s.width}{complex_units}, ω₀ = 20, s₀ = 10"


def _gauss(s: Setting):
    # Gaussian activation exp(−(s z)²), s = 10 (vishwa91/wire get_INR), lr 2e-3 (wire_image_denoise.py: 1e-3 – 2e-3)
    network = Component("inr.networks.GaussMLP", {"width": s.width, "depth": 4, "scale": 10.0, "output_activation": "none"})
    return identity(s), network, 2e-3, {}, f"4 × {s.width}, s = 10"


def _finer(s: Setting):
    # FINER: ω₀ = 30, PyTorch's first-layer bias, lr 5e-4 decayed to 0.1× over the run (liuzhen0212/FINER
    # run_finer.sh, train_image.py): gamma = 0.1^(1/steps) per step
    network = Component(
        "inr.networks.FINER",
        {
            "width": s.width,
            "depth": 4,
            "first_omega_0": 30.0,
            "hidden_omega_0": 30.0,
            "first_bias_scale": None,
            "output_activation": "none",
        },
    )
    scheduler = Component("torch.optim.lr_scheduler.ExponentialLR", {"gamma": FINER_DECAY ** (1.0 / max(s.steps, 1))})
    return identity(s), network, 5e-4, {}, f"4 × {s.width}, ω₀ = 30, lr × 0.1^(t/{s.steps})", scheduler


def bacon_band_limit(s: Setting) -> int:
    """BACON's band limit M = Σ_i round(B f_i), B = the training grid's Nyquist, as ``BACON.max_frequency``."""
    return sum(round(s.nyquist * f) for f in BACON_FRACTIONS)


def _bacon(s: Setting):
    # BACON: band limit = the training grid's Nyquist, N/4 cycles per unit of an every_other split (train_img.py),
    # split as its image experiment; lr 5e-3 (config/img/bacon.ini)
    network = Component(
        "inr.networks.BACON",
        {"width": s.width, "depth": 4, "bandwidth": s.nyquist, "filter_fractions": BACON_FRACTIONS, "output_activation": "none"},
    )
    return identity(s), network, 5e-3, {}, f"4 × {s.width}, band limit {bacon_band_limit(s)} cycles/unit"


def mfn_input_scale(s: Setting) -> float:
    """GaborNet's released input_scale by the grid rule: 256 at and above its release's grid (Nyquist 128), where
    that bandwidth fitted every pixel; 256 ν/128 below it, so the band keeps its place under the Nyquist."""
    return MFN_INPUT_SCALE * min(1.0, s.nyquist / MFN_NYQUIST)


def _mfn(s: Setting):
    # GaborNet: 3 × 256, 4 filters, input_scale 256 at the release's grid (by the grid rule elsewhere), α = 6,
    # β = 1, lr 1e-2 (mfn/experiments/image_rep.py); 2-D only, as the release
    scale = mfn_input_scale(s)
    network = Component(
        "inr.networks.MFN",
        {
            "width": s.width,
            "depth": 3,
            "filter": "gabor",
            "input_scale": scale,
            "weight_scale": 1.0,
            "alpha": 6.0,
            "beta": 1.0,
            "output_activation": "none",
        },
    )
    return identity(s), network, 1e-2, {}, f"GaborNet 3 × {s.width}, input_scale {scale:g}"


# Every method, in table order. Adding a method is one entry here.
METHODS: dict[str, Method] = {
    m.name: m
    for m in [
        Method("none", "raw coordinates into the paper's ReLU MLP", _mapping("none", identity), scheduled=True),
        Method(
            "basic",
            "γ(v) = [cos 2πv, sin 2πv]",
            _mapping("basic", lambda s: Component("inr.encoders.BasicEncoding", {"in_dim": s.in_dim})),
            scheduled=True,
        ),
        Method(
            "positional",
            "positional features 2^linspace(0, scale, n) − 1 per axis (Tancik et al. 2020)",
            _mapping("positional", _positional, positional_text),
            scheduled=True,
        ),
        Method(
            "gaussian",
            "Gaussian Fourier features B ~ N(0, σ²) (Tancik et al. 2020)",
            _mapping("gaussian", _gaussian, gaussian_text),
            scheduled=True,
        ),
        # the positional frequencies in a frame rotated off the axes, as 3d_simple_nerf.ipynb's posenc_new_rotated
        Method(
            "positional_rotated",
            "positional features in the notebook's rotated frame (3d_simple_nerf.ipynb, posenc_new_rotated)",
            _mapping("positional", lambda s: _positional(s, NOTEBOOK_ROTATION), lambda s: positional_text(s) + ", frame rotated"),
            dims=(3,),
            scheduled=True,
        ),
        Method("siren", "SIREN: sine layers, ω₀ = 30 (Sitzmann et al. 2020)", _siren),
        # T = 2^19 holds every level of a 128² training grid densely; T = 2^12 hashes the finer ones
        Method("hashgrid", "multiresolution hash grid, T = 2^19 (Müller et al. 2022)", _hashgrid(19)),
        Method("hashgrid_hashed", "multiresolution hash grid, T = 2^12: the finer levels hashed", _hashgrid(12), dims=(2,)),
        Method("wire", "WIRE: complex Gabor wavelets (Saragadam et al. 2023)", _wire),
        Method("gauss", "Gaussian activations exp(−(s z)²) (Ramasinghe & Lucey 2022)", _gauss),
        Method("finer", "FINER: variable-periodic sines (Liu et al. 2024)", _finer),
        Method("bacon", "BACON: band-limited multiplicative filters (Lindell et al. 2022)", _bacon),
        Method("mfn", "GaborNet, a multiplicative filter network (Fathony et al. 2021)", _mfn, dims=(2,)),
    ]
}
# The paper's four input mappings, and the coordinate encodings of the image comparison's default rows
MAPPING_METHODS = ("none", "basic", "positional", "gaussian")
ENCODER_ROWS = ("none", "basic", "positional", "gaussian", "siren", "hashgrid", "hashgrid_hashed")


def method_names(text: str, available: Optional[tuple[str, ...]] = None) -> list[str]:
    """A comma-separated list of method names (or ``all``), checked against ``available`` (default: all)."""
    available = tuple(available or METHODS)
    names = list(available) if text.strip() == "all" else [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in available]
    if unknown or not names:
        raise ValueError(f"unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(available)}")
    return names


# --- the config overlays ------------------------------------------------------------------------------
# configs/methods/<name>.yaml: each method for image.yaml (256², every_other: a 128² training grid),
# configs/methods/text/<mapping>.yaml: the four mappings with the paper's text settings for image_text.yaml, and
# configs/methods/shape/<row>.yaml, configs/methods/shape_cpu/<row>.yaml: the shape comparison's rows for
# shape_paper.yaml and shape.yaml (``SHAPE_SETTINGS``). Each overlay also names the run's logger after its method,
# so runs of different methods keep their own directories (and ``--ckpt_path last`` resumes the method's own run).
IMAGE_SETTING = Setting(in_dim=2, train_side=128)
# The 3D shape protocols (``PROTOCOLS["shape"]``, the paper's sizes; ``"shape_cpu"``, CPU size): occupancy logits
# (a linear output) of 3-D points; fresh points leave no training grid, so the hash grid's 16 levels run from N 16
# to 512 per axis, its table capped at 2^17 at CPU size (3.2 M parameters, against 10.5 M at 2^19)
SHAPE_ROWS = ("none", "basic", "positional", "gaussian", "siren", "hashgrid")
SHAPE_SETTINGS: dict[str, Setting] = {
    kind: Setting(
        in_dim=3,
        protocol=PROTOCOLS[kind],
        output_activation="none",
        width=PROTOCOLS[kind].width,
        depth=PROTOCOLS[kind].depth,
        init=PROTOCOLS[kind].init,
        hash_finest=512,
        hash_log2_cap=cap,
    )
    for kind, cap in (("shape", None), ("shape_cpu", 17))
}
OVERLAYS: dict[str, tuple[str, Setting, str, str]] = {
    **{f"{name}.yaml": (name, IMAGE_SETTING, "image.yaml", f"image_{name}") for name, m in METHODS.items() if 2 in m.dims},
    **{
        f"text/{name}.yaml": (
            name,
            Setting(in_dim=2, train_side=128, protocol=PROTOCOLS["text"]),
            "image_text.yaml",
            f"image_text_{name}",
        )
        for name in MAPPING_METHODS
    },
    **{
        f"{kind}/{name}.yaml": (name, SHAPE_SETTINGS[kind], base, f"{base.removesuffix('.yaml')}_{name}")
        for kind, base in (("shape", "shape_paper.yaml"), ("shape_cpu", "shape.yaml"))
        for name in SHAPE_ROWS
    },
}


def overlay_text(relative: str) -> str:
    """The YAML of one overlay file, generated from the registry."""
    name, setting, base, run_name = OVERLAYS[relative]
    spec = METHODS[name].resolve(setting)
    header = (
        f"# {METHODS[name].summary}: {spec.describe or 'as the paper'}.\n"
        f"# Overlay: train.py --config {base} --config methods/{relative}\n"
        "# Generated from inr/methods/registry.py (python -m inr.methods --write-configs); edit it there.\n"
    )
    body = {"model": {"init_args": spec.overlay()}, "trainer": {"logger": {"init_args": {"name": run_name}}}}
    return header + yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=120)
