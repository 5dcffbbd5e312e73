"""Small training probes for conv decoders: per-band error over training and the parameter cost ‖Δθ‖ of
fitting a target whose spectrum is shifted against the input's."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Optional

import torch
from torch import Tensor, nn

from inr.spectral import band_relative_error, dc_relative_error


def modulate(x: Tensor, shift: int) -> Tensor:
    """y[..., n₀, n₁] = x[..., n₀, n₁] cos(2π shift n₁ / W): the spectrum moved by ±``shift`` columns,
    Y[u, v] = (X[u, v − shift] + X[u, v + shift]) / 2 (indices mod W).

    Example:
        >>> x = torch.ones(1, 4)
        >>> Y = torch.fft.fft2(modulate(x, 1))
        >>> Y.abs().round(decimals=6).tolist()
        [[0.0, 2.0, 0.0, 2.0]]
    """
    n = torch.arange(x.shape[-1], dtype=torch.float64, device=x.device)
    return x * torch.cos(2 * math.pi * shift * n / x.shape[-1]).to(x.dtype)


def parameter_vector(net: nn.Module) -> Tensor:
    return torch.cat([p.detach().flatten() for p in net.parameters()])


def fit(
    net: nn.Module,
    forward: Callable[[nn.Module], Tensor],
    target: Tensor,
    steps: int,
    lr: float = 1e-3,
    every: int = 10,
    num_bands: int = 16,
    threshold: Optional[float] = None,
) -> dict[str, Tensor]:
    """Full-batch Adam on MSE(forward(net), target) for ``steps`` steps, measuring every ``every`` steps.

    Args:
        net: the parameters trained.
        forward: net -> prediction shaped like ``target`` (C, H, W) (so MLPs on coordinates fit too).
        target: (C, H, W).
        threshold: when given, also the first measured step where the relative error ‖f − y‖ / ‖y‖ falls
            below it, and ‖Δθ‖ = ‖θ_t − θ_0‖ there (NaN if never).

    Returns:
        ``steps`` (M,), ``rel_error`` (M,), ``band_errors`` (M, num_bands) from
        ``inr.spectral.band_relative_error`` (the DC bin in no band), ``dc_errors`` (M,) the mean's error
        (``inr.spectral.dc_relative_error``), ``band_edges`` (num_bands + 1,), ``distance`` (M,) ‖θ_t − θ_0‖,
        and with a threshold ``hit_step`` and ``hit_distance`` (scalars).
    """
    theta0 = parameter_vector(net)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    record: dict[str, list] = {"steps": [], "rel_error": [], "band_errors": [], "dc_errors": [], "distance": []}
    edges = None
    norm = target.norm()
    for step in range(steps + 1):
        pred = forward(net)
        if step % every == 0 or step == steps:
            with torch.no_grad():
                errors, edges = band_relative_error(pred.detach(), target, num_bands=num_bands)
                record["steps"].append(step)
                record["rel_error"].append(float((pred - target).norm() / norm))
                record["band_errors"].append(errors)
                record["dc_errors"].append(dc_relative_error(pred.detach(), target))
                record["distance"].append(float((parameter_vector(net) - theta0).norm()))
        if step == steps:
            break
        loss = ((pred - target) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    out = {
        "steps": torch.tensor(record["steps"]),
        "rel_error": torch.tensor(record["rel_error"]),
        "band_errors": torch.stack(record["band_errors"]),
        "dc_errors": torch.stack(record["dc_errors"]),
        "band_edges": edges,
        "distance": torch.tensor(record["distance"]),
    }
    if threshold is not None:
        hit = torch.nonzero(out["rel_error"] < threshold)
        out["hit_step"] = out["steps"][hit[0, 0]].float() if len(hit) else torch.tensor(math.nan)
        out["hit_distance"] = out["distance"][hit[0, 0]] if len(hit) else torch.tensor(math.nan)
    return out


def first_below(errors: Tensor, steps: Tensor, level: float) -> Tensor:
    """Per band, the first recorded step where its error is below ``level`` (NaN if never): (M, B) -> (B,)."""
    below = errors < level
    first = torch.where(below.any(0), below.float().argmax(0), torch.full_like(below[0], -1, dtype=torch.long))
    return torch.where(first >= 0, steps[first.clamp(min=0)].double(), torch.tensor(math.nan, dtype=torch.float64))


def best_filter_error(x: Tensor, y: Tensor, radius: int) -> float:
    """min over h, c of ‖h ⊛ x + c − y‖ / ‖y‖: the smallest relative error of any circular linear filter with
    a (2r+1)×(2r+1) kernel per (output, input) channel pair plus a constant per output channel, for x (C_in,
    H, W) and y (C_out, H, W) (least squares in float64).

    A circular linear conv decoder without upsampling is such a filter, with r = depth · (k//2) (its biases
    add a constant), so this is a floor under the error any of them reaches, trained or not.

    Example:
        >>> x = torch.randn(1, 6, 6, dtype=torch.float64)
        >>> round(best_filter_error(x, 2 * x.roll(1, -1) + 1, radius=1), 9)  # a shifted, scaled copy: exact
        0.0
    """
    c_in = x.shape[0]
    offsets = range(-radius, radius + 1)
    columns = [x.double().roll((a, b), (-2, -1)).reshape(c_in, -1) for a in offsets for b in offsets]
    design = torch.cat(columns + [torch.ones(1, x[0].numel(), dtype=torch.float64)]).T  # (H·W, C_in (2r+1)² + 1)
    target = y.double().reshape(y.shape[0], -1).T  # (C_out, H, W) -> (H·W, C_out)
    solution = torch.linalg.lstsq(design, target, driver="gelsd").solution
    return float((design @ solution - target).norm() / target.norm())
