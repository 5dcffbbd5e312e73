"""Classical reconstructions from measurements, the baselines of every inverse-problem table: filtered back-
projection (CT), zero-filled inverse FFT (MRI), cubic interpolation (inpainting, super-resolution), and the
paper's grid optimisation (the pixel grid itself fitted through the operator)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from scipy.interpolate import griddata
from skimage.transform import iradon
from torch import Tensor

from inr.operators.base import Operator
from inr.operators.kspace import KSpaceSampling
from inr.operators.sampling import Downsample, PixelMask
from inr.operators.tomography import ParallelBeamProjection


def filtered_back_projection(operator: ParallelBeamProjection, sinogram: Tensor, filter_name: str = "ramp") -> Tensor:
    """x̂ = Aᵀ(h * y) with a ramp filter h: ``skimage.transform.iradon`` on each channel's sinogram (C, K, D)
    -> (C, H, W). The operator's geometry is skimage's (tested), with integrals in grid units, hence × W."""
    height, width = operator.field_shape
    theta = np.rad2deg(operator.angles.cpu().numpy())
    out = []
    for channel in sinogram.detach().cpu().double().numpy():  # (K, D)
        out.append(iradon(channel.T * width, theta=theta, output_size=width, filter_name=filter_name, circle=False))
    image = torch.from_numpy(np.stack(out)).to(torch.float32)
    return image[:, :height] if height <= width else F.pad(image, (0, 0, 0, height - width))


def zero_filled_ifft(operator: KSpaceSampling, kspace: Tensor) -> Tensor:
    """x̂ = |F⁻¹ y₀|, y₀ = the measured samples with zeros elsewhere: the magnitude image MRI scanners show."""
    return operator.zero_filled(kspace.detach()).abs().float()


def cubic_upsample(operator: Downsample, lowres: Tensor) -> Tensor:
    """Bicubic (2D) or trilinear (3D; torch has no tricubic) interpolation of a box-downsampled grid back to
    the operator's grid, with pixel centres aligned as area averaging places them (align_corners=False)."""
    mode = {1: "linear", 2: "bicubic", 3: "trilinear"}[lowres.ndim - 1]
    return F.interpolate(lowres.detach()[None].float(), size=operator.field_shape, mode=mode, align_corners=False)[0]


def cubic_inpaint(operator: PixelMask, observed: Tensor) -> Tensor:
    """Piecewise-cubic (Clough–Tocher) interpolation of the observed pixels over the 2D grid
    (``scipy.interpolate.griddata``); pixels outside their convex hull take the nearest observed value."""
    shape = operator.field_shape
    if len(shape) != 2:
        raise ValueError("cubic_inpaint: 2D grids only")
    points = np.argwhere(operator.mask.cpu().numpy())  # (M, 2)
    rows, cols = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    out = []
    for values in observed.detach().cpu().double().numpy():  # (M,)
        cubic = griddata(points, values, (rows, cols), method="cubic")
        nearest = griddata(points, values, (rows, cols), method="nearest")
        out.append(np.where(np.isnan(cubic), nearest, cubic))
    return torch.from_numpy(np.stack(out)).to(torch.float32)


def grid_optimisation(operator: Operator, measurements: Tensor, channels: int, steps: int = 1000, lr: float = 0.1) -> Tensor:
    """x̂ = σ(θ*), θ* = argmin mean|A σ(θ) − y|² by ``steps`` of Adam(lr) from θ = 0 — the pixel grid itself
    as the representation, optimised through the same operator (Tancik et al. 2020, 2d_CT / 3d_MRI
    notebooks: sigmoid of the grid, zeros at the start, lr 0.1)."""
    y = measurements.detach()
    theta = torch.zeros(channels, *operator.field_shape, device=y.device, requires_grad=True)
    optimizer = torch.optim.Adam([theta], lr=lr)
    for _ in range(steps):
        residual = operator(torch.sigmoid(theta)) - y
        loss = residual.abs().square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return torch.sigmoid(theta.detach())
