"""The files ``inr-codec`` writes: checked before any work, written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

from inr.errors import InputError
from inr.io.files import atomic_write

OUTPUT_EXTENSIONS = {"decode": (".png",), "encode": (".inr",)}


def check_output(path: Path, command: str) -> None:
    """Refuse, before any work, an output that cannot be written: a missing or read-only directory, a directory
    in its place, another extension."""
    allowed = OUTPUT_EXTENSIONS[command]
    if path.suffix.lower() not in allowed:
        raise InputError(f"-o {path}: {command} writes {' or '.join(allowed)} files")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"-o {path}: the directory {parent} does not exist")
    if path.is_dir():
        raise InputError(f"-o {path}: is a directory")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"-o {path}: not writable")


def write_bytes(path: Path, data: bytes) -> None:
    """``data`` at ``path``, whole or not at all."""
    try:
        with atomic_write(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise InputError(f"-o {path}: cannot be written ({exc.strerror})") from None
