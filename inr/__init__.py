"""inr: implicit neural representations with spectral bias made visible and measurable.

The subpackages load on first use (``inr.tasks``, ``inr.data``, ...), so a command imports only what it needs.
``inr.fit(signal_or_path, method="gaussian", steps=300)`` fits a signal, image or volume in one call and returns
the trained model (``inr.methods.fitting``).
"""

import importlib

__all__ = [
    "callbacks",
    "conv_decoders",
    "data",
    "encoders",
    "experiments",
    "export",
    "fit",
    "networks",
    "ntk",
    "spectral",
    "tasks",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "fit":  # on first use: the registry, the tasks and Lightning load only then
        from inr.methods.fitting import fit

        return fit
    if name in __all__:
        return importlib.import_module(f"inr.{name}")
    raise AttributeError(f"module 'inr' has no attribute {name!r}")
