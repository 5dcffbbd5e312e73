"""A model's starting point read from a checkpoint (``INRModule(init_from=...)``): a learned initialisation
(``inr.tasks.meta.MetaLearning``) or any earlier run of the same architecture.

The init is the whole field f(v) = network(encoder(v)): the checkpoint's ``encoder.*`` tensors (a Fourier
encoder's B) and ``network.*`` tensors replace the model's before its first step; nothing else is read (no
optimizer state, no step count: the fit is otherwise an ordinary one). Checkpoints written by this package
record the architecture their weights belong to (``INIT_KEY``: the encoder's class and widths, each layer of the
network); a checkpoint of another architecture is refused in one line (``InputError``), as is one whose tensors
differ in name or shape. A stacked model (``members``) takes a single model's init in every member, or a
stacked checkpoint of as many members member by member.

A Meta-SGD init (``MetaLearning(algorithm="metasgd")``) holds its learned inner rates beside its tensors
(``INNER_RATES_KEY``: the rate α_i of each network tensor, by name) and the count n of inner steps it was
meta-trained to take with them (``INNER_STEPS_KEY``); ``load_init`` reads the field alone, ``inner_rates(path)``
the rates and ``inner_loop(path)`` both (None for an init without them). A fit started from such an init takes
its first n steps as that inner loop did (``inr.tasks.init_steps``).

An init meta-learned to adapt shift modulations only (``MetaLearning(adapt="modulations")``, ``inr.tasks.modulations``)
says so (``INNER_ADAPTS_KEY``: ``modulations``) and holds the rate α_l of each hidden layer's shift, keyed by the bias
it is added to, with n (MAML's one rate in every layer, Meta-SGD's learned ones): ``inner_loop(path).adapts`` is
then ``modulations``, and a fit from it takes its first n steps on those biases alone.

The file is data: it is read with ``torch.load(weights_only=True)`` after its archive entries are sized (a
deflated entry could stand for any size), so a checkpoint can run no code (``inr.io.checkpoint``; the record:
``inr.networks.record``).

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

import math
import sys
from pathlib import Path
from typing import NamedTuple, Optional, Union

import torch
from torch import nn

from inr.errors import InputError

# the reading and the record live below the tasks, where a decoder of learned inits reads them without Lightning;
# their names stay importable from here, the task's own module
from inr.io.checkpoint import INIT_KEY, PARTS, read_checkpoint, read_init
from inr.networks.record import architecture, first_difference, layer_text

__all__ = [
    "INIT_KEY",
    "INNER_RATES_KEY",
    "PARTS",
    "architecture",
    "first_difference",
    "INNER_STEPS_KEY",
    "INNER_ADAPTS_KEY",
    "InnerLoop",
    "inner_loop",
    "inner_rates",
    "recorded_inner_loop",
    "layer_text",
    "load_init",
    "read_init",
]

# the checkpoint entry of a Meta-SGD init's learned inner rates: {network tensor name: α > 0}
INNER_RATES_KEY = "inr_inner_rates"
# beside it, n: the inner SGD steps per outer step those rates were meta-trained for
INNER_STEPS_KEY = "inr_inner_steps"
# what the inner loop adapts, where it is not every tensor: "modulations" (the hidden layers' shifts; absent: "all")
INNER_ADAPTS_KEY = "inr_inner_adapts"


class InnerLoop(NamedTuple):
    """The inner loop an init was meta-trained for: ``steps`` SGD steps θ_i ← θ_i − α_i ∇_i L with α_i = ``rates[i]``
    per tensor, by name: every network tensor (``adapts`` ``all``, Meta-SGD), or the hidden layers' biases, where
    the shift modulations enter (``modulations``; ``inr.tasks.modulations``)."""

    rates: dict[str, float]
    steps: int
    adapts: str = "all"


def recorded_inner_loop(path: Union[str, Path], names: list[str]) -> InnerLoop:
    """The inner loop a Reptile or MAML init was meta-trained with, as its hyper-parameters record it: n =
    ``inner_loop_steps`` SGD steps at α = ``inner_loop_lr`` on every tensor of ``names`` (the network's). Refused in
    one line where the init does not record them (an init of the codec's, written without its run's settings) or
    its inner optimiser was not SGD (Adam's steps carry a state an init does not hold)."""
    hparams = read_checkpoint(path).get("hyper_parameters") or {}
    steps, lr, optimiser = (hparams.get(k) for k in ("inner_loop_steps", "inner_loop_lr", "inner_loop_optimizer"))
    where = f"model.init_inner_loop: the init {path}"
    if (
        isinstance(steps, bool)
        or not isinstance(steps, int)
        or steps < 1
        or isinstance(lr, bool)
        or not isinstance(lr, (int, float))
    ):
        raise InputError(
            f"{where} does not record its inner loop (inner_loop_steps, inner_loop_lr): not a meta-training's checkpoint"
        )
    if not (math.isfinite(lr) and lr > 0):
        raise InputError(f"{where} records an inner rate of {lr!r}, not a number > 0")
    if optimiser not in (None, "sgd"):
        raise InputError(f"{where} was meta-trained with inner {optimiser} steps; its inner loop can be taken for SGD ones only")
    return InnerLoop({name: float(lr) for name in names}, steps)


def inner_rates(path: Union[str, Path]) -> Optional[dict[str, float]]:
    """α_i of each network tensor i that the init was meta-learned to take inner SGD steps with (Meta-SGD:
    θ_i' = θ_i − α_i ∇_i L), by tensor name (``network.`` left off, as ``network.named_parameters()`` names
    them); None when the checkpoint holds none (Reptile, MAML, any other run). A modulations init's rates are its
    shifts', keyed by the hidden-layer bias each shift is added to."""
    return checked_rates(read_checkpoint(path).get(INNER_RATES_KEY), path)


def checked_rates(rates: object, path: Union[str, Path]) -> Optional[dict[str, float]]:
    """A checkpoint's ``INNER_RATES_KEY`` entry as {tensor name: α > 0}, None where there is none."""
    if rates is None:
        return None
    good = isinstance(rates, dict) and all(
        isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
        for k, v in rates.items()
    )
    if not good or not rates:
        raise InputError(f"model.init_from {path}: its {INNER_RATES_KEY} is not a mapping of tensor names to rates > 0")
    return {k: float(v) for k, v in rates.items()}


def inner_adapts(path: Union[str, Path]) -> str:
    """What the init's inner loop adapts: ``all`` (every network tensor; any init that does not say) or
    ``modulations`` (the hidden layers' shifts); anything else is refused in one line."""
    return checked_adapts(read_checkpoint(path), path)


def checked_adapts(checkpoint: dict, path: Union[str, Path]) -> str:
    adapts = checkpoint.get(INNER_ADAPTS_KEY, "all")
    if adapts not in ("all", "modulations"):
        raise InputError(f"model.init_from {path}: its {INNER_ADAPTS_KEY} is {adapts!r}, not all or modulations")
    if adapts != "all" and checkpoint.get(INNER_RATES_KEY) is None:
        raise InputError(
            f"model.init_from {path}: it adapts {adapts} but holds no {INNER_RATES_KEY} (their rates); meta-train the init again"
        )
    return adapts


def inner_loop(path: Union[str, Path]) -> Optional[InnerLoop]:
    """The rates, the inner step count n and what they adapt of a Meta-SGD or modulations init (``InnerLoop``); None
    for an init without rates. An init with rates but no count, or a count that is not an int ≥ 1, is refused in one
    line: the rates were learned for n steps, and another n would be another method."""
    checkpoint = read_checkpoint(path)
    adapts = checked_adapts(checkpoint, path)
    rates = checked_rates(checkpoint.get(INNER_RATES_KEY), path)
    if rates is None:
        return None
    steps = checkpoint.get(INNER_STEPS_KEY)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise InputError(
            f"model.init_from {path}: it holds {INNER_RATES_KEY} but its {INNER_STEPS_KEY} (the inner steps they were learned for) "
            f"is not an int ≥ 1, got {steps!r}; meta-train the init again"
        )
    return InnerLoop(rates, steps, adapts)


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
