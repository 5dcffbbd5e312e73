"""Measurement operators A (y = A x of a field on its grid), each with its adjoint, and the classical
reconstructions that serve as baselines."""

from inr.operators.base import Operator, real_inner
from inr.operators.kspace import KSpaceSampling, centred_dft, centred_idft, gaussian_kspace_mask
from inr.operators.sampling import AdditiveNoise, Downsample, PixelMask
from inr.operators.tomography import ParallelBeamProjection, even_angles

__all__ = [
    "Operator",
    "real_inner",
    "ParallelBeamProjection",
    "even_angles",
    "KSpaceSampling",
    "centred_dft",
    "centred_idft",
    "gaussian_kspace_mask",
    "PixelMask",
    "Downsample",
    "AdditiveNoise",
]


def __getattr__(name: str):
    """``DeepinvOperator`` on first use: it imports deepinv (an optional extra, seconds to import)."""
    if name == "DeepinvOperator":
        try:
            from inr.operators.deepinv_physics import DeepinvOperator
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] != "deepinv":
                raise
            raise ImportError("inr.operators.DeepinvOperator needs deepinv: pip install 'inr[interop]'") from None
        return DeepinvOperator
    raise AttributeError(f"module 'inr.operators' has no attribute {name!r}")
