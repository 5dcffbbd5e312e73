"""Where data files are looked for: as given, then relative to the project root (where ``data/`` lies)."""
from __future__ import annotations

from pathlib import Path
from typing import Union

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def resolve_data_path(path: Union[str, Path]) -> Path:
    """``path`` if it exists (or is absolute), else ``PROJECT_ROOT / path`` when that exists, else ``path``
    unchanged (so the reader reports it as missing), letting configs say ``data/astronaut.png`` from any
    working directory."""
    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    candidate = PROJECT_ROOT / path
    return candidate if candidate.exists() else path
