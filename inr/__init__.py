"""inr: implicit neural representations with spectral bias made visible and measurable."""
from inr import callbacks, data, encoders, frequency, networks, tasks

__all__ = ["callbacks", "data", "encoders", "frequency", "networks", "tasks"]
__version__ = "0.1.0"
