"""Callbacks that read a task's grid and render to measure and show what it has learned."""

from inr.callbacks.budget import MonitoringBudget
from inr.callbacks.images import ImageLogger, grid_views
from inr.callbacks.measurements import MeasurementLogger
from inr.callbacks.ntk import NTKCallback
from inr.callbacks.spectral import SpectralBiasCallback
from inr.callbacks.views import ViewLogger

__all__ = [
    "NTKCallback",
    "ImageLogger",
    "grid_views",
    "MeasurementLogger",
    "MonitoringBudget",
    "SpectralBiasCallback",
    "ViewLogger",
]
