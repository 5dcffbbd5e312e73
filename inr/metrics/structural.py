"""SSIM, the one definition every task, table and baseline of the package uses: ``ssim``.

SSIM (Wang et al. 2004) with torchmetrics' settings: local means, variances and the covariance under a Gaussian
window (σ = 1.5, 11 taps per axis), C₁ = (0.01 R)², C₂ = (0.03 R)², R the data range, and the map

    SSIM(x, y) = (2 μ_x μ_y + C₁)(2 σ_xy + C₂) / ((μ_x² + μ_y² + C₁)(σ_x² + σ_y² + C₂))

over the image padded by reflection (5 pixels, the window's half-width), averaged over every pixel (borders
included), channel and image. Images are (..., C, H, W), volumes (..., C, D, H, W) with a 3-D window; leading axes
are a batch, whose mean is the score (the frames of a clip, the views of a scene). Predictions are scored as
they are, **not clipped** (as ``psnr``): a method bounds its output itself. Computed in float64 whatever the
caller's dtype (as ``psnr``): the local variances are E[x²] − μ², whose float32 rounding beside C₂ ≈ 1e-3 costs a
constant volume of 0.9 five thousandths (0.9947 for 1) and a perfect 128² CT phantom 2e-5; on reconstructions
with error the two precisions differ by ≤ 2e-6 (CT 128², MRI 32³), below the three decimals reported. An exact
prediction scores 1.

One minimum size: every spatial side ≥ ``SSIM_MIN_SIDE`` = 6 (the reflection pad of 5 needs 6 values). One
empty-set rule: a smaller grid, or a batch of no images, has no SSIM: ``ssim`` returns None, with one warning
naming the key it would have been reported under (tables print no value, the summaries leave the key out).
"""

from __future__ import annotations

import warnings
from typing import Optional

from torch import Tensor
from torchmetrics.functional.image import structural_similarity_index_measure

SSIM_MIN_SIDE = 6  # torchmetrics pads by the 11-tap window's half-width, 5, by reflection: a side needs 6 values


def ssim(pred: Tensor, target: Tensor, data_range: float = 1.0, dims: int = 2, name: str = "ssim") -> Optional[float]:
    """SSIM of ``pred`` against ``target`` (equal shapes (..., C, *spatial) with ``dims`` = 2 or 3 spatial axes),
    in float64, unclipped; the mean over the leading axes. None (and a warning naming ``name``) when a spatial side
    is under ``SSIM_MIN_SIDE`` or there is no image.

    Example:
        >>> import torch
        >>> x = torch.rand(3, 8, 8, generator=torch.Generator().manual_seed(0))
        >>> constant = ssim(torch.full((1, 8, 8), 0.5), torch.full((1, 8, 8), 0.25))  # (2ab + C₁)/(a² + b² + C₁)
        >>> ssim(x, x), round(constant, 6), round((2 * 0.5 * 0.25 + 1e-4) / (0.5**2 + 0.25**2 + 1e-4), 6)
        (1.0, 0.800064, 0.800064)
    """
    if pred.shape != target.shape:
        raise ValueError(f"ssim: prediction {tuple(pred.shape)} and target {tuple(target.shape)} differ in shape")
    if dims not in (2, 3) or pred.ndim < dims + 1:
        raise ValueError(f"ssim: expected (..., C, {'D, ' if dims == 3 else ''}H, W), got {tuple(pred.shape)}")
    spatial = tuple(pred.shape[-dims:])
    if min(spatial) < SSIM_MIN_SIDE or pred.numel() == 0:
        unit = "pixels" if dims == 2 else "voxels"
        need, grid = "×".join([str(SSIM_MIN_SIDE)] * dims), "×".join(map(str, spatial))
        warnings.warn(
            f"{name}: SSIM needs at least {need} {unit} and this grid is {grid}; it is not reported "
            "(choose a larger data.resolution)",
            stacklevel=2,
        )
        return None
    shape = (-1, *pred.shape[-dims - 1 :])  # (..., C, *spatial) -> (N, C, *spatial)
    pred = pred.detach().double().reshape(shape)
    target = target.detach().double().to(pred.device).reshape(shape)
    return float(structural_similarity_index_measure(pred, target, data_range=data_range))
