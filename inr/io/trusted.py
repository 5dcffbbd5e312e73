"""A run's saved config read as data: only classes of trusted packages are built, nothing beside it is imported.

A training config given on the command line is code by design (LightningCLI imports whatever its
``class_path`` names, so a user can plug in their own modules). A ``config.yaml`` found *beside a checkpoint*
is different: it arrived with a downloaded run directory, and importing what it names would run a ``.py``
shipped next to it. Loading a run for export or inference therefore checks the config first:

- every ``class_path`` and every dotted name must lie in a trusted package: ``TRUSTED_PACKAGES`` (``inr``,
  ``torch``, ``lightning``) and those the user grants;
- no value may name another file (jsonargparse would read a subclass spec from it, past these checks);
- while the model is built, an import of any module whose source lies outside the installed packages, the
  standard library and the granted packages is refused (``refuse_untrusted_imports``), as a second wall.

A run built from the user's own classes (``examples.sdf_eikonal.SDFFitting``, ``mylab.MyEncoder``) reloads
once the user grants their package knowingly — never by default, since the run's files cannot say who wrote
them:

- the commands take ``--trust examples,mylab``; every process reads ``INR_TRUSTED_PACKAGES=examples,mylab``;
- in Python, ``load_from_checkpoint(..., trust=["mylab"])``; and a class the calling script has already
  imported counts as trusted by that exact name (``trusted_imported_classes``): the caller chose to run it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Union

from inr.errors import InputError

TRUSTED_PACKAGES = ("inr", "torch", "lightning")
TRUST_ENV = "INR_TRUSTED_PACKAGES"
_PACKAGE = re.compile(r"[A-Za-z_]\w*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")
_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".py", ".jsonnet")


def _is_module_name(top: str) -> bool:
    """Whether ``top`` names an importable top-level module (found on sys.path; nothing is imported)."""
    if top in sys.modules:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def granted_packages(trust: Union[str, Iterable[str], None] = None) -> tuple[str, ...]:
    """The packages the user grants: ``trust`` (names, or one comma-separated string, from ``--trust``) and
    ``$INR_TRUSTED_PACKAGES``; refuses (``InputError``) a name that is not a top-level package name.

    Example:
        >>> granted_packages("examples, mylab")
        ('examples', 'mylab')
        >>> granted_packages(["a.b"])
        Traceback (most recent call last):
        ...
        inr.errors.InputError: --trust a.b: name top-level packages (mylab, examples), comma-separated
    """
    given = [trust] if isinstance(trust, str) else list(trust or ())
    names: list[str] = []
    for source, text in [("--trust", t) for t in given] + [(TRUST_ENV, os.environ.get(TRUST_ENV, ""))]:
        for name in (n.strip() for n in str(text).split(",")):
            if not name:
                continue
            if not _PACKAGE.fullmatch(name):
                raise InputError(f"{source} {name}: name top-level packages (mylab, examples), comma-separated")
            if name not in names:
                names.append(name)
    return tuple(names)


def trusted_imported_classes(node: Any) -> frozenset[str]:
    """The ``class_path`` values in ``node`` that name a class the running program has already imported:
    an ``nn.Module``, optimiser, scheduler or Lightning module (nothing else: a function or ``subprocess.Popen``
    already in memory is still refused). Nothing is imported to find out."""
    import lightning as L
    import torch

    kinds = (torch.nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler, L.LightningDataModule)
    found = set()
    for value in _class_paths(node):
        module_name, _, name = value.rpartition(".")
        obj = getattr(sys.modules.get(module_name), name, None)
        if isinstance(obj, type) and issubclass(obj, kinds):
            found.add(value)
    return frozenset(found)


def _class_paths(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for name, value in node.items():
            if name == "class_path" and isinstance(value, str):
                yield value
            else:
                yield from _class_paths(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _class_paths(value)


def _refusal(source: str, where: str, name: str, packages: tuple[str, ...]) -> InputError:
    top = name.split(".")[0]
    return InputError(
        f"{source}: {where} names {name}, outside the trusted packages ({', '.join(packages)}); a run's saved "
        f"config is read as data and builds only their classes (if this run is your own, grant its package: "
        f"--trust {top} or {TRUST_ENV}={top})"
    )


def check_trusted_config(
    node: Any,
    source: str,
    key: str = "model",
    trust: Union[str, Iterable[str], None] = None,
    classes: Iterable[str] = (),
) -> None:
    """Refuse (``InputError`` naming ``source`` and the key) a config that names a class or callable outside the
    trusted packages (``TRUSTED_PACKAGES``, ``trust`` and ``$INR_TRUSTED_PACKAGES``; ``classes``: exact class
    paths also allowed) or refers to another file.

    Example:
        >>> check_trusted_config({"class_path": "inr.tasks.ImageFitting"}, "config.yaml")
        >>> check_trusted_config({"class_path": "payload.Evil"}, "config.yaml")
        Traceback (most recent call last):
        ...
        inr.errors.InputError: config.yaml: model.class_path names payload.Evil, outside the trusted packages (inr, torch, lightning); a run's saved config is read as data and builds only their classes (if this run is your own, grant its package: --trust payload or INR_TRUSTED_PACKAGES=payload)
        >>> check_trusted_config({"class_path": "payload.Evil"}, "config.yaml", trust="payload")
    """
    packages = TRUSTED_PACKAGES + tuple(p for p in granted_packages(trust) if p not in TRUSTED_PACKAGES)
    _check(node, source, key, packages, frozenset(classes))


def _check(node: Any, source: str, key: str, packages: tuple[str, ...], classes: frozenset[str]) -> None:
    if isinstance(node, dict):
        for name, value in node.items():
            where = f"{key}.{name}"
            if name == "class_path":
                if not isinstance(value, str):
                    raise InputError(f"{source}: {where} must be a dotted class name, got {type(value).__name__}")
                if value.split(".")[0] not in packages and value not in classes:
                    raise _refusal(source, where, value, packages)
            _check(value, source, where, packages, classes)
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            _check(value, source, f"{key}[{i}]", packages, classes)
    elif isinstance(node, str):
        text = node.strip()
        top = text.split(".")[0]
        if _DOTTED.fullmatch(text) and top not in packages and text not in classes and _is_module_name(top):
            raise _refusal(source, key, text, packages)
        if text.lower().endswith(_FILE_SUFFIXES) or (len(text) < 4096 and os.path.sep in text and os.path.exists(text)):
            raise InputError(f"{source}: {key} refers to another file ({text}); a run's saved config must hold its values")


def _trusted_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.add(str(Path(importlib.util.find_spec("inr").origin).parent))  # the package itself, installed or editable
    return [Path(r).resolve() for r in roots]


class _UntrustedImportGuard(importlib.abc.MetaPathFinder):
    """Finds nothing itself; refuses a module that the ordinary finders would load from outside ``roots``,
    unless its top-level package is one the user granted."""

    def __init__(self, roots: list[Path], source: str, granted: tuple[str, ...] = ()):
        self.roots, self.source, self.granted = roots, source, granted

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.granted:
            return None  # the user's own package, granted knowingly: the ordinary finders load it
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None)
        if spec is None or origin in (None, "built-in", "frozen"):
            return None
        where = Path(origin).resolve()
        if not any(where.is_relative_to(root) for root in self.roots):
            top = fullname.split(".")[0]
            raise InputError(
                f"{self.source}: building its model would import {fullname} from {where}; refused: a run's saved "
                f"config may only use installed packages (if this run is your own, grant its package: --trust {top} "
                f"or {TRUST_ENV}={top})"
            )
        return None  # trusted: the ordinary finders load it


@contextmanager
def refuse_untrusted_imports(source: str, trust: Union[str, Iterable[str], None] = None) -> Iterator[None]:
    """Within the block, importing a module from outside the installed packages, the standard library, ``inr``
    and the granted packages (``trust``, ``$INR_TRUSTED_PACKAGES``) raises ``InputError`` naming ``source``."""
    guard = _UntrustedImportGuard(_trusted_roots(), source, granted_packages(trust))
    sys.meta_path.insert(0, guard)
    try:
        yield
    finally:
        sys.meta_path.remove(guard)
