"""inr: implicit neural representations with spectral bias made visible and measurable.

The subpackages load on first use (``inr.tasks``, ``inr.data``, ...), so a command imports only what it needs.
"""

import importlib

__all__ = ["callbacks", "conv_decoders", "data", "encoders", "experiments", "export", "networks", "ntk", "spectral", "tasks"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in __all__:
        return importlib.import_module(f"inr.{name}")
    raise AttributeError(f"module 'inr' has no attribute {name!r}")
