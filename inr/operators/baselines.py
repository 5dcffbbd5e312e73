"""Classical reconstructions from measurements, the baselines of every inverse-problem table: filtered back-
projection (CT), zero-filled inverse FFT (MRI), cubic interpolation (inpainting, super-resolution), the
paper's grid optimisation (the pixel grid itself fitted through the operator), and two solvers that work
through any ``Operator`` (forward and adjoint): box-constrained least squares and TV-regularised least squares
(the classical answer to sparse-view CT and undersampled MRI)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F
from scipy.interpolate import griddata
from torch import Tensor

from inr.extras import require
from inr.metrics import psnr
from inr.operators.base import Operator
from inr.operators.kspace import KSpaceSampling
from inr.operators.sampling import Downsample, PixelMask
from inr.operators.tomography import ParallelBeamProjection


def filtered_back_projection(operator: ParallelBeamProjection, sinogram: Tensor, filter_name: str = "ramp") -> Tensor:
    """x̂ = Aᵀ(h * y) with a ramp filter h: ``skimage.transform.iradon`` on each channel's sinogram (C, K, D)
    -> (C, H, W). The operator's geometry is skimage's (tested), with integrals in grid units, hence × W."""
    iradon = require("skimage.transform", extra="phantoms", what="filtered back-projection").iradon
    height, width = operator.field_shape
    theta = np.rad2deg(operator.angles.cpu().numpy())
    out = []
    for channel in sinogram.detach().cpu().double().numpy():  # (K, D)
        out.append(iradon(channel.T * width, theta=theta, output_size=width, filter_name=filter_name, circle=False))
    image = torch.from_numpy(np.stack(out)).to(torch.float32)
    return image[:, :height] if height <= width else F.pad(image, (0, 0, 0, height - width))


def zero_filled_ifft(operator: KSpaceSampling, kspace: Tensor) -> Tensor:
    """x̂ = Re F⁻¹ y₀, y₀ = the measured samples with zeros elsewhere: Aᴴy of the real field. (The magnitude
    |F⁻¹ y₀| that scanners display is biased up wherever the imaginary part is large: for a real object the
    real part is the least-squares estimate from these samples.)"""
    return operator.zero_filled(kspace.detach()).real.float()


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


# --- solvers through any operator ---------------------------------------------------------------------------
def operator_norm(operator: Operator, channels: int = 1, iterations: int = 50, seed: int = 0) -> float:
    """‖A‖ = √λ_max(AᵀA), by ``iterations`` of the power method on AᵀA from a seeded random field (an estimate
    from below that converges to ‖A‖; every solver here leaves a margin for it).

    Example:
        >>> round(operator_norm(Downsample((8, 8), factor=2)), 4)   # box means of 2×2 blocks: ‖A‖ = 1/2
        0.5
    """
    device = operator._device()
    gen = torch.Generator().manual_seed(seed)
    v = torch.rand(channels, *operator.field_shape, generator=gen, dtype=torch.float64).to(device)
    v = v.to(torch.float32) if not _float64(operator) else v
    norm = 0.0
    with torch.no_grad():
        for _ in range(iterations):
            w = operator.adjoint(operator(v))
            norm = float(w.norm())
            if norm == 0.0:
                return 0.0
            v = w / norm
    return math.sqrt(norm)


def _float64(operator: Operator) -> bool:
    tensors = [t for t in list(operator.buffers()) if t.is_floating_point()]
    return bool(tensors) and tensors[0].dtype == torch.float64


def finite_gradient(x: Tensor) -> Tensor:
    """∇x: forward differences along every grid axis, zero at each axis's last sample (Neumann boundary, as
    ``numpy.diff`` padded and ``skimage.restoration.denoise_tv_chambolle``): (C, *grid) -> (d, C, *grid)."""
    parts = []
    for axis in range(1, x.ndim):
        diff = torch.diff(x, dim=axis)
        parts.append(F.pad(diff.movedim(axis, -1), (0, 1)).movedim(-1, axis))
    return torch.stack(parts)


def finite_gradient_adjoint(g: Tensor) -> Tensor:
    """∇ᵀg = −div g, the exact transpose of ``finite_gradient``: (d, C, *grid) -> (C, *grid)."""
    out = torch.zeros_like(g[0])
    for axis in range(1, g.ndim - 1):
        part = g[axis - 1].movedim(axis, -1)
        moved = torch.zeros_like(part)
        moved[..., 0] = -part[..., 0]
        moved[..., 1:-1] = part[..., :-2] - part[..., 1:-1]
        moved[..., -1] = part[..., -2]
        out = out + moved.movedim(-1, axis)
    return out


def total_variation(x: Tensor) -> Tensor:
    """TV(x) = Σ_channels Σ_pixels ‖∇x‖₂ (isotropic, forward differences, ``finite_gradient``)."""
    return finite_gradient(x).square().sum(0).sqrt().sum()


def box_least_squares(
    operator: Operator, measurements: Tensor, channels: int, iterations: int = 1000, bounds: tuple[float, float] = (0.0, 1.0)
) -> Tensor:
    """x̂ = argmin_{lo ≤ x ≤ hi} ½‖A x − y‖², by ``iterations`` of FISTA (accelerated projected gradient,
    Beck & Teboulle 2009) with step 1/‖A‖², from the middle of the box (where the measurements leave x
    undetermined — unobserved pixels, unmeasured frequencies — it stays at the middle)."""
    return tv_least_squares(operator, measurements, channels, 0.0, iterations, bounds)


def tv_denoise(
    b: Tensor, weight: float, bounds: Optional[tuple[float, float]], iterations: int, dual: Optional[Tensor] = None
) -> tuple[Tensor, Tensor]:
    """x̂ = argmin_{lo ≤ x ≤ hi} ½‖x − b‖² + μ TV(x), μ = ``weight``, by ``iterations`` of FGP (Beck & Teboulle
    2009, "Fast gradient-based algorithms for constrained total variation image denoising and deblurring"):
    accelerated projected ascent on the dual q (‖q‖₂ ≤ 1 pointwise), x(q) = P_box(b − μ∇ᵀq), step 1/(4d μ).
    Returns (x̂, q) so that a caller can warm-start the next call with ``dual``."""
    lo, hi = bounds if bounds is not None else (-math.inf, math.inf)
    d = b.ndim - 1
    q = torch.zeros(d, *b.shape, dtype=b.dtype, device=b.device) if dual is None else dual
    r, t = q, 1.0
    for _ in range(iterations):
        x = (b - weight * finite_gradient_adjoint(r)).clamp(lo, hi)
        step = r + finite_gradient(x) / (4 * d * weight)
        new = step / step.square().sum(0, keepdim=True).sqrt().clamp_min(1.0)
        t_next = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
        r = new + (t - 1) / t_next * (new - q)
        q, t = new, t_next
    return (b - weight * finite_gradient_adjoint(q)).clamp(lo, hi), q


def tv_least_squares(
    operator: Operator,
    measurements: Tensor,
    channels: int,
    weight: float,
    iterations: int = 1000,
    bounds: Optional[tuple[float, float]] = (0.0, 1.0),
    inner: int = 10,
) -> Tensor:
    """x̂ = argmin_{lo ≤ x ≤ hi} ½‖A x − y‖² + λ TV(x), λ = ``weight``, TV as ``total_variation``.

    FISTA (Beck & Teboulle 2009) on the data term with step 1/‖A‖² (``operator_norm``, 1 % margin); its
    proximal step — TV denoising with the box, weight λ/‖A‖² — by ``inner`` iterations of ``tv_denoise``,
    warm-started from the previous step's dual. Starts from the middle of the box (0 without ``bounds``).
    Works through any ``Operator``: only ``forward`` and ``adjoint`` are called, and complex measurements
    (k-space) use the real inner product. λ = 0: box-constrained least squares. With A the identity and no
    active bound it solves the ROF problem of ``skimage.restoration.denoise_tv_chambolle(y, weight=λ)``
    (tested against it).
    """
    y = measurements.detach()
    dtype = y.real.dtype if y.is_complex() else y.dtype
    lo, hi = bounds if bounds is not None else (-math.inf, math.inf)
    middle = 0.5 * (lo + hi) if bounds is not None else 0.0
    x = torch.full((channels, *operator.field_shape), middle, dtype=dtype, device=y.device)
    lipschitz = (operator_norm(operator, channels) * 1.01) ** 2  # the power method's estimate is from below
    if lipschitz == 0.0:
        return x
    z, t, dual = x.clone(), 1.0, None
    with torch.no_grad():
        for _ in range(iterations):
            step = z - operator.adjoint(operator(z) - y) / lipschitz
            if weight > 0.0:
                new, dual = tv_denoise(step, weight / lipschitz, bounds, inner, dual)
            else:
                new = step.clamp(lo, hi)
            t_next = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
            z = new + (t - 1) / t_next * (new - x)
            x, t = new, t_next
    return x


def choose_tv_weight(
    operator: Operator,
    measurements: Tensor,
    truth: Tensor,
    weights: Sequence[float],
    iterations: int = 1000,
) -> tuple[float, list[float]]:
    """The weight of ``weights`` whose ``tv_least_squares`` reconstruction is nearest ``truth`` (PSNR): meant
    for held-out data — a signal outside the test set, seen through the test's operator. Returns (best
    weight, PSNR of every weight)."""
    scores = [psnr(tv_least_squares(operator, measurements, truth.shape[0], w, iterations), truth) for w in weights]
    return float(weights[int(np.argmax(scores))]), scores
