"""Neural tangent kernels: empirical (three implementations), infinite-width ReLU closed forms, spectra, GD dynamics."""

from inr.ntk.analytic import analytic_kernels, analytic_nngp, analytic_ntk, relu_expectations
from inr.ntk.dynamics import GDPrediction, predict_gd_mse
from inr.ntk.eigen import circulant_spectrum, kernel_eigh, mode_decay, residual_modes, top_eigenvalues
from inr.ntk.empirical import DEFAULT_BLOCK_BYTES, NTKMethod, empirical_ntk
from inr.ntk.ntk_mlp import NTKMLP, NTKLinear
from inr.ntk.structured import MLPStructure, is_elementwise, mlp_features, mlp_structure

__all__ = [
    "empirical_ntk",
    "NTKMethod",
    "DEFAULT_BLOCK_BYTES",
    "analytic_ntk",
    "analytic_nngp",
    "analytic_kernels",
    "relu_expectations",
    "predict_gd_mse",
    "GDPrediction",
    "kernel_eigh",
    "top_eigenvalues",
    "mode_decay",
    "residual_modes",
    "circulant_spectrum",
    "NTKMLP",
    "NTKLinear",
    "mlp_structure",
    "mlp_features",
    "MLPStructure",
    "is_elementwise",
]
