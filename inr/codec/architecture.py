"""The network a codec file describes: an entry of the codec's own table (``inr.codec.networks``) at a size,
rebuilt identically by the encoder and the decoder, and the list of tensors the file stores.

A file names the entry and five integers: the network's width and depth, the seed drawn before the network is built
(it fixes what the file does not store: buffers such as a BACON's frequencies), and, for hash grids, the level
count and log2 of the table size (0: the entry's own). The rest follows from the table of the file's format version
and the image: every argument the table gives, its rules evaluated on a training grid of the image's shorter side
(every pixel was a training sample). A Gaussian mapping's B comes from the seed the table gives it, not from the
file. The research registry (``inr.methods.registry``) gives only what training needs beside the network — the
optimiser, its learning rate and schedule (``Architecture.resolve``) — so that what a file means never moves with it.

What the file stores are the trainable tensors, encoder first, in ``named_parameters`` order (a complex tensor
as its (…, 2) real view); what it does not store — buffers — it checks with a CRC-32 of their bytes, so a decoder
whose library draws other buffers refuses the file instead of decoding other pixels.

Importing this module loads no torch (the command's ``--help`` names the networks); the first network built does.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional

from inr.codec.bounds import MAX_DEPTH, MAX_HASH_LEVELS, MAX_HASH_LOG2, MAX_SEED, MAX_WIDTH
from inr.codec.networks import NEWEST, Entry, Size, load_class, table
from inr.errors import InputError

if TYPE_CHECKING:
    from torch import Tensor, nn

    from inr.methods.registry import Resolved, Setting


def codec_methods(version: int = NEWEST) -> tuple[str, ...]:
    """The networks a file of format ``version`` may name (default: the newest, what an encoder writes).

    Example:
        >>> codec_methods()[:5]
        ('none', 'basic', 'positional', 'gaussian', 'siren')
    """
    return tuple(table(version))


@dataclass(frozen=True)
class Architecture:
    """A network of the table at a size: ``width``/``depth`` of its network, ``seed`` drawn before building it,
    ``hash_levels``/``hash_log2`` of a hash grid (0: the table's).

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

    def check(self, source: str = "codec", version: int = NEWEST) -> None:
        """Refuse a network the table of format ``version`` lacks, or a size outside the bounds, in one line."""
        names = codec_methods(version)
        if self.method not in names:
            raise InputError(f"{source}: unknown method {self.method!r}; an image file names one of {', '.join(names)}")
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

    def entry(self, version: int = NEWEST) -> Entry:
        """The table's entry of this network in format ``version``."""
        self.check(version=version)
        return table(version)[self.method]

    def components(self, side: int, version: int = NEWEST) -> tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]:
        """(class path, arguments) of the encoder and of the network for an image of shorter side ``side``.

        Example:
            >>> Architecture("siren", width=16, depth=3).components(side=64)[1]
            ('inr.networks.SIREN', {'width': 16, 'depth': 3, 'first_omega_0': 30.0, 'hidden_omega_0': 30.0, \
'output_activation': 'none', 'rescale_input': True, 'bias_init': 'torch', 'trainable_omega': False})
        """
        size = Size(side, self.width, self.depth, self.hash_levels, self.hash_log2)
        return self.entry(version).components(size)

    def build(self, side: int, channels: int, version: int = NEWEST) -> tuple[nn.Module, nn.Module]:
        """(encoder, network) as format ``version`` means them and a fit starts them: the network drawn right after
        ``torch.manual_seed(seed)``, on the CPU in float32, restoring the global random state afterwards."""
        import torch

        (encoder_class, encoder_args), (network_class, network_args) = self.components(side, version)
        encoder = load_class(encoder_class)(**encoder_args)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            network = load_class(network_class)(encoder.out_dim, channels, **network_args)
        return encoder, network

    def setting(self, side: int, steps: int = 1) -> Setting:
        """The registry's image setting on a training grid of ``side`` samples per axis, at this size; ``steps``
        of training (a learning-rate decay spans them)."""
        from inr.methods.registry import Setting

        extra = {}
        if self.hash_levels:
            extra["hash_levels"] = self.hash_levels
        if self.hash_log2:
            extra["hash_log2_cap"] = self.hash_log2
        return Setting(in_dim=2, train_side=side, width=self.width, depth=self.depth, steps=steps, **extra)

    def resolve(self, side: int, steps: int = 1) -> Resolved:
        """How an encoder trains this network: the registry's optimiser, learning rate and schedule for the method,
        with the newest table's encoder and network in place of the registry's (tests/codec/test_networks.py checks
        that the registry's own are the same today), so that what is trained is what the file will mean."""
        from inr.methods.registry import METHODS, Component

        self.check()
        spec = METHODS[self.method].resolve(self.setting(side, steps))
        (encoder_class, encoder_args), (network_class, network_args) = self.components(side)
        return replace(spec, encoder=Component(encoder_class, encoder_args), network=Component(network_class, network_args))


def stored_tensors(encoder: nn.Module, network: nn.Module) -> list[tuple[str, Tensor]]:
    """The tensors a file stores, in its order: every trainable parameter of the encoder, then of the network
    (names prefixed ``encoder.``/``network.``); complex ones as their real view (…, 2)."""
    import torch

    out = []
    for prefix, module in (("encoder", encoder), ("network", network)):
        for name, p in module.named_parameters():
            if p.requires_grad:
                out.append((f"{prefix}.{name}", torch.view_as_real(p) if p.is_complex() else p))
    return out


def linear_weights(encoder: nn.Module, network: nn.Module) -> set[str]:
    """Names (as ``stored_tensors`` gives them) of the weight matrices of ``nn.Linear`` layers: the tensors that
    per-channel quantisation gives one step per output channel."""
    from torch import nn

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
