"""inr: implicit neural representations with spectral bias made visible and measurable."""
from inr import callbacks, data, encoders, experiments, export, frequency, networks, ntk, spectral, tasks

__all__ = ["callbacks", "data", "encoders", "experiments", "export", "frequency", "networks", "ntk", "spectral", "tasks"]
__version__ = "0.1.0"
