"""A task's optimizer, built by its configured factory with the multi-tensor implementation torch has for the
device: ``fused`` on CUDA (one kernel for every parameter), ``foreach`` on the CPU.

Torch's own default runs Adam parameter by parameter on the CPU (``foreach`` only for CUDA tensors). The
``foreach`` form computes the same values bit for bit (tests/tasks/test_optimizers.py) in fewer dispatches.
``fused`` also exists on the CPU, but it rounds differently, so every documented CPU figure would move in its
last digits; a config that wants it says ``fused: true`` in the optimizer's ``init_args`` (a setting the config
makes is kept as it is).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Union

import torch
from torch import nn

IMPLEMENTATIONS = ("foreach", "fused")


def implementation(device: torch.device) -> dict[str, bool]:
    """The keyword that selects the multi-tensor Adam/SGD implementation for ``device``.

    Example:
        >>> implementation(torch.device("cpu")), implementation(torch.device("cuda", 0))
        ({'foreach': True}, {'fused': True})
    """
    return {"fused": True} if device.type == "cuda" else {"foreach": True}


def chosen_by_config(factory: Callable[..., Any]) -> bool:
    """Whether the factory (a config's ``OptimizerCallable``, a ``functools.partial``) sets ``foreach`` or ``fused``."""
    keywords = getattr(factory, "keywords", None) or {}
    return any(keywords.get(name) is not None for name in IMPLEMENTATIONS)


def make_optimizer(
    factory: Callable[..., torch.optim.Optimizer], params: Sequence[Union[nn.Parameter, dict[str, Any]]]
) -> torch.optim.Optimizer:
    """``factory(params)`` with the device's implementation (``implementation``) unless the factory chose one;
    an optimizer that takes neither keyword, or refuses the one chosen for these parameters, is built as given.
    ``params``: parameters, or parameter groups (dicts with ``params``, as torch's optimizers take them).

    Example:
        >>> opt = make_optimizer(torch.optim.Adam, [nn.Parameter(torch.zeros(3))])
        >>> opt.defaults["foreach"]
        True
        >>> make_optimizer(torch.optim.LBFGS, [nn.Parameter(torch.zeros(3))]).defaults.get("foreach") is None
        True
    """
    params = list(params)
    if chosen_by_config(factory) or not params:
        return factory(params)
    first = params[0]["params"][0] if isinstance(params[0], dict) else params[0]
    preferred = implementation(first.device)
    for extra in (preferred, {"foreach": True}) if "fused" in preferred else (preferred,):
        try:
            return factory(params, **extra)
        except (TypeError, ValueError, RuntimeError):  # not a keyword of this optimizer, or not for these tensors
            continue
    return factory(params)
