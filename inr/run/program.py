"""How the user started a command, for its usage and advice lines."""

from __future__ import annotations

import os
import sys


def program_name(command: str, fallback: str) -> str:
    """How the user started this tool, for usage and advice lines: ``command`` when run as that console
    script, else ``fallback`` (``python train.py``, ``python -m ...``)."""
    return command if os.path.basename(sys.argv[0]) == command else fallback
