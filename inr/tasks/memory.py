"""Memory a model and a training batch need, estimated before allocating.

``check_model_memory`` builds the model on the meta device (shapes only, no storage) and refuses one whose
parameters, gradients and optimizer state would not fit; ``check_batch_memory`` refuses, as a resolution is
refused, a batch whose activations exceed half the free memory of the training device
(``inr.errors.check_memory``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import lightning as L
import torch
from torch import nn

from inr.errors import check_memory
from inr.tasks.base import INRModule

# Bytes per parameter while training: the weight, its gradient and Adam's two moments, float32 each.
TRAINING_BYTES_PER_PARAMETER = 4 * 4


def meta_model_bytes(build: Callable[[], nn.Module]) -> Optional[tuple[int, int]]:
    """(parameters, bytes while training) of the module ``build()`` makes, built on the meta device so that
    nothing is allocated; None when the module cannot be built there (it copies values at construction) or
    not at all (the real build then reports why in its own words)."""
    try:
        with torch.device("meta"):
            module = build()
        params = sum(p.numel() for p in module.parameters())
        buffers = sum(b.numel() * b.element_size() for b in module.buffers())
    except Exception:
        return None
    return params, params * TRAINING_BYTES_PER_PARAMETER + buffers


def check_model_memory(build: Callable[[], nn.Module], what: str = "the model") -> None:
    """Refuse a model whose weights, gradients, optimizer state and buffers exceed half the free memory,
    sized on the meta device before anything is allocated (a width of 10⁷, 10⁸ Fourier features)."""
    sized = meta_model_bytes(build)
    if sized is None:
        return
    params, n_bytes = sized
    check_memory(
        f"{what} ({params:,} parameters, with their gradients and optimizer state)",
        n_bytes,
        advice="choose a smaller network width/depth or fewer encoder features",
    )


def activation_bytes_per_point(model: L.LightningModule, in_dim: int, probe: tuple[int, int] = (64, 128)) -> float:
    """Bytes autograd keeps per coordinate for the backward pass of encoder + network, measured on two small
    batches (their difference removes what does not grow with the batch, such as saved weights)."""
    gen = torch.Generator().manual_seed(0)  # leaves the global random state alone
    totals = []
    for n in probe:
        saved = 0

        def pack(t: torch.Tensor) -> torch.Tensor:
            nonlocal saved
            saved += t.numel() * t.element_size()
            return t

        coords = torch.rand(n, in_dim, generator=gen).to(model.device)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model.network(model.encoder(coords))
        totals.append(saved)
    return max(0.0, (totals[1] - totals[0]) / (probe[1] - probe[0]))


def check_batch_memory(trainer: L.Trainer, model: L.LightningModule, datamodule: Any) -> None:
    """Refuse a training batch whose activations would not fit, like a resolution: estimated as
    batch × (2 × saved activations per point [forward + gradients] + coordinates, values and index)."""
    # the estimate holds for tasks that evaluate the field point by point (network(encoder(v))) and sample it
    # where the batch asks (direct fitting); other representations and operators size their own work
    direct = isinstance(model, INRModule) and type(model).measure is INRModule.measure
    if not direct or model.coordinate_network() is None or not hasattr(datamodule, "train_index"):
        return
    if getattr(model.encoder, "in_dim", datamodule.ndim) != datamodule.ndim:
        return  # the task's setup refuses the mismatch with its own line
    batch = datamodule.points_per_step(trainer.world_size)  # a full batch is shared among the ranks
    per_point = 2 * activation_bytes_per_point(model, datamodule.ndim) + 4 * (datamodule.ndim + datamodule.out_channels) + 8
    device = trainer.strategy.root_device
    available, where = None, ""
    if device.type == "cuda":
        available, where = torch.cuda.mem_get_info(device)[0], f" on {device}"
    share = f", a 1/{trainer.world_size} share per rank" if trainer.world_size > 1 else ""
    what = (
        f"data.batch_size null (every training point each step{share})"
        if datamodule.batch_size is None
        else f"data.batch_size {batch:,}"
    )
    check_memory(
        f"{what}: {batch:,} points",
        int(batch * per_point),
        advice="choose a smaller data.batch_size",
        available=available,
        where=where,
    )
