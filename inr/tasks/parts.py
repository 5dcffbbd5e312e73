"""A task's parts rebuilt from their recorded configs (``class_path`` / ``init_args``), as LightningCLI gives them.

A run trained from the command line records its encoder, network, optimiser and scheduler as configs in the
checkpoint's hyper-parameters; ``INRModule.load_from_checkpoint`` rebuilds them here: the encoder as an object,
the network, optimiser and scheduler as the factories the task takes (a network is built as network(in, out)
once the encoder's width is known; an optimiser as optimizer(params)). The caller checks first that every
class named lies in a trusted package (``inr.io.trusted``).

Example:
    >>> build_part({"class_path": "inr.encoders.GaussianEncoding", "init_args": {"in_dim": 2, "num_features": 4}}).out_dim
    8
    >>> build_part({"class_path": "torch.optim.Adam", "init_args": {"lr": 0.01}}, factory=True).keywords
    {'lr': 0.01}
"""

from __future__ import annotations

import importlib
import inspect
from functools import partial
from typing import Any

from inr.errors import InputError

# the arguments of INRModule that hold parts; the others are plain values
FACTORIES = ("network", "optimizer", "scheduler")
PART_ARGUMENTS = ("encoder", "member_encoders", *FACTORIES)


def init_arguments(cls: type) -> set[str]:
    """The keyword arguments ``cls(...)`` takes: its constructor's, and through ``**kwargs`` those of the base classes
    that receive them, up to the first constructor without ``**kwargs`` (the saved hyper-parameters of a CLI run also
    hold the CLI's own entries, which a constructor refuses).

    Example:
        >>> class Base:
        ...     def __init__(self, a=1, b=2): ...
        >>> class Task(Base):
        ...     def __init__(self, c=3, **kwargs): ...
        >>> sorted(init_arguments(Task))
        ['a', 'b', 'c']
    """
    names: set[str] = set()
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        parameters = inspect.signature(klass.__init__).parameters.values()
        names |= {p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"}
        if not any(p.kind == p.VAR_KEYWORD for p in parameters):
            break
    return names


def is_config(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("class_path"), str)


def import_class(class_path: str) -> type:
    module, _, name = class_path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise InputError(f"{class_path}: no such class") from None


def build_value(value: Any) -> Any:
    """Nested configs inside arguments (a composite encoder's parts) built as objects; other values as they are."""
    if is_config(value):
        return build_part(value)
    if isinstance(value, list):
        return [build_value(v) for v in value]
    if isinstance(value, dict):
        return {k: build_value(v) for k, v in value.items()}
    return value


def build_part(config: Any, factory: bool = False) -> Any:
    """The object of ``config`` (``factory``: a ``functools.partial`` taking the remaining arguments); a list of
    configs gives a list; anything else is returned unchanged (already an object, or None)."""
    if isinstance(config, list):
        return [build_part(c, factory) for c in config]
    if not is_config(config):
        return config
    cls = import_class(config["class_path"])
    args = {k: build_value(v) for k, v in (config.get("init_args") or {}).items()}
    args = {k: tuple(v) if isinstance(v, list) and k == "betas" else v for k, v in args.items()}
    return partial(cls, **args) if factory else cls(**args)


def build_parts(hparams: dict[str, Any]) -> dict[str, Any]:
    """The part arguments of recorded hyper-parameters, built (encoders as objects, the rest as factories)."""
    return {k: build_part(v, factory=k in FACTORIES) for k, v in hparams.items() if k in PART_ARGUMENTS}
