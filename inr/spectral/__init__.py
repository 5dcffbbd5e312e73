"""Spectra of INR residuals: radial frequency bands of a grid's DFT, per-band relative errors with the DC
term apart (``inr.spectral.bands``), and their figures (``inr.spectral.plots``).

The conv-decoder frequency analysis (transfer functions, gains) lives in ``inr.conv_decoders``.
"""

from inr.spectral.bands import (
    ROUNDING_EPS_FACTOR,
    SPACINGS,
    BandPartition,
    MaxFrequency,
    aliased_energy_fraction,
    band_edges,
    band_energies,
    band_relative_error,
    corner_radius,
    dc_energies,
    dc_relative_error,
    grid_dft,
    grid_frequencies,
    nyquist_radius,
    pooled_relative_error,
    radial_frequency,
    radial_power_spectrum,
    radial_spectra,
    relative_error_from_energies,
    resolve_max_frequency,
    spectral_summary,
    summarise_band_errors,
)

__all__ = [
    "MaxFrequency",
    "SPACINGS",
    "ROUNDING_EPS_FACTOR",
    "grid_dft",
    "grid_frequencies",
    "radial_frequency",
    "nyquist_radius",
    "corner_radius",
    "resolve_max_frequency",
    "band_edges",
    "BandPartition",
    "relative_error_from_energies",
    "pooled_relative_error",
    "band_energies",
    "band_relative_error",
    "dc_energies",
    "dc_relative_error",
    "summarise_band_errors",
    "spectral_summary",
    "aliased_energy_fraction",
    "radial_power_spectrum",
    "radial_spectra",
]
