"""A field's checkpoint read as data: the ``encoder.*`` and ``network.*`` tensors of a training checkpoint and the
record of the architecture they belong to (``inr.networks.record``), with nothing else of Lightning's in the way.

The file is data: it is read with ``torch.load(weights_only=True)`` after its archive entries are sized (a
deflated entry could stand for any size), so a checkpoint can run no code. A task's ``init_from``
(``inr.tasks.init_from``) and a codec decoding against a learned init (``inr.codec.init``) read it alike.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

import torch
from torch import Tensor

from inr.errors import InputError, check_memory

# the checkpoint entry that names the architecture of its weights (``inr.networks.record.architecture``)
INIT_KEY = "inr_architecture"
# the parts of a task whose tensors make its field
PARTS = ("encoder.", "network.")
# torch.save stores a checkpoint's entries uncompressed: their sizes add up to the file's, less than this more
ZIP_SLACK = 1 << 20


def read_init(path: Union[str, Path]) -> tuple[dict[str, Tensor], Any]:
    """The field's tensors of a checkpoint (``encoder.*``, ``network.*``) and its recorded architecture (None
    when it records none); ``InputError`` with one line for a missing, unreadable or foreign file."""
    checkpoint = read_checkpoint(path)
    tensors = {k: v for k, v in checkpoint["state_dict"].items() if k.startswith(PARTS) and isinstance(v, Tensor)}
    if not any(k.startswith("network.") for k in tensors):
        raise InputError(f"model.init_from {path}: it holds no network weights (network.*)")
    return tensors, checkpoint.get(INIT_KEY)


def read_checkpoint(path: Union[str, Path]) -> dict[str, Any]:
    """The whole training checkpoint (a dict with a ``state_dict``), sized then loaded as data; ``InputError`` with
    one line for a missing, unreadable or foreign file."""
    path = Path(path)
    where = f"model.init_from {path}"
    if not path.is_file():
        raise InputError(f"{where}: file not found")
    try:
        with zipfile.ZipFile(path) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise InputError(f"{where}: not a readable checkpoint (truncated, damaged or not a checkpoint)") from None
    if expanded > path.stat().st_size + ZIP_SLACK:
        raise InputError(f"{where}: its entries expand beyond the file's size; torch.save did not write it (nothing inflated)")
    check_memory(f"checkpoint {path}", expanded, advice="load it on a machine with more memory")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # the unpickler raises many types for damaged or unsafe files; nothing in them ran
        raise InputError(f"{where}: not a readable checkpoint (damaged, or holding more than tensors and plain data)") from None
    state = checkpoint.get("state_dict") if isinstance(checkpoint, dict) else None
    if not isinstance(state, Mapping):
        raise InputError(f"{where}: not a training checkpoint (it has no state_dict)")
    return checkpoint
