"""Export of learned fields to other formats: meshes of 3D level sets (``inr.export.mesh``)."""

from __future__ import annotations

import importlib

__all__ = ["extract_mesh", "marching_cubes_mesh", "read_mesh", "write_mesh"]


def __getattr__(name: str):
    # imported on first use, so ``python -m inr.export.mesh`` runs the module once, as __main__ only
    if name in __all__:
        return getattr(importlib.import_module("inr.export.mesh"), name)
    raise AttributeError(f"module 'inr.export' has no attribute {name!r}")
