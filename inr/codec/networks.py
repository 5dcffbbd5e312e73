"""The networks a codec file may name, per format version: the codec's own frozen table of each network's encoder
and network classes and every argument they are built with, written out as literals (as CompressAI's zoo
configurations and Cool-chic's headers fix what a bitstream means). The decoder builds a file's network from this
table alone; the research registry (``inr.methods.registry``) is free to change without changing any file's pixels.

A file names an entry and five integers (``architecture.Architecture``): width, depth, seed, hash levels and hash
log2. An argument is a literal, or a rule of those integers and the image's shorter side (``Size``; every pixel of
the image was a training sample, so the side is the training grid's): the rules are small frozen classes whose
fields are literals too, each with its formula in its docstring. The network is built right after
``torch.manual_seed(seed)`` (``Architecture.build``), with the encoder's width as its input and the image's
channels as its output.

Versions 1 and 2 share one table (``V1``): version 2 added the header's init field and nothing about networks. It
is exactly what the registry built for these files when they were written — its image setting ("natural"
protocol, the grid rule on a training grid of the image's shorter side, sigmoid outputs for the mappings, the
Gaussian mapping's seed 0, the hash grids' finest level at that side) with the file's width and depth in the
network — written out, class defaults included, so format versions 1 and 2 keep their numbers: their files mean
what they meant (tests/codec/data/siren_v1.inr, written by version 1's encoder, decodes bit for bit).

A change to an entry, a rule or a class path is a new format version: a new table under a new number (the old
tables stay as they are, so old files keep decoding bit for bit), ``bitstream.VERSION`` and ``READABLE`` raised
with it. ``tests/codec/test_networks.py`` pins each version's ``table_digest`` (an edit without a new version fails
there, saying so), checks that the registry still builds what the newest table builds (a drift fails at once,
telling to add a version rather than to edit the table) and that each entry names every argument of its classes
(a default changed later cannot change a file's meaning); tests/codec/test_golden.py decodes a file of every
entry bit for bit.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from inr.errors import InputError


@dataclass(frozen=True)
class Size:
    """What a rule reads: the image's shorter ``side`` and the file's network integers (``hash_levels`` and
    ``hash_log2`` 0: the entry's own)."""

    side: int
    width: int
    depth: int
    hash_levels: int = 0
    hash_log2: int = 0


class Rule:
    """An argument computed from a ``Size``; its fields are literals, its formula is ``value``'s."""

    def value(self, size: Size) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Width(Rule):
    """The file's network width."""

    def value(self, size: Size) -> int:
        return size.width


@dataclass(frozen=True)
class Depth(Rule):
    """The file's network depth."""

    def value(self, size: Size) -> int:
        return size.depth


@dataclass(frozen=True)
class Side(Rule):
    """The image's shorter side N: the training grid's samples per axis (a hash grid's finest level)."""

    def value(self, size: Size) -> int:
        return size.side


@dataclass(frozen=True)
class SideAtMost(Rule):
    """min(cap, N) (a hash grid's coarsest level: 16, or the grid itself on a smaller one)."""

    cap: int

    def value(self, size: Size) -> int:
        return min(self.cap, size.side)


@dataclass(frozen=True)
class Nyquist(Rule):
    """ν = N / 2 cycles per unit, the training grid's Nyquist frequency (BACON's band limit).

    Example:
        >>> Nyquist().value(Size(side=33, width=8, depth=4))
        16.5
    """

    def value(self, size: Size) -> float:
        return size.side / 2


def band_edge(size: Size, cap: float, what: str) -> float:
    """cap · ν: the grid rule's highest band edge on the training grid; refused under one cycle per unit (sides 2 and
    3 at cap ½), where the registry's grid rule refused every Fourier mapping."""
    edge = cap * (size.side / 2)
    if edge < 1.0:
        raise InputError(
            f"{what}: an image of shorter side {size.side} leaves the band under {edge:.2g} cycles per unit, below the "
            "basic mapping's 1; this network needs a shorter side of at least 4"
        )
    return edge


@dataclass(frozen=True)
class PositionalSigma(Rule):
    """σ = 2^s' of the positional encoding (frequencies 2^linspace(0, s', n) − 1): its top frequency 2^s − 1 capped
    at ``cap`` · ν, s' = min(s, log2(1 + min(2^s − 1, cap · ν))).

    Example:
        >>> [PositionalSigma(scale=6.0, cap=0.5).value(Size(side, 8, 3)) for side in (32, 256, 512)]
        [8.999999999999998, 64.0, 64.0]
    """

    scale: float
    cap: float

    def value(self, size: Size) -> float:
        top = min(2.0**self.scale - 1.0, band_edge(size, self.cap, "positional"))
        return 2.0 ** min(self.scale, math.log2(1.0 + top))


@dataclass(frozen=True)
class GaussianSigma(Rule):
    """σ' = min(σ, cap · ν / edge) of Gaussian features B ~ N(0, σ'²): the band's edge at ``edge`` σ' (3σ holds
    99.7 % of each axis's frequencies) no higher than cap · ν.

    Example:
        >>> [GaussianSigma(sigma=10.0, cap=0.5, edge=3.0).value(Size(side, 8, 3)) for side in (32, 256)]
        [2.6666666666666665, 10.0]
    """

    sigma: float
    cap: float
    edge: float

    def value(self, size: Size) -> float:
        return min(self.sigma, band_edge(size, self.cap, "gaussian") / self.edge)


@dataclass(frozen=True)
class ScaledBelow(Rule):
    """s · min(1, ν / ν₀): a bandwidth chosen on a grid of Nyquist ν₀, scaled down on coarser grids (MFN's input
    scale, 256 at ν₀ = 128).

    Example:
        >>> ScaledBelow(scale=256.0, nyquist=128.0).value(Size(side=64, width=8, depth=3))
        64.0
    """

    scale: float
    nyquist: float

    def value(self, size: Size) -> float:
        return self.scale * min(1.0, (size.side / 2) / self.nyquist)


@dataclass(frozen=True)
class HashLevels(Rule):
    """The file's hash-grid level count, or ``own`` where it gives 0."""

    own: int

    def value(self, size: Size) -> int:
        return size.hash_levels or self.own


@dataclass(frozen=True)
class HashLog2(Rule):
    """log2 of the hash table's size: the file's cap on the entry's own, min(own, k) (k = 0: ``own``).

    Example:
        >>> HashLog2(own=12).value(Size(32, 16, 2, hash_log2=14)), HashLog2(own=19).value(Size(32, 16, 2))
        (12, 19)
    """

    own: int

    def value(self, size: Size) -> int:
        return min(self.own, size.hash_log2 or self.own)


@dataclass(frozen=True)
class Entry:
    """One network a file may name: ``encoder`` and ``network`` class paths and their arguments (literals or
    ``Rule``\\ s; the network's input and output widths are given first, positionally)."""

    encoder: str
    encoder_args: Mapping[str, Any]
    network: str
    network_args: Mapping[str, Any]

    def __post_init__(self) -> None:  # read-only arguments: a table is not edited in place
        object.__setattr__(self, "encoder_args", MappingProxyType(dict(self.encoder_args)))
        object.__setattr__(self, "network_args", MappingProxyType(dict(self.network_args)))

    def components(self, size: Size) -> tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]:
        """((encoder class path, arguments), (network class path, arguments)) at ``size``, every rule evaluated
        (a tuple given as a list, as a config gives it)."""
        return (self.encoder, evaluated(self.encoder_args, size)), (self.network, evaluated(self.network_args, size))


def evaluated(args: Mapping[str, Any], size: Size) -> dict[str, Any]:
    return {k: v.value(size) if isinstance(v, Rule) else list(v) if isinstance(v, tuple) else v for k, v in args.items()}


def load_class(path: str) -> type:
    """The class a path names (``inr.networks.SIREN``)."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


# Format versions 1 and 2, as the registry built them when these versions were written (inr/methods/registry.py and
# protocols.py then): the paper's four mappings on the natural-image protocol (positional scale 6 over 128
# frequencies per axis, Gaussian σ 10 with 256 features of seed 0; the grid rule's cap ½ of ν and edge 3σ) into the
# paper's ReLU MLP (stax init, sigmoid output); SIREN ω₀ = 30 (Sitzmann et al. 2020); hash grids of 2 features per
# level, the coarsest at 16, the finest at the training grid, T = 2^19 (every level of a 128² grid dense) or 2^12
# (the finer levels hashed), into a ReLU MLP of PyTorch's init; WIRE ω₀ = 20, s₀ = 10; Gaussian activations
# s = 10; FINER ω₀ = 30; BACON's band limit ν over its image experiment's 5 filters; GaborNet's input scale 256 at
# ν₀ = 128, α = 6, β = 1. Every class default is written out.
V1: Mapping[str, Entry] = MappingProxyType(
    {
        "none": Entry(
            "inr.encoders.IdentityEncoding",
            {"in_dim": 2},
            "inr.networks.MLP",
            {"width": Width(), "depth": Depth(), "activation": "relu", "output_activation": "sigmoid", "init": "paper"},
        ),
        "basic": Entry(
            "inr.encoders.BasicEncoding",
            {"in_dim": 2},
            "inr.networks.MLP",
            {"width": Width(), "depth": Depth(), "activation": "relu", "output_activation": "sigmoid", "init": "paper"},
        ),
        "positional": Entry(
            "inr.encoders.PositionalEncoding",
            {
                "in_dim": 2,
                "num_frequencies": 128,
                "sigma": PositionalSigma(scale=6.0, cap=0.5),
                "endpoint": True,
                "minus_one": True,
                "rotation": None,
            },
            "inr.networks.MLP",
            {"width": Width(), "depth": Depth(), "activation": "relu", "output_activation": "sigmoid", "init": "paper"},
        ),
        "gaussian": Entry(
            "inr.encoders.GaussianEncoding",
            {"in_dim": 2, "num_features": 256, "sigma": GaussianSigma(sigma=10.0, cap=0.5, edge=3.0), "seed": 0},
            "inr.networks.MLP",
            {"width": Width(), "depth": Depth(), "activation": "relu", "output_activation": "sigmoid", "init": "paper"},
        ),
        "siren": Entry(
            "inr.encoders.IdentityEncoding",
            {"in_dim": 2},
            "inr.networks.SIREN",
            {
                "width": Width(),
                "depth": Depth(),
                "first_omega_0": 30.0,
                "hidden_omega_0": 30.0,
                "output_activation": "none",
                "rescale_input": True,
                "bias_init": "torch",
                "trainable_omega": False,
            },
        ),
        "hashgrid": Entry(
            "inr.encoders.HashGridEncoding",
            {
                "in_dim": 2,
                "n_levels": HashLevels(own=16),
                "n_features_per_level": 2,
                "log2_hashmap_size": HashLog2(own=19),
                "base_resolution": SideAtMost(cap=16),
                "per_level_scale": None,
                "finest_resolution": Side(),
            },
            "inr.networks.MLP",
            {"width": Width(), "depth": Depth(), "activation": "relu", "output_activation": "sigmoid", "init": "torch"},
        ),
        "hashgrid_hashed": Entry(
            "inr.encoders.HashGridEncoding",
            {
                "in_dim": 2,
                "n_levels": HashLevels(own=16),
                "n_features_per_level": 2,
                "log2_hashmap_size": HashLog2(own=12),
                "base_resolution": SideAtMost(cap=16),
                "per_level_scale": None,
                "finest_resolution": Side(),
            },
            "inr.networks.MLP",
            {"width": Width(), "depth": Depth(), "activation": "relu", "output_activation": "sigmoid", "init": "torch"},
        ),
        "wire": Entry(
            "inr.encoders.IdentityEncoding",
            {"in_dim": 2},
            "inr.networks.WIRE",
            {
                "width": Width(),
                "depth": Depth(),
                "first_omega_0": 20.0,
                "hidden_omega_0": 20.0,
                "scale": 10.0,
                "trainable": False,
                "output_activation": "none",
                "rescale_input": True,
            },
        ),
        "gauss": Entry(
            "inr.encoders.IdentityEncoding",
            {"in_dim": 2},
            "inr.networks.GaussMLP",
            {"width": Width(), "depth": Depth(), "scale": 10.0, "output_activation": "none", "rescale_input": True},
        ),
        "finer": Entry(
            "inr.encoders.IdentityEncoding",
            {"in_dim": 2},
            "inr.networks.FINER",
            {
                "width": Width(),
                "depth": Depth(),
                "first_omega_0": 30.0,
                "hidden_omega_0": 30.0,
                "first_bias_scale": None,
                "scale_grad": False,
                "output_activation": "none",
                "rescale_input": True,
            },
        ),
        "bacon": Entry(
            "inr.encoders.IdentityEncoding",
            {"in_dim": 2},
            "inr.networks.BACON",
            {
                "width": Width(),
                "depth": Depth(),
                "bandwidth": Nyquist(),
                "filter_fractions": (0.125, 0.125, 0.25, 0.25, 0.25),
                "output_activation": "none",
            },
        ),
        "mfn": Entry(
            "inr.encoders.IdentityEncoding",
            {"in_dim": 2},
            "inr.networks.MFN",
            {
                "width": Width(),
                "depth": Depth(),
                "filter": "gabor",
                "input_scale": ScaledBelow(scale=256.0, nyquist=128.0),
                "weight_scale": 1.0,
                "alpha": 6.0,
                "beta": 1.0,
                "output_activation": "none",
                "rescale_input": True,
            },
        ),
    }
)

# format version -> the networks its files may name; the newest is what an encoder writes
TABLES: Mapping[int, Mapping[str, Entry]] = MappingProxyType({1: V1, 2: V1})
NEWEST = max(TABLES)


def table(version: int = NEWEST) -> Mapping[str, Entry]:
    """The networks a file of format ``version`` may name (``InputError`` for a version without a table)."""
    if version not in TABLES:
        raise InputError(f"format version {version} has no table of networks; this inr has {', '.join(map(str, TABLES))}")
    return TABLES[version]


def canonical(value: Any) -> Any:
    """A table's value as plain JSON data: a rule as its class name and fields, an entry as its four parts."""
    if isinstance(value, (Rule, Entry)):
        out = {f.name: canonical(getattr(value, f.name)) for f in fields(value)}
        return {"rule": type(value).__name__, **out} if isinstance(value, Rule) else out
    if isinstance(value, Mapping):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [canonical(v) for v in value]
    return value


def table_digest(version: int) -> str:
    """The first 16 hex digits of SHA-256 over version ``version``'s table as canonical JSON (sorted keys, floats as
    Python writes them): what tests/codec/test_networks.py pins.

    Example:
        >>> table_digest(1) == table_digest(2)  # version 2 changed the header, not the networks
        True
    """
    text = json.dumps(canonical(table(version)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
