"""Where the files that ship with inr lie: the configs and the sample data, in a source checkout or a wheel.

A source checkout (and an editable install, which points at one) keeps them at the repository root,
``configs/`` and ``data/`` beside the ``inr`` package. A wheel carries the same two folders inside the
package, as ``inr/share/configs`` and ``inr/share/data`` (setup.py maps them there), so an installed
``inr-train --config image.yaml`` finds its config and ``data/astronaut.png`` from any directory.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
INSTALLED_ROOT = PACKAGE_DIR / "share"  # a wheel: the folders setup.py copied into the package
CHECKOUT_ROOT = PACKAGE_DIR.parent  # a source checkout: the repository root


def shipped_root() -> Path:
    """The folder holding ``configs/`` and ``data/``: the wheel's copy when there is one, else the checkout's."""
    return INSTALLED_ROOT if (INSTALLED_ROOT / "configs").is_dir() else CHECKOUT_ROOT


SHIPPED_ROOT = shipped_root()
CONFIG_DIR = SHIPPED_ROOT / "configs"
DATA_DIR = SHIPPED_ROOT / "data"
