"""``skip_failing_gpu_probe``: on a machine without a CUDA device, stop torch from looking for the NVML library
again at every optimizer step.

Lightning sets ``PYTORCH_NVML_BASED_CUDA_CHECK=1`` when it is imported, so that asking whether CUDA is available
does not initialise CUDA (a process that has initialised CUDA cannot safely fork). With it set,
``torch.cuda.is_available()`` first loads NVML (``ctypes.CDLL("libnvidia-ml.so.1")``) and, where that library
is missing, falls back to ``cudaGetDeviceCount``; the failed load is not remembered, and until CUDA is
initialised the count is not cached. Every ``Adam.step`` asks (its graph-capture check), so each CPU-only
training step pays a failed ``dlopen``: ``benchmarks/gpu_probe.py`` times one Adam step of volume.yaml's
network both ways, and py-spy put the probe at 1.2 % of that config's whole training step on 2 CPU threads.

Where no CUDA device exists the variable is set back to "0": the answer stays "no CUDA", and the fallback that
was taken at every step anyway is taken directly. On a machine with a device nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Optional

import torch

VARIABLE = "PYTORCH_NVML_BASED_CUDA_CHECK"


def skip_failing_gpu_probe(environ: Optional[MutableMapping[str, str]] = None) -> bool:
    """Set ``PYTORCH_NVML_BASED_CUDA_CHECK`` to "0" when it is "1" and torch sees no CUDA device; returns whether
    it did. Counting the devices under "1" never initialises CUDA.

    Example:
        >>> skip_failing_gpu_probe({"PYTORCH_NVML_BASED_CUDA_CHECK": "0"})  # not asked for NVML: nothing to do
        False
    """
    environ = os.environ if environ is None else environ
    if environ.get(VARIABLE) != "1" or not torch.cuda._is_compiled():  # CPU-only builds never probe
        return False
    if torch.cuda.device_count() > 0:
        return False
    environ[VARIABLE] = "0"
    return True
