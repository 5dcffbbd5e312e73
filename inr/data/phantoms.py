"""Randomised Shepp–Logan phantoms, the test objects of the paper's CT and MRI experiments."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from inr.extras import require

# Tancik et al. 2020, 2d_CT.ipynb / 3d_MRI.ipynb ("Shepp Data Gen"): every ellipse parameter of the
# modified Shepp–Logan table is perturbed by N(0, 1)/20, the phantom is clipped to [0, 1], and 3D phantoms
# are cut to z ∈ [−0.25, 0.25] of the ellipsoids' extent.
PERTURBATION_STD = 1.0 / 20.0
Z_LIMITS_3D = (-0.25, 0.25)


def shepp_logan_phantom(shape: Sequence[int], seed: int = 0, perturbation: float = PERTURBATION_STD) -> Tensor:
    """A modified Shepp–Logan phantom on a 2D or 3D grid, its ellipse table E + N(0, perturbation²) drawn
    with ``seed`` (``perturbation=0``: the textbook phantom), clipped to [0, 1]; float32 (*shape).

    Example:
        >>> p = shepp_logan_phantom((32, 32), seed=0)
        >>> tuple(p.shape), float(p.min()) >= 0.0, float(p.max()) <= 1.0
        ((32, 32), True, True)
    """
    phantominator = require("phantominator", extra="phantoms", what="Shepp–Logan phantoms")
    ct_modified_shepp_logan_params_2d = phantominator.ct_modified_shepp_logan_params_2d
    ct_modified_shepp_logan_params_3d = phantominator.ct_modified_shepp_logan_params_3d
    ct_shepp_logan = phantominator.ct_shepp_logan

    shape = tuple(int(s) for s in shape)
    if len(shape) not in (2, 3) or min(shape) < 2:
        raise ValueError(f"shepp_logan_phantom: a 2D or 3D shape with sides ≥ 2 is needed, got {shape}")
    table = np.array(ct_modified_shepp_logan_params_2d() if len(shape) == 2 else ct_modified_shepp_logan_params_3d())
    rng = np.random.default_rng(seed)
    table = table + rng.normal(size=table.shape) * perturbation
    extra = {} if len(shape) == 2 else {"zlims": Z_LIMITS_3D}
    phantom = ct_shepp_logan(shape, E=table, **extra)
    return torch.from_numpy(np.clip(phantom, 0.0, 1.0).astype(np.float32))
