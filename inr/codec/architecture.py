"""The network a codec file describes: a method of the registry (``inr.methods.registry``) at a size, rebuilt
identically by the encoder and the decoder, and the list of tensors the file stores.

A file names the method and five integers: the network's width and depth (they replace the registry's where its
network takes them), the seed drawn before the network is built (it fixes what the file does not store: buffers
such as a BACON's frequencies), and, for hash grids, the level count and log2 of the table size (0: the
registry's). The rest follows from the registry and the image: its settings are those of the image protocol
(``Setting``), on a training grid of the image's shorter side (every pixel is a training sample). A Gaussian
mapping's B comes from its own seed in the registry, not from the file.

What the file stores are the trainable tensors, encoder first, in ``named_parameters`` order (a complex tensor
as its (…, 2) real view); what it does not store — buffers — it checks with a CRC-32 of their bytes, so a decoder
whose registry or library draws other buffers refuses the file instead of decoding other pixels.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from typing import Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.methods.registry import METHODS, Component, Resolved, Setting

# What a file may ask a decoder to build (the worst case within these bounds is about 17 M parameters, 68 MB)
MAX_WIDTH, MAX_DEPTH = 1024, 16
MAX_HASH_LEVELS, MAX_HASH_LOG2 = 16, 18
MAX_SEED = 2**16 - 1
MAX_NAME = 32


def codec_methods() -> tuple[str, ...]:
    """The registry's methods for 2-D coordinates, the ones an image file can name."""
    return tuple(name for name, method in METHODS.items() if 2 in method.dims)


@dataclass(frozen=True)
class Architecture:
    """A registry method at a size: ``width``/``depth`` of its network, ``seed`` drawn before building it,
    ``hash_levels``/``hash_log2`` of a hash grid (0: the registry's).

    Example:
        >>> arch = Architecture("siren", width=16, depth=3)
        >>> encoder, network = arch.build(side=64, channels=3)
        >>> [name for name, _ in stored_tensors(encoder, network)][:2], parameter_count(encoder, network)
        (['network.1.weight', 'network.1.bias'], 643)
    """

    method: str
    width: int
    depth: int
    seed: int = 0
    hash_levels: int = 0
    hash_log2: int = 0

    def check(self, source: str = "codec") -> None:
        """Refuse a method the registry lacks for images, or a size outside the bounds above, in one line."""
        if self.method not in codec_methods():
            raise InputError(f"{source}: unknown method {self.method!r}; an image file names one of {', '.join(codec_methods())}")
        for field, value, low, high in (
            ("width", self.width, 1, MAX_WIDTH),
            ("depth", self.depth, 1, MAX_DEPTH),
            ("seed", self.seed, 0, MAX_SEED),
            ("hash levels", self.hash_levels, 0, MAX_HASH_LEVELS),
            ("hash table log2 size", self.hash_log2, 0, MAX_HASH_LOG2),
        ):
            if not low <= value <= high:
                raise InputError(f"{source}: network {field} {value} outside {low}…{high}")

    def label(self) -> str:
        """The network in words: ``siren 4 × 24``, ``hashgrid 2 × 16, T = 2^12``."""
        return f"{self.method} {self.depth} × {self.width}" + (f", T = 2^{self.hash_log2}" if self.hash_log2 else "")

    def setting(self, side: int, steps: int = 1) -> Setting:
        """The registry's image setting on a training grid of ``side`` samples per axis, at this size; ``steps``
        of training (a learning-rate decay spans them; the network does not depend on it)."""
        extra = {}
        if self.hash_levels:
            extra["hash_levels"] = self.hash_levels
        if self.hash_log2:
            extra["hash_log2_cap"] = self.hash_log2
        return Setting(in_dim=2, train_side=side, width=self.width, depth=self.depth, steps=steps, **extra)

    def resolve(self, side: int, steps: int = 1) -> Resolved:
        """The registry's method with this width and depth in its network's arguments (where it has them)."""
        self.check()
        spec = METHODS[self.method].resolve(self.setting(side, steps))
        args = dict(spec.network.init_args)
        args.update({key: value for key, value in (("width", self.width), ("depth", self.depth)) if key in args})
        return replace(spec, network=Component(spec.network.class_path, args))

    def build(self, side: int, channels: int) -> tuple[nn.Module, nn.Module]:
        """(encoder, network) as a fit starts them: the network drawn right after ``torch.manual_seed(seed)``,
        on the CPU in float32, restoring the global random state afterwards."""
        encoder, factory, _ = self.resolve(side).build()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            network = factory(encoder.out_dim, channels)
        return encoder, network


def stored_tensors(encoder: nn.Module, network: nn.Module) -> list[tuple[str, Tensor]]:
    """The tensors a file stores, in its order: every trainable parameter of the encoder, then of the network
    (names prefixed ``encoder.``/``network.``); complex ones as their real view (…, 2)."""
    out = []
    for prefix, module in (("encoder", encoder), ("network", network)):
        for name, p in module.named_parameters():
            if p.requires_grad:
                out.append((f"{prefix}.{name}", torch.view_as_real(p) if p.is_complex() else p))
    return out


def linear_weights(encoder: nn.Module, network: nn.Module) -> set[str]:
    """Names (as ``stored_tensors`` gives them) of the weight matrices of ``nn.Linear`` layers: the tensors that
    per-channel quantisation gives one step per output channel."""
    return {
        f"{prefix}.{name}.weight" if name else f"{prefix}.weight"
        for prefix, module in (("encoder", encoder), ("network", network))
        for name, sub in module.named_modules()
        if isinstance(sub, nn.Linear)
    }


def parameter_count(encoder: nn.Module, network: nn.Module) -> int:
    """Real numbers the file stores (a complex parameter counts two)."""
    return sum(t.numel() for _, t in stored_tensors(encoder, network))


def buffers_crc(encoder: nn.Module, network: nn.Module) -> Optional[int]:
    """CRC-32 of every buffer's bytes (float32/int64 as held, little-endian, in ``named_buffers`` order), or None
    when the modules have none."""
    buffers = [b for module in (encoder, network) for _, b in module.named_buffers()]
    if not buffers:
        return None
    crc = 0
    for b in buffers:
        array = b.detach().cpu().contiguous().numpy()
        crc = zlib.crc32(array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes(), crc)
    return crc
