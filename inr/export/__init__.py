"""Export of learned fields to other formats: meshes of 3D level sets (``inr.export.mesh``: PLY, OBJ, STL, GLB) and
a radiance field's density surface and point cloud (``inr.export.radiance_mesh``)."""

from __future__ import annotations

import importlib

_HOMES = {
    **dict.fromkeys(("extract_mesh", "marching_cubes_mesh", "read_mesh", "write_mesh", "write_points"), "inr.export.mesh"),
    **dict.fromkeys(("radiance_mesh", "radiance_points"), "inr.export.radiance_mesh"),
}
__all__ = list(_HOMES)


def __getattr__(name: str):
    # imported on first use, so ``python -m inr.export.mesh`` runs the module once, as __main__ only
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'inr.export' has no attribute {name!r}")
