"""How the user started a command, for its usage and advice lines, and the options every run-reading command shares."""

from __future__ import annotations

import argparse
import os
import sys


def program_name(command: str, fallback: str) -> str:
    """How the user started this tool, for usage and advice lines: ``command`` when run as that console
    script, else ``fallback`` (``python train.py``, ``python -m ...``)."""
    return command if os.path.basename(sys.argv[0]) == command else fallback


def add_trust_argument(parser: argparse.ArgumentParser) -> None:
    """``--trust PKG[,PKG]``: the packages of the user's own classes a run's saved config may build
    (``inr.io.trusted``), for the commands that rebuild a run from its files."""
    parser.add_argument(
        "--trust",
        default=None,
        metavar="PKG[,PKG]",
        help="packages of your own classes that the run's config may build (default: only inr, torch, lightning; "
        "also INR_TRUSTED_PACKAGES); grant only packages you wrote or installed yourself",
    )
