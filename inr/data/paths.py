"""Where data files are looked for: as given, then relative to the folder that ships ``data/`` (the
repository root of a checkout, or its copy inside an installed package: ``inr.resources``)."""

from __future__ import annotations

from pathlib import Path
from typing import Union

from inr.errors import InputError
from inr.resources import SHIPPED_ROOT


def resolve_data_path(path: Union[str, Path]) -> Path:
    """``path`` if it exists (or is absolute), else ``SHIPPED_ROOT / path`` when that exists, else ``path``
    unchanged (so the reader reports it as missing), letting configs say ``data/astronaut.png`` from any
    working directory, in a checkout or an installed package."""
    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    candidate = SHIPPED_ROOT / path
    return candidate if candidate.exists() else path


def check_file(path: Path, extensions: tuple[str, ...], kind: str = "", hint: str = "") -> None:
    """Refuse, with one line naming ``path``, a directory, a file of another extension, a missing one or an empty one.

    ``kind`` names the file type in the message ("image", "audio"); ``hint`` replaces the default list of
    accepted extensions. A directory is called one, whatever its name.
    """
    if path.is_dir():
        raise InputError(f"{path}: a directory, not {f'a {kind} file' if kind else 'a file'} ({', '.join(extensions)})")
    if path.suffix.lower() not in extensions:
        accepted = hint or f"use one of {', '.join(extensions)}"
        label = f"{kind} extension" if kind else "extension"
        raise InputError(f"{path}: unsupported {label} {path.suffix!r}; {accepted}")
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: file is empty")
