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

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from inr.errors import InputError

TRUSTED_PACKAGES = ("inr", "torch", "lightning")
TRUST_ENV = "INR_TRUSTED_PACKAGES"
_PACKAGE = re.compile(r"[A-Za-z_]\w*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")
_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".py", ".jsonnet")


def is_module_name(top: str) -> bool:
    """Whether ``top`` names an importable top-level module (found on sys.path; nothing is imported)."""
    if top in sys.modules:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def granted_packages(trust: Union[str, Iterable[str], None] = None) -> tuple[str, ...]:
    """The names the user grants: ``trust`` (names or paths, or one comma-separated string, from ``--trust``)
    and ``$INR_TRUSTED_PACKAGES``; a path (``path/to/mylab``, ``mylab.py``) grants the module it holds, by its
    name. Refuses (``InputError``) an entry that is neither a top-level package name nor such a path.

    Example:
        >>> granted_packages("examples, mylab")
        ('examples', 'mylab')
        >>> granted_packages(["a.b"])
        Traceback (most recent call last):
        ...
        inr.errors.InputError: --trust a.b: name top-level packages (mylab, examples) or their paths (path/to/mylab), comma-separated
    """
    return tuple(dict.fromkeys(name for _, name, _ in _granted_entries(trust)))


def _granted_entries(trust: Union[str, Iterable[str], None]) -> list[tuple[str, str, Optional[Path]]]:
    """(source, name, explicit path or None) of every grant, in order."""
    given = [trust] if isinstance(trust, str) else list(trust or ())
    entries: list[tuple[str, str, Optional[Path]]] = []
    for source, text in [("--trust", t) for t in given] + [(TRUST_ENV, os.environ.get(TRUST_ENV, ""))]:
        for item in (n.strip() for n in str(text).split(",")):
            if not item:
                continue
            if _PACKAGE.fullmatch(item):
                entries.append((source, item, None))
                continue
            path = Path(item).expanduser()
            name = path.stem if path.suffix == ".py" else path.name
            if ("/" in item or item.endswith(".py")) and _PACKAGE.fullmatch(name) and path.exists():
                entries.append((source, name, path.resolve()))
                continue
            raise InputError(
                f"{source} {item}: name top-level packages (mylab, examples) or their paths (path/to/mylab), comma-separated"
            )
    return entries


@dataclass(frozen=True)
class Grant:
    """A granted module and the one place it is imported from: ``origin`` (its ``__init__.py`` or ``.py``)
    found under ``entry`` (the folder it is imported from)."""

    name: str
    origin: Path
    entry: Path

    def holds(self, path: Path) -> bool:
        """Whether ``path`` is this module's file or lies in its package."""
        home = self.origin.parent if self.origin.name == "__init__.py" else self.origin
        return path == self.origin or path.is_relative_to(home)


def _found_in(name: str, entry: Path) -> Optional[Path]:
    """The file ``import name`` would load from the folder ``entry`` (nothing is imported), or None."""
    try:
        spec = importlib.machinery.PathFinder.find_spec(name, [str(entry)])
    except (ImportError, ValueError, OSError):
        return None
    origin = getattr(spec, "origin", None)
    return Path(origin).resolve() if origin not in (None, "built-in", "frozen", "namespace") else None


def _search_entries() -> list[Path]:
    """The folders a name is looked up in: ``sys.path`` in order (``''`` is the working directory), then the
    working directory for a console script, whose ``sys.path`` lacks it, so every entry point finds the same."""
    entries = []
    for item in [*sys.path, ""]:
        if not isinstance(item, str):
            continue
        folder = Path(item or os.getcwd()).resolve()
        if folder.is_dir() and folder not in entries:
            entries.append(folder)
    return entries


def resolve_grants(trust: Union[str, Iterable[str], None] = None, run_dir: Union[str, Path, None] = None) -> tuple[Grant, ...]:
    """Each granted name resolved once to the file it will be imported from, refusing a place a downloaded run
    controls. A name is looked up as ``import`` would (``sys.path``, then the working directory); refused when
    the module found lies inside ``run_dir`` (the run being loaded), or in the working directory while the run
    lies there and another module of that name exists elsewhere (a run's folder shadowing the user's own). A
    path (``--trust path/to/mylab``) names the place itself. A module the program has already imported is
    granted where it was imported from.

    Example:
        >>> [(g.name, g.origin.name) for g in resolve_grants("json")]
        [('json', '__init__.py')]
    """
    run = Path(run_dir).resolve() if run_dir is not None else None
    cwd = Path(os.getcwd()).resolve()
    grants: dict[str, Grant] = {}
    for source, name, path in _granted_entries(trust):
        if name in grants:
            continue
        if path is not None:
            entry = path.parent
            origin = _found_in(name, entry)
            if origin is None:
                raise InputError(f"{source} {path}: holds no importable module {name} (a folder with __init__.py, or {name}.py)")
        elif name in sys.modules and getattr(sys.modules[name], "__file__", None):
            origin = Path(sys.modules[name].__file__).resolve()
            entry = origin.parent.parent if origin.name == "__init__.py" else origin.parent
        else:
            found = [(entry, origin) for entry in _search_entries() if (origin := _found_in(name, entry)) is not None]
            if not found and source == TRUST_ENV:
                continue  # a standing grant of the environment names what this program may never need
            if not found:
                where = ", ".join(str(e) for e in _search_entries())
                raise InputError(
                    f"{source} {name}: no module {name} in the import path or the working directory ({where}); "
                    f"give its path: --trust path/to/{name}"
                )
            entry, origin = found[0]
            if run is not None and (origin.is_relative_to(run) or (entry == cwd and cwd.is_relative_to(run))):
                raise InputError(
                    f"{source} {name}: the {name} found first is {origin}, inside the run directory being loaded "
                    f"({run}); a run's own files are never trusted: give your module's path, --trust path/to/{name}"
                )
            others = [str(o) for _, o in found[1:] if o != origin]
            if run is not None and entry == cwd and run.is_relative_to(cwd) and others:
                raise InputError(
                    f"{source} {name}: the working directory ({cwd}), which holds the run being loaded, has a {name} "
                    f"({origin}) that shadows {others[0]}; give the one you mean by its path, --trust path/to/{name}"
                )
        if run is not None and path is None and origin.is_relative_to(run):
            raise InputError(f"{source} {name}: imported from {origin}, inside the run directory being loaded ({run})")
        grants[name] = Grant(name, origin, entry)
    return tuple(grants.values())


def run_directory(checkpoint: Union[str, Path]) -> Path:
    """The run directory a checkpoint belongs to: two folders up from ``<run>/checkpoints/x.ckpt``, else its folder."""
    folder = Path(checkpoint).resolve().parent
    return folder.parent if folder.name == "checkpoints" else folder


def announce(grants: Iterable[Grant]) -> None:
    """One ``note:`` line per grant on stderr: what will be trusted, and from where."""
    for grant in grants:
        print(f"note: --trust {grant.name}: {grant.origin}", file=sys.stderr)


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
        if _DOTTED.fullmatch(text) and top not in packages and text not in classes and is_module_name(top):
            raise _refusal(source, key, text, packages)
        if text.lower().endswith(_FILE_SUFFIXES) or (len(text) < 4096 and os.path.sep in text and os.path.exists(text)):
            raise InputError(f"{source}: {key} refers to another file ({text}); a run's saved config must hold its values")


@functools.lru_cache(maxsize=1)
def _trusted_roots() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.add(str(Path(importlib.util.find_spec("inr").origin).parent))  # the package itself, installed or editable
    return tuple(Path(r).resolve() for r in roots)


class _UntrustedImportGuard(importlib.abc.MetaPathFinder):
    """Refuses a module that the ordinary finders would load from outside ``roots``; a granted module is found
    at its grant's place only (``Grant.entry``), whatever ``sys.path`` holds, and its submodules only inside it."""

    def __init__(self, roots: tuple[Path, ...], source: str, grants: tuple[Grant, ...] = ()):
        self.roots, self.source = roots, source
        self.grants = {grant.name: grant for grant in grants}

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        grant = self.grants.get(top)
        if grant is not None and fullname == top:
            return importlib.machinery.PathFinder.find_spec(fullname, [str(grant.entry)])
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None)
        if spec is None or origin in (None, "built-in", "frozen"):
            return None
        where = Path(origin).resolve()
        if grant is not None:
            if not grant.holds(where):
                raise InputError(
                    f"{self.source}: {fullname} would be imported from {where}, outside {top} as granted ({grant.origin})"
                )
            return None
        if not any(where.is_relative_to(root) for root in self.roots):
            raise InputError(
                f"{self.source}: building its model would import {fullname} from {where}; refused: a run's saved "
                f"config may only use installed packages (if this run is your own, grant its package: --trust {top} "
                f"or {TRUST_ENV}={top})"
            )
        return None  # trusted: the ordinary finders load it


@contextmanager
def refuse_untrusted_imports(source: str, grants: Iterable[Grant] = ()) -> Iterator[None]:
    """Within the block, importing a module from outside the installed packages, the standard library and ``inr``
    raises ``InputError`` naming ``source``; a granted module (``resolve_grants``) imports from its own place only."""
    guard = _UntrustedImportGuard(_trusted_roots(), source, tuple(grants))
    sys.meta_path.insert(0, guard)
    try:
        yield
    finally:
        sys.meta_path.remove(guard)
