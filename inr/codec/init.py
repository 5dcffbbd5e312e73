"""A learned initialisation known to the decoder (COIN++'s idea, Dupont et al. 2022): a file coded against an
init θ₀ stores the quantised change of its weights, θ = θ₀ + q·Δ, instead of θ itself.

A fit that starts at an init meta-learned over natural images ends nearer to it than a random draw's fit ends
to its start, so q is smaller at the same step Δ (fewer bits), and it gets there in fewer steps. The decoder
must be given the same θ₀: a version-2 file names it by its *digest*, the first ``INIT_DIGEST_BYTES`` bytes of
SHA-256 over the tensors it gives the network, in the file's order (``architecture.stored_tensors``), each as its
name, its shape (uint32 each) and its float32 values, all little-endian. The digest is of what the decoder uses,
not of the checkpoint's bytes: the same weights saved again keep their digest; any changed weight changes it.
Eight bytes tell inits apart by accident with a chance of 2⁻⁶⁴; they are no defence against a crafted init,
which the user chooses and which can only change the pixels, never run code.

An init file is a checkpoint with the ``encoder.*`` and ``network.*`` tensors of one network of the codec's table
(``inr-codec learn-init`` writes one per network size, ``inr.codec.learn``; any ``MetaLearning`` checkpoint of
the same network serves too), read as data (``inr.io.checkpoint.read_init``: ``weights_only``, archive sizes
checked first; no Lightning is loaded to read it). A checkpoint whose tensors, layers or fixed tensors (buffers) are not those of the file's
network is refused in one line. ``TRAINED_ON_KEY`` lists a digest of every photograph the init was
meta-learned on, so an image it has seen is refused as a test of it (``Init.check_unseen``).

A directory of inits holds one file per network size, named by ``file_name``.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Union

import torch
from torch import Tensor, nn

from inr.codec.architecture import Architecture, stored_tensors
from inr.codec.bitstream import INIT_DIGEST_BYTES
from inr.codec.networks import NEWEST
from inr.errors import InputError
from inr.io.checkpoint import read_init
from inr.networks.record import architecture, first_difference

TRAINED_ON_KEY = "inr_codec_trained_on"  # the photographs an init was meta-learned on: signal_hash of each, RGB
SUFFIX = ".ckpt"


def digest(named: Sequence[tuple[str, Tensor]]) -> bytes:
    """The first ``INIT_DIGEST_BYTES`` bytes of SHA-256 over (name, shape, float32 values) of each tensor.

    Example:
        >>> digest([("network.1.weight", torch.ones(2, 3))]).hex()
        '58a23787a11e274d'
        >>> digest([("network.1.weight", torch.ones(3, 2))]) != digest([("network.1.weight", torch.ones(2, 3))])
        True
    """
    h = hashlib.sha256()
    for name, tensor in named:
        array = tensor.detach().to(torch.float32).cpu().contiguous().numpy()
        h.update(name.encode("utf-8") + b"\0")
        h.update(struct.pack(f"<{array.ndim}I", *array.shape))
        h.update(array.astype("<f4", copy=False).tobytes())
    return h.digest()[:INIT_DIGEST_BYTES]


def file_name(arch: Architecture) -> str:
    """An init's file name in a directory of inits: ``siren_4x24.ckpt`` (a hash grid adds its table size).

    Example:
        >>> file_name(Architecture("siren", 24, 4)), file_name(Architecture("hashgrid", 16, 2, hash_levels=8, hash_log2=12))
        ('siren_4x24.ckpt', 'hashgrid_2x16_t12.ckpt')
    """
    table = f"_t{arch.hash_log2}" if arch.hash_log2 else ""
    return f"{arch.method}_{arch.depth}x{arch.width}{table}{SUFFIX}"


@dataclass(frozen=True, eq=False)
class Init:
    """θ₀ for one network: its file, the network it fits, its tensors in the file's order (float32; a complex
    one as its real view), their digest and the digests of the photographs it was meta-learned on."""

    path: Path
    arch: Architecture
    tensors: tuple[Tensor, ...]
    digest: bytes
    trained_on: frozenset[str] = frozenset()

    def check_unseen(self, image: Tensor, source: str) -> None:
        """Refuse an image (H, W, C in [0, 1]) the init was meta-learned on: coding it would not test the init."""
        from inr.data.signal_classes import signal_hash  # the encoder's check: a decoder loads no data floor

        rgb = image.expand(*image.shape[:2], 3) if image.shape[2] == 1 else image
        if signal_hash(rgb.to(torch.float32)) in self.trained_on:
            raise InputError(f"{source}: --init {self.path} was meta-learned on this image; code images it has not seen")


def read_checkpoint(path: Union[str, Path]) -> tuple[dict[str, Tensor], Any, frozenset[str]]:
    """A checkpoint's field tensors, its recorded architecture and the photographs it was trained on, read as data;
    every problem is one ``InputError`` naming ``--init``."""
    try:
        tensors, recorded = read_init(path)
    except InputError as exc:
        raise InputError(str(exc).replace("model.init_from", "--init", 1)) from None
    # read_init has sized the archive and loaded it as data; its other entries hold no more than tensors and lists
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    trained = checkpoint.get(TRAINED_ON_KEY) or []
    if not isinstance(trained, list) or not all(isinstance(h, str) for h in trained):
        raise InputError(f"--init {path}: its {TRAINED_ON_KEY} is not a list of digests")
    return tensors, recorded, frozenset(trained)


def mismatch(tensors: Mapping[str, Tensor], recorded: Any, encoder: nn.Module, network: nn.Module) -> str:
    """How a checkpoint's tensors differ from the network's, as a phrase ('' when they fit it)."""
    if recorded is not None:
        different = first_difference(recorded, architecture(SimpleNamespace(stack=None, encoder=encoder, network=network)))
        if different:
            return different
    stored = stored_tensors(encoder, network)
    for name, target in stored:
        value = tensors.get(name)
        if value is None:
            return f"{name} is missing there"
        shape = tuple(torch.view_as_real(value).shape if value.is_complex() else value.shape)
        if shape != tuple(target.shape):
            return f"{name} is {shape} there and {tuple(target.shape)} here"
    names = {name for name, _ in stored}
    fixed = {f"{prefix}.{k}": v for prefix, m in (("encoder", encoder), ("network", network)) for k, v in m.state_dict().items()}
    for name, value in tensors.items():
        if name in names:
            continue
        if name not in fixed:
            return f"{name} is not in the network"
        if value.shape != fixed[name].shape or not torch.equal(value.to(fixed[name].dtype), fixed[name]):
            return f"its fixed {name} differs from the one the codec's table builds"
    return ""


def init_for(path: Union[str, Path], arch: Architecture, side: int, channels: int, version: int = NEWEST) -> Init:
    """The init a checkpoint holds for ``arch`` as format ``version`` builds it (an image of ``channels`` whose
    shorter side is ``side``); refused in one line when its network is another."""
    tensors, recorded, trained = read_checkpoint(path)
    encoder, network = arch.build(side, channels, version)
    different = mismatch(tensors, recorded, encoder, network)
    if different:
        raise InputError(f"--init {path}: an init of another network than {arch.label()} ({different})")
    return made(Path(path), arch, tensors, encoder, network, trained)


def made(path: Path, arch: Architecture, tensors: Mapping[str, Tensor], encoder: nn.Module, network: nn.Module, trained) -> Init:
    named = []
    for name, _ in stored_tensors(encoder, network):
        value = tensors[name]
        named.append((name, (torch.view_as_real(value) if value.is_complex() else value).to(torch.float32).contiguous()))
    return Init(path, arch, tuple(t for _, t in named), digest(named), frozenset(trained))


def init_matching(path: Union[str, Path], candidates: Sequence[Architecture], side: int, channels: int) -> Init:
    """The init of the first network among ``candidates`` that a checkpoint fits (an encoder given one init file
    learns its network from it)."""
    tensors, recorded, trained = read_checkpoint(path)
    for arch in candidates:
        encoder, network = arch.build(side, channels)
        if not mismatch(tensors, recorded, encoder, network):
            return made(Path(path), arch, tensors, encoder, network, trained)
    first = candidates[0]
    raise InputError(
        f"--init {path}: not an init of a {first.method} network of depth {first.depth} (sizes {candidates[0].width} to "
        f"{candidates[-1].width} tried); give --method and --depth of the network it was learned for"
    )


def init_in(path: Union[str, Path], arch: Architecture, side: int, channels: int, version: int = NEWEST) -> Init:
    """``arch``'s init from ``path``: the file itself, or in a directory of inits the file named for ``arch``
    (its network as format ``version`` builds it)."""
    path = Path(path)
    if path.is_dir():
        found = path / file_name(arch)
        if not found.is_file():
            raise InputError(f"--init {path}: no init for {arch.label()} in it ({found.name}); make it with inr-codec learn-init")
        path = found
    return init_for(path, arch, side, channels, version)


def check_digest(init: Init, expected: bytes, source: str) -> None:
    """Refuse an init whose digest is not the one a file names, in one line."""
    if init.digest != expected:
        raise InputError(
            f"{source}: coded against the learned init {expected.hex()}, and --init {init.path} is {init.digest.hex()}: "
            "another init (or other weights under its name)"
        )
