"""A task's parts rebuilt from their recorded configs (``class_path`` / ``init_args``), as LightningCLI gives them.

A run trained from the command line records its encoder, network, optimiser and scheduler as configs in the
checkpoint's hyper-parameters; ``INRModule.load_from_checkpoint`` rebuilds them here: the encoder as an object,
the network, optimiser and scheduler as the factories the task takes (a network is built as network(in, out)
once the encoder's width is known; an optimiser as optimizer(params)). The caller checks first that every
class named lies in a trusted package and is a class of its slot's kind (``inr.tasks.buildable``); building
checks the kind again before each call.

Example:
    >>> build_part({"class_path": "inr.encoders.GaussianEncoding", "init_args": {"in_dim": 2, "num_features": 4}}, key="encoder").out_dim
    8
    >>> build_part({"class_path": "torch.optim.Adam", "init_args": {"lr": 0.01}}, factory=True, key="optimizer").keywords
    {'lr': 0.01}
    >>> build_part({"class_path": "torch.utils.collect_env.run"}, factory=True, key="optimizer")
    Traceback (most recent call last):
    ...
    inr.errors.InputError: torch.utils.collect_env.run: a function, not a class
"""

from __future__ import annotations

import importlib
import inspect
from functools import partial
from typing import Any, Optional

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


def import_class(class_path: str, kind: Optional[type] = None) -> type:
    """The class ``class_path`` names; refused (``InputError``) unless it is a class (a subclass of ``kind``, when
    given): a function or any other callable is never returned, so never called."""
    module, _, name = class_path.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        raise InputError(f"{class_path}: no such class") from None
    if not isinstance(obj, type):
        raise InputError(f"{class_path}: a {type(obj).__name__}, not a class")
    if kind is not None and not issubclass(obj, kind):
        raise InputError(f"{class_path}: not a {kind.__module__}.{kind.__qualname__}")
    return obj


def build_value(value: Any, key: str = "") -> Any:
    """Nested configs inside arguments (an affine or composite encoder's parts) built as objects of their slot
    (``key``); other values as they are."""
    if is_config(value):
        return build_part(value, key=key)
    if isinstance(value, list):
        return [build_value(v, key) for v in value]
    if isinstance(value, dict):
        return {k: build_value(v, k) for k, v in value.items()}
    return value


def build_part(config: Any, factory: bool = False, key: str = "") -> Any:
    """The object of ``config`` (``factory``: a ``functools.partial`` taking the remaining arguments), a class of
    the kind of the slot ``key`` (``inr.tasks.buildable``; a key that takes no class refuses it); a list of
    configs gives a list; anything else is returned unchanged (already an object, or None)."""
    if isinstance(config, list):
        return [build_part(c, factory, key) for c in config]
    if not is_config(config):
        return config
    from inr.tasks.buildable import slots  # below the tasks: it names the task's base class

    slot = slots().get(key)
    if slot is None:
        raise InputError(f"{config['class_path']}: {key or 'this argument'} takes no class")
    cls = import_class(config["class_path"], slot.kind)
    args = {k: build_value(v, k) for k, v in (config.get("init_args") or {}).items()}
    args = {k: tuple(v) if isinstance(v, list) and k == "betas" else v for k, v in args.items()}
    return partial(cls, **args) if factory else cls(**args)


def build_parts(hparams: dict[str, Any]) -> dict[str, Any]:
    """The part arguments of recorded hyper-parameters, built (encoders as objects, the rest as factories)."""
    return {k: build_part(v, factory=k in FACTORIES, key=k) for k, v in hparams.items() if k in PART_ARGUMENTS}
