"""A model's starting point read from a checkpoint (``INRModule(init_from=...)``): a learned initialisation
(``inr.tasks.meta.MetaLearning``) or any earlier run of the same architecture.

The init is the whole field f(v) = network(encoder(v)): the checkpoint's ``encoder.*`` tensors (a Fourier
encoder's B) and ``network.*`` tensors replace the model's before its first step; nothing else is read (no
optimizer state, no step count: the fit is otherwise an ordinary one). Checkpoints written by this package
record the architecture their weights belong to (``INIT_KEY``: the encoder's class and widths, each layer of the
network); a checkpoint of another architecture is refused in one line (``InputError``), as is one whose tensors
differ in name or shape. A stacked model (``members``) takes a single model's init in every member, or a
stacked checkpoint of as many members member by member.

The file is data: it is read with ``torch.load(weights_only=True)`` after its archive entries are sized (a
deflated entry could stand for any size), so a checkpoint can run no code.

Example:
    >>> import tempfile, pathlib
    >>> from inr.tasks import SignalFitting
    >>> a, b = SignalFitting(), SignalFitting()
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.ckpt"
    >>> torch.save({"state_dict": a.state_dict(), INIT_KEY: architecture(a)}, path)
    >>> load_init(b, path)
    >>> bool(torch.equal(a.network[0].weight, b.network[0].weight))
    True
"""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

import torch
from torch import Tensor, nn

from inr.errors import InputError, check_memory
from inr.networks.stacked import StackedLinear

# the checkpoint entry that names the architecture of its weights (``architecture``)
INIT_KEY = "inr_architecture"
# the parts of a task whose tensors make its field
PARTS = ("encoder.", "network.")
# torch.save stores a checkpoint's entries uncompressed: their sizes add up to the file's, less than this more
ZIP_SLACK = 1 << 20


def layer_text(layer: nn.Module) -> str:
    """One layer as the architecture records it; a stacked linear layer as the single layer of each member.

    Example:
        >>> layer_text(nn.Linear(4, 3)), layer_text(nn.ReLU())
        ('Linear(4, 3, bias=True)', 'ReLU()')
    """
    if isinstance(layer, (nn.Linear, StackedLinear)):
        return f"Linear({layer.in_features}, {layer.out_features}, bias={layer.bias is not None})"
    return repr(layer)


def architecture(task: nn.Module) -> dict[str, Any]:
    """What a task's field is made of, independently of its weights and of stacking: the encoder's class and
    widths, and each layer of its network (one entry for a network that is not a sequence of layers)."""
    encoder = task.stack.encoders[0] if task.stack is not None else task.encoder
    network = task.network
    layers = [layer_text(layer) for layer in network] if isinstance(network, nn.Sequential) else [repr(network)]
    return {"encoder": f"{type(encoder).__name__}({encoder.in_dim} -> {encoder.out_dim})", "network": layers}


def read_init(path: Union[str, Path]) -> tuple[dict[str, Tensor], Any]:
    """The field's tensors of a checkpoint (``encoder.*``, ``network.*``) and its recorded architecture (None
    when it records none); ``InputError`` with one line for a missing, unreadable or foreign file."""
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
    tensors = {k: v for k, v in state.items() if k.startswith(PARTS) and isinstance(v, Tensor)}
    if not any(k.startswith("network.") for k in tensors):
        raise InputError(f"{where}: it holds no network weights (network.*)")
    return tensors, checkpoint.get(INIT_KEY)


def first_difference(recorded: Any, here: Mapping[str, Any]) -> str:
    """The first way a recorded architecture differs from the model's, as a phrase ('' when they agree)."""
    if not isinstance(recorded, Mapping):
        return "its recorded architecture is not readable"
    if recorded.get("encoder") != here["encoder"]:
        return f"its encoder is {recorded.get('encoder')}, the model's {here['encoder']}"
    theirs, ours = list(recorded.get("network") or []), here["network"]
    for i, (a, b) in enumerate(zip(theirs, ours)):
        if a != b:
            return f"network layer {i} is {a} there and {b} here"
    if len(theirs) != len(ours):
        return f"its network has {len(theirs)} layers, the model's {len(ours)}"
    return ""


def load_init(task: nn.Module, path: Union[str, Path]) -> None:
    """Replace the task's encoder and network tensors by the checkpoint's (see the module docstring)."""
    where = f"model.init_from {path}"
    tensors, recorded = read_init(path)
    if recorded is not None:
        different = first_difference(recorded, architecture(task))
        if different:
            raise InputError(f"{where}: a checkpoint of another architecture ({different}); give the model it was trained with")
    own = {k: v for k, v in task.state_dict().items() if k.startswith(PARTS)}
    missing, extra = sorted(set(own) - set(tensors)), sorted(set(tensors) - set(own))
    if missing or extra:
        what = f"{missing[0]} is missing there" if missing else f"{extra[0]} is not in the model"
        raise InputError(f"{where}: a checkpoint of another architecture ({what})")
    members = task.stack.count if task.stack is not None else None
    values = {}
    for key, target in own.items():
        value = tensors[key]
        if value.shape == target.shape:
            values[key] = value
        elif members is not None and (members, *value.shape) == tuple(target.shape):
            values[key] = value.expand_as(target)  # a single model's init in every member
        else:
            stacked = members is None and value.ndim == target.ndim + 1 and tuple(value.shape[1:]) == tuple(target.shape)
            hint = "; it holds stacked members: export one (python -m inr.run.export_member)" if stacked else ""
            raise InputError(
                f"{where}: a checkpoint of another architecture ({key} is {tuple(value.shape)} there and "
                f"{tuple(target.shape)} here){hint}"
            )
    changed = [k for k in own if k.startswith("encoder.") and not torch.equal(values[k].to(own[k].dtype), own[k].cpu())]
    with torch.no_grad():
        for name, tensor in [*task.named_parameters(), *task.named_buffers()]:
            if name in values:
                tensor.copy_(values[name])
    task.forget_encoding()
    if changed:  # the init is the whole field: its encoder comes with it
        print(
            f"note: {where}: the encoder's {', '.join(k[len('encoder.') :] for k in changed)} taken from the checkpoint",
            file=sys.stderr,
        )
