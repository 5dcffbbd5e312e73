"""Volume rendering along rays: the measurement operator of a radiance field (Mildenhall et al. 2020, sec. 4).

The colour seen along a ray r(t) = o + t d through a field of density σ ≥ 0 and colour c is

    C(r) = ∫ T(t) σ(r(t)) c(r(t)) ‖d‖ dt + T(t_far) c_bg,    T(t) = exp(−∫_{t_near}^t σ(r(s)) ‖d‖ ds),

discretised on bins [s_i, s_{i+1}) with one sample t_i in each (density and colour constant per bin):

    C ≈ Σ_i w_i c_i + T_{S} c_bg,   w_i = T_i α_i,   α_i = 1 − exp(−σ_i δ_i),   T_i = exp(−Σ_{j<i} σ_j δ_j),

with δ_i = (s_{i+1} − s_i) ‖d‖ (exact when σ is constant on each bin). The background term is Π_i (1 − α_i)
= 1 − Σ_i w_i. Bins are stratified (one uniform draw in each of S equal bins, or their midpoints when
rendering deterministically) over the part of [near, far] that lies inside the scene's box; hierarchical
sampling adds bins whose edges are drawn from the piecewise-constant density the first pass's weights
define (inverse transform sampling), and renders the union again.

This operator is not linear in the field and queries it where it decides, so it takes the field as a
function ``points (..., 3) -> (density (...), colour (..., C))`` rather than values on a grid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Optional, Union

import torch
from torch import Tensor, nn

from inr.errors import InputError

RadianceField = Callable[[Tensor], tuple[Tensor, Tensor]]
# a ray direction component below this is treated as parallel to the box faces it would cross (slab test)
PARALLEL_EPS = 1e-12
# weights are floored at this before sampling them as a density, so a ray of zero weight samples uniformly
WEIGHT_FLOOR = 1e-5


class RenderedRays(NamedTuple):
    """Colour of every pass (P, N, C) (P = 2 with hierarchical sampling: coarse, then fine), and of the last
    pass the expected depth Σ w_i t_i / Σ w_i (N,) and the opacity Σ w_i (N,)."""

    rgb: Tensor
    depth: Tensor
    opacity: Tensor


def ray_box_interval(
    origins: Tensor, directions: Tensor, box: Tensor, near: Union[float, Tensor], far: Union[float, Tensor]
) -> tuple[Tensor, Tensor]:
    """[t₀, t₁] = [near, far] ∩ {t : o + t d ∈ box} per ray (slab method), (N, 3) each -> (N,), (N,).

    ``box`` is (2, 3): its lower and upper corners. A ray that misses the box gets t₁ = t₀ (an empty interval).

    Example:
        >>> ray_box_interval(torch.tensor([[0.0, 0, 5]]), torch.tensor([[0.0, 0, -1]]), torch.tensor([[-1.0] * 3, [1.0] * 3]), 2.0, 8.0)
        (tensor([4.]), tensor([6.]))
    """
    safe = torch.where(directions.abs() < PARALLEL_EPS, torch.full_like(directions, PARALLEL_EPS), directions)
    t_lo, t_hi = (box[0] - origins) / safe, (box[1] - origins) / safe  # (N, 3): entry/exit of each slab
    enter = torch.minimum(t_lo, t_hi).amax(-1).clamp(min=near)  # near, far: numbers or 0-d tensors (no host sync)
    leave = torch.maximum(t_lo, t_hi).amin(-1).clamp(max=far)
    return enter, torch.maximum(leave, enter)


def stratified_bins(t0: Tensor, t1: Tensor, count: int, jitter: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """S = ``count`` equal bins of [t₀, t₁] per ray and one sample in each: edges (N, S+1), samples (N, S).

    The sample of bin i is s_i + u_i (s_{i+1} − s_i) with u = ``jitter`` (N, S) in [0, 1), or u = ½ (midpoints).

    Example:
        >>> stratified_bins(torch.tensor([2.0]), torch.tensor([6.0]), 2)
        (tensor([[2., 4., 6.]]), tensor([[3., 5.]]))
    """
    steps = torch.linspace(0.0, 1.0, count + 1, device=t0.device, dtype=t0.dtype)
    edges = t0[:, None] + (t1 - t0)[:, None] * steps  # (N, S+1)
    u = 0.5 if jitter is None else jitter
    return edges, edges[:, :-1] + (edges[:, 1:] - edges[:, :-1]) * u


def composite(
    density: Tensor, colour: Tensor, edges: Tensor, samples: Tensor, ray_norm: Tensor, background: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Alpha compositing of S samples per ray (module docstring): density (N, S), colour (N, S, C), bin edges
    (N, S+1), sample positions (N, S), ‖d‖ (N,), background (C,) -> colour (N, C), expected depth (N,),
    opacity (N,), weights (N, S).

    Example (one bin of σ δ = ln 2 in front of a black background: half the colour):
        >>> c, _, a, _ = composite(torch.tensor([[0.6931472]]), torch.ones(1, 1, 3), torch.tensor([[0.0, 1.0]]), torch.tensor([[0.5]]), torch.ones(1), torch.zeros(3))
        >>> c, a
        (tensor([[0.5000, 0.5000, 0.5000]]), tensor([0.5000]))
    """
    delta = (edges[:, 1:] - edges[:, :-1]) * ray_norm[:, None]  # (N, S) bin lengths in world units
    optical = density * delta  # σ_i δ_i
    alpha = 1.0 - torch.exp(-optical)
    transmittance = torch.exp(-(torch.cumsum(optical, dim=-1) - optical))  # exclusive sum: T_i = exp(−Σ_{j<i} σ_j δ_j)
    weights = transmittance * alpha  # (N, S)
    opacity = weights.sum(-1)
    rgb = (weights[..., None] * colour).sum(-2) + (1.0 - opacity)[:, None] * background
    depth = (weights * samples).sum(-1) / opacity.clamp_min(1e-10)
    return rgb, depth, opacity, weights


def importance_edges(edges: Tensor, weights: Tensor, count: int, jitter: Optional[Tensor] = None) -> Tensor:
    """The bins' edges (N, S+1) joined with ``count`` more drawn from the piecewise-constant density ∝ the
    weights (N, S) by inverse transform sampling, sorted: (N, S+1+count).

    u_k = (k + j_k)/count with j = ``jitter`` (N, count) in [0, 1) or ½ (stratified in probability), mapped
    through the inverse of the cumulative weights, linear inside each bin. Nothing is differentiated here.
    """
    with torch.no_grad():
        weights = weights + WEIGHT_FLOOR
        cdf = torch.cumsum(weights / weights.sum(-1, keepdim=True), dim=-1)
        cdf = torch.cat([torch.zeros_like(cdf[:, :1]), cdf.clamp_max(1.0)], dim=-1)  # (N, S+1), from 0 to 1
        offsets = 0.5 if jitter is None else jitter
        u = (torch.arange(count, device=edges.device, dtype=edges.dtype) + offsets) / count  # (N, count) or (count,)
        u = u.expand(edges.shape[0], count).contiguous()
        upper = torch.searchsorted(cdf, u, right=True).clamp(1, edges.shape[1] - 1)  # bin k holds cdf[k-1] ≤ u < cdf[k]
        lower = upper - 1
        c0, c1 = cdf.gather(1, lower), cdf.gather(1, upper)
        e0, e1 = edges.gather(1, lower), edges.gather(1, upper)
        fraction = ((u - c0) / (c1 - c0).clamp_min(1e-10)).clamp(0.0, 1.0)
        drawn = e0 + fraction * (e1 - e0)
        return torch.sort(torch.cat([edges, drawn], dim=-1), dim=-1).values


class VolumeRenderer(nn.Module):
    """C(r) = Σ_i T_i (1 − e^{−σ_i δ_i}) c_i + T_S c_bg for a batch of rays (module docstring).

    Args:
        samples: stratified samples per ray (NeRF: 64 coarse; the Fourier-features notebook: 128, no fine pass).
        importance_samples: extra samples drawn from the first pass's weights for a second pass (NeRF: 128);
            0 renders one pass.

    ``forward`` returns ``RenderedRays``; with hierarchical sampling ``rgb`` holds the coarse and the fine
    colour (the loss of NeRF, eq. 6, sums the two), depth and opacity are the fine pass's.
    """

    def __init__(self, samples: int = 64, importance_samples: int = 0) -> None:
        super().__init__()
        if samples < 1 or importance_samples < 0:
            raise InputError(
                f"volume rendering needs samples ≥ 1 and importance_samples ≥ 0, got {samples}, {importance_samples}"
            )
        self.samples, self.importance_samples = samples, importance_samples

    def forward(
        self,
        field: RadianceField,
        origins: Tensor,
        directions: Tensor,
        near: Union[float, Tensor],
        far: Union[float, Tensor],
        box: Tensor,
        background: Tensor,
        generator: Optional[torch.Generator] = None,
    ) -> RenderedRays:
        """Render N rays (origins, directions (N, 3)) through ``field`` (points -> density, colour); with a
        ``generator`` the samples are jittered (training), without it they sit at bin midpoints."""
        t0, t1 = ray_box_interval(origins, directions, box, near, far)
        ray_norm = directions.norm(dim=-1)
        jitter = self._uniform((len(origins), self.samples), origins, generator)
        edges, samples = stratified_bins(t0, t1, self.samples, jitter)
        rgb, depth, opacity, weights = self._pass(field, origins, directions, edges, samples, ray_norm, background)
        if self.importance_samples == 0:
            return RenderedRays(rgb[None], depth, opacity)
        jitter = self._uniform((len(origins), self.importance_samples), origins, generator)
        fine_edges = importance_edges(edges, weights.detach(), self.importance_samples, jitter)
        fine_samples = 0.5 * (fine_edges[:, 1:] + fine_edges[:, :-1])  # midpoints of the merged bins
        fine, depth, opacity, _ = self._pass(field, origins, directions, fine_edges, fine_samples, ray_norm, background)
        return RenderedRays(torch.stack([rgb, fine]), depth, opacity)

    @staticmethod
    def _uniform(shape: tuple[int, int], like: Tensor, generator: Optional[torch.Generator]) -> Optional[Tensor]:
        if generator is None:
            return None
        return torch.rand(shape, generator=generator, device=like.device, dtype=like.dtype)

    @staticmethod
    def _pass(
        field: RadianceField,
        origins: Tensor,
        directions: Tensor,
        edges: Tensor,
        samples: Tensor,
        ray_norm: Tensor,
        background: Tensor,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        points = origins[:, None, :] + samples[..., None] * directions[:, None, :]  # (N, S, 3)
        density, colour = field(points)  # (N, S), (N, S, C)
        return composite(density, colour, edges, samples, ray_norm, background.to(colour.dtype))

    def extra_repr(self) -> str:
        return f"samples={self.samples}, importance_samples={self.importance_samples}"
