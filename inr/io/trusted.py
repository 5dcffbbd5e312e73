"""A run's saved config read as data: only classes of trusted packages are built, nothing beside it is imported.

A training config given on the command line is code by design (LightningCLI imports whatever its
``class_path`` names, so a user can plug in their own modules). A ``config.yaml`` found *beside a checkpoint*
is different: it arrived with a downloaded run directory, and importing what it names would run a ``.py``
shipped next to it. Loading a run for export or inference therefore checks the config first:

- every ``class_path`` and every dotted name must lie in ``TRUSTED_PACKAGES`` (``inr``, ``torch``, ``lightning``);
- no value may name another file (jsonargparse would read a subclass spec from it, past these checks);
- while the model is built, an import of any module whose source lies outside the installed packages and
  the standard library is refused (``refuse_untrusted_imports``), as a second wall behind the first.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inr.errors import InputError

TRUSTED_PACKAGES = ("inr", "torch", "lightning")
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


def check_trusted_config(node: Any, source: str, key: str = "model") -> None:
    """Refuse (``InputError`` naming ``source`` and the key) a config that names a class or callable outside
    ``TRUSTED_PACKAGES`` or refers to another file.

    Example:
        >>> check_trusted_config({"class_path": "inr.tasks.ImageFitting"}, "config.yaml")
        >>> check_trusted_config({"class_path": "payload.Evil"}, "config.yaml")
        Traceback (most recent call last):
        ...
        inr.errors.InputError: config.yaml: model.class_path names payload.Evil, outside the trusted packages (inr, torch, lightning); a run's saved config is read as data and builds only their classes
    """
    if isinstance(node, dict):
        for name, value in node.items():
            where = f"{key}.{name}"
            if name == "class_path" and not (isinstance(value, str) and value.split(".")[0] in TRUSTED_PACKAGES):
                raise InputError(
                    f"{source}: {where} names {value}, outside the trusted packages ({', '.join(TRUSTED_PACKAGES)}); "
                    "a run's saved config is read as data and builds only their classes"
                )
            check_trusted_config(value, source, where)
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            check_trusted_config(value, source, f"{key}[{i}]")
    elif isinstance(node, str):
        text = node.strip()
        if _DOTTED.fullmatch(text) and text.split(".")[0] not in TRUSTED_PACKAGES and _is_module_name(text.split(".")[0]):
            raise InputError(
                f"{source}: {key} names {text}, outside the trusted packages ({', '.join(TRUSTED_PACKAGES)}); "
                "a run's saved config is read as data and builds only their classes"
            )
        if text.lower().endswith(_FILE_SUFFIXES) or (len(text) < 4096 and os.path.sep in text and os.path.exists(text)):
            raise InputError(f"{source}: {key} refers to another file ({text}); a run's saved config must hold its values")


def _trusted_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.add(str(Path(importlib.util.find_spec("inr").origin).parent))  # the package itself, installed or editable
    return [Path(r).resolve() for r in roots]


class _UntrustedImportGuard(importlib.abc.MetaPathFinder):
    """Finds nothing itself; refuses a module that the ordinary finders would load from outside ``roots``."""

    def __init__(self, roots: list[Path], source: str):
        self.roots, self.source = roots, source

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None)
        if spec is None or origin in (None, "built-in", "frozen"):
            return None
        where = Path(origin).resolve()
        if not any(where.is_relative_to(root) for root in self.roots):
            raise InputError(
                f"{self.source}: building its model would import {fullname} from {where}; refused: a run's saved "
                "config may only use installed packages"
            )
        return None  # trusted: the ordinary finders load it


@contextmanager
def refuse_untrusted_imports(source: str) -> Iterator[None]:
    """Within the block, importing a module from outside the installed packages, the standard library and
    ``inr`` raises ``InputError`` naming ``source``."""
    guard = _UntrustedImportGuard(_trusted_roots(), source)
    sys.meta_path.insert(0, guard)
    try:
        yield
    finally:
        sys.meta_path.remove(guard)
