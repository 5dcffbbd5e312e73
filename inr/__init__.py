"""inr: implicit neural representations with spectral bias made visible and measurable."""

from inr import callbacks, conv_decoders, data, encoders, experiments, export, networks, ntk, spectral, tasks

__all__ = ["callbacks", "conv_decoders", "data", "encoders", "experiments", "export", "networks", "ntk", "spectral", "tasks"]
__version__ = "0.1.0"
