"""The optional libraries, the extra of pyproject.toml that installs each, and ``require``: the one way to import them.

The core install is what the image task needs (``python train.py --config image.yaml``); every other task's
libraries come with an extra (``pip install 'inr[meshes]'``). Each is imported inside the function that needs it,
through ``require``, so ``import inr`` and the image task run without them and a missing one is one line naming
its extra. ``tests/test_extras.py`` checks this table against pyproject.toml and every import in the package.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

from inr.errors import InputError

# extra -> the import names it provides (pyproject.toml's [project.optional-dependencies] lists their distributions)
EXTRAS: dict[str, tuple[str, ...]] = {
    "video": ("av",),  # MP4/WebM in and out
    "interop": ("deepinv", "nibabel", "h5py", "pydicom"),  # deepinv's physics; NIfTI, fastMRI HDF5, DICOM scans
    "trackers": ("wandb", "mlflow"),  # W&B; MLflow with its web UI
    "meshes": ("trimesh", "igl", "skimage"),  # mesh files, winding numbers and distances, marching cubes
    "phantoms": ("phantominator", "skimage"),  # Shepp–Logan phantoms; filtered back-projection (iradon)
    "photos": ("skimage",),  # scikit-image's bundled photographs (the studies' image sets)
    "codec": ("constriction",),  # the codec's range coder
    "rd": ("bjontegaard", "pillow_heif"),  # BD-rates of rate–distortion curves; the HEVC (HEIF) anchor
}
# import name -> the distribution pip installs it from, where the two differ
DISTRIBUTIONS = {"skimage": "scikit-image", "igl": "libigl", "av": "av", "pillow_heif": "pillow-heif"}


def require(module: str, extra: str, what: Optional[str] = None) -> ModuleType:
    """``module`` imported (a dotted name such as ``skimage.transform`` too), or an ``InputError`` naming ``extra``.

    Only the library's own absence is reported so; an import error inside an installed library propagates.

    Example:
        >>> require("json", extra="codec").dumps([1])
        '[1]'
        >>> require("no_such_library", extra="meshes", what="reading a mesh")
        Traceback (most recent call last):
        ...
        inr.errors.InputError: reading a mesh needs no_such_library: pip install 'inr[meshes]'
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != top:
            raise
        raise InputError(f"{what or module} needs {DISTRIBUTIONS.get(top, top)}: pip install 'inr[{extra}]'") from None
