"""A data-informed output bias: the network's last bias set so that it starts at the data's mean instead of its
initialisation's draw (``output_bias: data`` of ``ImageFitting`` and ``InverseFitting``).

Why: with the paper's initialisation a sigmoid network starts near σ(0) = 0.5 everywhere; on a dark target (a
phantom of mean 0.1) Adam's first steps can push every output to the sigmoid's floor, where the last layer's
ReLUs die and the fit stays a constant (docs/inverse.md, "A cure for collapsed fits"). Starting at the data's
mean removes that first descent. The mean is read from the data alone, never from the ground truth:

- fitting: the mean of the training values;
- an inverse problem: the constant field that best explains the training measurements,
  c = Re⟨A1, y⟩ / ‖A1‖² per channel (1 the constant field of ones). For k-space sampling that holds the DC
  sample this is the mean the DC coefficient gives (A1 is zero elsewhere), for a pixel mask the observed
  pixels' mean, for a box downsampling the low-resolution image's mean, for CT a chord-weighted mean of the
  projections.

The bias b of the last linear layer becomes g⁻¹(c) for the output activation g: logit(c) under a sigmoid (c
clipped to [ε, 1 − ε]), c itself for a linear output; the weights keep their draw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError

OUTPUT_BIASES = ("init", "data")
# the sigmoid's logit of a mean clipped here: a target that is all 0 or all 1 still gets a finite bias
LOGIT_EPS = 1e-3


def check_output_bias(value: str, stacked: bool = False, init_from: Optional[str] = None) -> str:
    """``value`` if it is an output bias mode (``init``: the initialisation's draw; ``data``: the data's mean) the
    task can take: ``data`` is a single model's start, so neither a stacked task nor a learned initialisation."""
    if value not in OUTPUT_BIASES:
        raise InputError(f"model.output_bias must be one of {', '.join(OUTPUT_BIASES)}, got {value!r}")
    if value == "data" and stacked:
        raise InputError("model.output_bias data is a single model's start; a stacked task's members keep their draws")
    if value == "data" and init_from is not None:
        raise InputError("model.output_bias data and model.init_from both set the start; choose one")
    return value


def apply_output_bias(task: nn.Module, stage: str, mean: Callable[[], Tensor]) -> None:
    """At the first ``fit`` set-up of a task with ``output_bias == "data"``: its network's output bias from
    ``mean()`` (C,); a later set-up (a second fit, a resume, whose checkpoint then restores the weights) leaves it."""
    if stage != "fit" or task.output_bias != "data" or getattr(task, "output_bias_applied", False):
        return
    set_output_bias(task.network, mean())
    task.output_bias_applied = True


@torch.no_grad()
def constant_fit(operator: nn.Module, measurements: Tensor, channels: int, index: Optional[Tensor] = None) -> Tensor:
    """c = Re⟨A1, y⟩ / ‖A1‖² per channel: the constant field that best explains the measurements y (C, M, …) of
    the linear operator A (acting on (C, *grid) fields), over the measurements ``index`` of axis 1 (None: all). (C,).

    Example:
        >>> class Mask(nn.Module):  # observes pixels 0 and 2 of a 1 × 4 image
        ...     field_shape = (4,)
        ...     def forward(self, x): return x[:, [0, 2]]
        >>> constant_fit(Mask(), torch.tensor([[0.2, 0.4]]), channels=1)
        tensor([0.3000])
    """
    shape = tuple(operator.field_shape)
    ones = torch.ones(channels, *shape, device=measurements.device)
    a1, y = operator(ones), measurements  # (C, M, …) each: a measurement's index is its first axis after C
    if index is not None:
        a1, y = a1.index_select(1, index.to(a1.device)), y.index_select(1, index.to(y.device))
    a1, y = a1.flatten(1), y.flatten(1)
    dtype = torch.complex128 if a1.is_complex() or y.is_complex() else torch.float64
    a1, y = a1.to(dtype), y.to(dtype)
    energy = a1.abs().square().sum(dim=1)  # ‖A1‖² per channel
    if bool((energy <= 0).any()):
        raise InputError(
            "model.output_bias data: the measurements hold nothing of the field's mean (A applied to a constant is 0); "
            "use output_bias: init"
        )
    inner = (a1.conj() * y).sum(dim=1)
    return (inner.real if inner.is_complex() else inner).div(energy).float()


def last_linear(network: nn.Module) -> tuple[nn.Linear, Optional[nn.Module]]:
    """The network's output layer and the module after it (its output activation, None for a linear output): an
    ``nn.Sequential`` (``MLP``, ``SIREN``, …) ending in ``nn.Linear`` and at most one ``nn.Sigmoid`` or identity."""
    children = list(network.children()) if isinstance(network, nn.Sequential) else []
    linear = [i for i, m in enumerate(children) if isinstance(m, nn.Linear)]
    after = children[linear[-1] + 1 :] if linear else None
    if not linear or len(after) > 1 or (after and not isinstance(after[0], (nn.Sigmoid, nn.Identity))):
        raise InputError(
            f"model.output_bias data needs a network that ends in a linear layer (and a sigmoid), got {type(network).__name__}"
        )
    return children[linear[-1]], (after[0] if after else None)


@torch.no_grad()
def set_output_bias(network: nn.Module, mean: Tensor) -> Tensor:
    """Set the output layer's bias to g⁻¹(mean) for the network's output activation g (logit under a sigmoid, the
    mean itself under a linear output); returns the bias set.

    Example:
        >>> net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1), nn.Sigmoid())
        >>> _ = set_output_bias(net, torch.tensor([0.1]))
        >>> _ = net[2].weight.data.zero_()  # a zero last layer outputs the mean
        >>> round(net(torch.zeros(1, 2)).item(), 4)
        0.1
    """
    layer, activation = last_linear(network)
    if layer.bias is None or layer.bias.shape != mean.shape:
        raise InputError(
            f"model.output_bias data: the output layer has {layer.out_features} outputs without a matching bias, "
            f"the data {mean.numel()} channels"
        )
    value = mean.clamp(LOGIT_EPS, 1 - LOGIT_EPS).logit() if isinstance(activation, nn.Sigmoid) else mean
    layer.bias.copy_(value.to(layer.bias))
    return layer.bias.detach().clone()
