"""What a run's saved config may build: each slot takes one kind of class, checked before anything is called.

Building a ``class_path`` calls it with its ``init_args``. A trusted package is not enough to make that safe:
``torch.utils.collect_env.run`` or ``torch.hub.load`` lie in a trusted package and run a command or import a
folder's ``hubconf.py`` when called. So a class path found in a run's ``config.yaml`` or checkpoint must

1. stand in a slot that takes classes (the table below; any other key holds data, never a class path);
2. lie in a trusted or granted package (``inr.io.trusted.check_trusted_config``);
3. in ``inr``, ``torch`` or ``lightning``, name a module where that slot's kind lives — checked from the name,
   before anything is imported;
4. resolve to a class (not a function or any other callable) that subclasses the slot's kind — checked after
   the import, before anything is called.

A dotted name as a plain value (``activation: torch.utils.collect_env.run``) is refused too: an argument
typed as a callable would import and call it. The one slot that takes a class by name, ``task`` (the fitting
task of ``MetaLearning``), is checked as a class path.

| slot (key)                          | kind                                   | its modules in inr, torch, lightning |
|-------------------------------------|----------------------------------------|--------------------------------------|
| model, task                         | ``lightning.LightningModule`` (the loaders then ask for ``INRModule``) | inr.tasks |
| encoder, member_encoders            | ``inr.encoders.Encoder``               | inr.encoders                         |
| network                             | ``torch.nn.Module``                    | inr.networks                         |
| optimizer                           | ``torch.optim.Optimizer``              | torch.optim                          |
| scheduler                           | ``torch.optim.lr_scheduler.LRScheduler`` | torch.optim.lr_scheduler           |
| operator                            | ``inr.operators.Operator``             | inr.operators                        |
| data                                | ``lightning.LightningDataModule``      | inr.data                             |
| callbacks                           | ``lightning.Callback``                 | inr.callbacks, lightning.pytorch.callbacks |
| logger                              | ``lightning.pytorch.loggers.Logger``   | lightning.pytorch.loggers            |
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import lightning as L
import torch
from lightning.pytorch.loggers import Logger
from torch import nn

from inr.encoders.base import Encoder
from inr.errors import InputError
from inr.io.trusted import (
    TRUSTED_PACKAGES,
    Grant,
    announce,
    check_trusted_config,
    is_module_name,
    refuse_untrusted_imports,
    resolve_grants,
)
from inr.operators.base import Operator

# keys of a class path's own mapping; jsonargparse reads any other (``__path__``) as an instruction
CLASS_KEYS = ("class_path", "init_args", "dict_kwargs")


@dataclass(frozen=True)
class Slot:
    """A key that takes a class: the kind it must subclass and the modules of the trusted packages it may come from."""

    noun: str
    kind: type
    modules: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.noun} slot builds only subclasses of {self.kind.__module__}.{self.kind.__qualname__} (from {', '.join(self.modules)})"


def slots() -> dict[str, Slot]:
    """The slots that take classes, by key (module docstring's table)."""
    # a LightningModule of inr.tasks; the loaders then require their own base (INRModule, or the class called)
    task = Slot("a task", L.LightningModule, ("inr.tasks",))
    encoder = Slot("an encoder", Encoder, ("inr.encoders",))
    return {
        "model": task,
        "task": task,
        "encoder": encoder,
        "member_encoders": encoder,
        "network": Slot("a network", nn.Module, ("inr.networks",)),
        "optimizer": Slot("an optimizer", torch.optim.Optimizer, ("torch.optim",)),
        "scheduler": Slot("a scheduler", torch.optim.lr_scheduler.LRScheduler, ("torch.optim.lr_scheduler",)),
        "operator": Slot("an operator", Operator, ("inr.operators",)),
        "data": Slot("a data", L.LightningDataModule, ("inr.data",)),
        "callbacks": Slot("a callback", L.Callback, ("inr.callbacks", "lightning.pytorch.callbacks")),
        "logger": Slot("a logger", Logger, ("lightning.pytorch.loggers",)),
    }


def check_saved_config(
    node: Any,
    source: str,
    key: str,
    trust: Union[str, Iterable[str], None],
    classes: Iterable[str] = (),
    run_dir: Union[str, Path, None] = None,
) -> tuple[Grant, ...]:
    """Every check a run's saved section passes before it is built: the user's grants resolved to their places
    (``resolve_grants``, each announced in one ``note:`` line), no other file named and only trusted or granted
    packages (``check_trusted_config``), and each class of its slot's kind (``check_buildable``). Returns the
    grants, which the build's own ``refuse_untrusted_imports`` takes."""
    classes = frozenset(classes)
    tops = [name.split(".")[0] for name in classes if name.split(".")[0] not in TRUSTED_PACKAGES]
    names = [*([trust] if isinstance(trust, str) else list(trust or ())), *dict.fromkeys(tops)]
    grants = resolve_grants(names, run_dir)
    announce(g for g in grants if g.name not in tops)
    check_trusted_config(node, source, key, trust=[g.name for g in grants], classes=classes)
    check_buildable(node, source, key, grants, classes)
    return grants


def check_buildable(
    node: Any, source: str, key: str = "model", grants: Iterable[Grant] = (), classes: Iterable[str] = ()
) -> None:
    """Refuse (``InputError`` naming ``source`` and the key) a config whose class paths are not each a class of
    its slot's kind (module docstring); ``node`` is the section under ``key``. Imports only modules of the named
    classes, inside ``refuse_untrusted_imports(source, grants)``, and calls nothing it imports. ``classes``:
    exact class paths the calling program has already imported (the kind still applies).

    Example:
        >>> check_buildable({"class_path": "inr.tasks.ImageFitting", "init_args": {
        ...     "optimizer": {"class_path": "torch.optim.Adam", "init_args": {"lr": 0.01}}}}, "config.yaml")
        >>> check_buildable({"class_path": "inr.tasks.ImageFitting", "init_args": {
        ...     "optimizer": {"class_path": "torch.utils.collect_env.run"}}}, "config.yaml")
        Traceback (most recent call last):
        ...
        inr.errors.InputError: config.yaml: model.init_args.optimizer.class_path names torch.utils.collect_env.run; an optimizer slot builds only subclasses of torch.optim.optimizer.Optimizer (from torch.optim): refused before import
    """
    grants = tuple(grants)
    checker = SlotChecker(source, slots(), {g.name for g in grants}, frozenset(classes))
    with refuse_untrusted_imports(source, grants):
        checker.walk(node, key, key)


class SlotChecker:
    """The walk of ``check_buildable``; ``check_class(path, slot, where)`` checks one class path (call it inside
    ``refuse_untrusted_imports``)."""

    def __init__(self, source: str, table: dict[str, Slot], granted: set[str], classes: frozenset[str]):
        self.source, self.table, self.granted, self.classes = source, table, granted, classes

    def walk(self, node: Any, key: str, where: str) -> None:
        """``key``: the slot name ``node`` stands in (list items stand in their list's); ``where``: its path."""
        if isinstance(node, dict):
            if "class_path" in node:
                self.class_path(node, key, where)
                return
            for name, value in node.items():
                self.walk(value, str(name), f"{where}.{name}")
        elif isinstance(node, (list, tuple)):
            for i, value in enumerate(node):
                self.walk(value, key, f"{where}[{i}]")
        elif isinstance(node, str):
            self.value(node, key, where)

    def class_path(self, node: dict, key: str, where: str) -> None:
        stray = [k for k in node if k not in CLASS_KEYS]
        if stray:
            raise InputError(
                f"{self.source}: {where} has {stray[0]!r} beside its class_path; only {', '.join(CLASS_KEYS)} may stand there"
            )
        self.check_class(node["class_path"], key, f"{where}.class_path")
        for part in ("init_args", "dict_kwargs"):
            arguments = node.get(part)
            if arguments is None:
                continue
            if not isinstance(arguments, dict):
                raise InputError(f"{self.source}: {where}.{part} must be a mapping of arguments, got {type(arguments).__name__}")
            for name, value in arguments.items():
                self.walk(value, str(name), f"{where}.{part}.{name}")

    def value(self, text: str, key: str, where: str) -> None:
        if key == "task":  # MetaLearning's fitting task, named as a class
            self.check_class(text, key, where)
            return
        name = text.strip()
        if "." in name and all(part.isidentifier() for part in name.split(".")) and is_module_name(name.split(".")[0]):
            raise InputError(
                f"{self.source}: {where} names {name}; a run's saved config holds data, and a dotted name there "
                "would be imported and called (classes go in the slots that take them, as a class_path)"
            )

    def check_class(self, path: Any, key: str, where: str) -> None:
        slot = self.table.get(key)
        if slot is None:
            raise InputError(
                f"{self.source}: {where} names a class in {key!r}, which holds data; a run's saved config builds "
                f"classes only in {', '.join(sorted(self.table))}"
            )
        if not isinstance(path, str) or "." not in path or not all(p.isidentifier() for p in path.split(".")):
            raise InputError(f"{self.source}: {where} must be a dotted class name, got {path!r}")
        module, _, name = path.rpartition(".")
        top = path.split(".")[0]
        builtin = top in TRUSTED_PACKAGES and path not in self.classes
        if builtin and not any(module == m or module.startswith(m + ".") for m in slot.modules):
            raise InputError(f"{self.source}: {where} names {path}; {slot.describe()}: refused before import")
        if not builtin and top not in self.granted and path not in self.classes:
            raise InputError(f"{self.source}: {where} names {path}, outside the trusted packages and those granted")
        if path in self.classes:
            obj = getattr(sys.modules.get(module), name, None)
        else:
            try:
                obj = getattr(importlib.import_module(module), name)
            except InputError:
                raise
            except (ImportError, AttributeError) as exc:
                raise InputError(
                    f"{self.source}: {where} names {path}, which does not import ({type(exc).__name__}: {exc}; "
                    f"looked in {_where_looked(top)})"
                ) from None
        if not (isinstance(obj, type) and issubclass(obj, slot.kind)):
            what = "a class of another kind" if isinstance(obj, type) else f"a {type(obj).__name__}, not a class"
            raise InputError(f"{self.source}: {where} names {path}, {what}; {slot.describe()}")


def _where_looked(top: str) -> str:
    """Where ``top`` was imported from, or the import path it was looked for in."""
    module = sys.modules.get(top)
    if module is not None and getattr(module, "__file__", None):
        return module.__file__
    return "the import path: " + ", ".join(p or "." for p in sys.path[:6]) + (", …" if len(sys.path) > 6 else "")
