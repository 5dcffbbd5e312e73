"""Volume rendering against closed forms: a slab of constant density, its expected depth, the box clipping,
hierarchical sampling, and gradients in float64."""

import math

import pytest
import torch

from inr.operators.rendering import VolumeRenderer, composite, importance_edges, ray_box_interval, stratified_bins

WIDE = 100.0  # the slab's extent across the rays: every ray leaves through its z faces


def slab_field(sigma: float, colour, z_range):
    """σ inside z ∈ z_range (any x, y), 0 outside; a constant colour."""
    lo, hi = z_range

    def field(points):
        inside = (points[..., 2] >= lo) & (points[..., 2] <= hi)
        density = torch.where(inside, torch.full_like(points[..., 2], sigma), torch.zeros_like(points[..., 2]))
        return density, torch.tensor(colour, dtype=points.dtype).expand(*points.shape[:-1], 3)

    return field


def oblique_rays(n: int, dtype=torch.float64):
    """Rays from z = 5 going down at different slants, directions deliberately not unit length."""
    gen = torch.Generator().manual_seed(0)
    slant = (torch.rand(n, 2, generator=gen, dtype=dtype) - 0.5) * 0.8
    directions = torch.cat([slant, -torch.ones(n, 1, dtype=dtype)], 1) * (0.5 + torch.rand(n, 1, generator=gen, dtype=dtype))
    origins = torch.cat([torch.zeros(n, 2, dtype=dtype), torch.full((n, 1), 5.0, dtype=dtype)], 1)
    return origins, directions


def path_length(directions, dz):
    """World length of a ray's crossing of a slab of thickness dz: dz ‖d‖ / |d_z|."""
    return dz * directions.norm(dim=-1) / directions[:, 2].abs()


@pytest.mark.parametrize("samples", [1, 7, 64])
def test_a_slab_filling_the_sampled_interval_renders_the_closed_form_exactly(samples):
    """Box = slab, so every bin lies inside it: C = c (1 − e^{−σL}) + c_bg e^{−σL} for any number of samples and
    any jitter, with L the slanted path length (the ‖d‖ factor of δ_i)."""
    sigma, colour, bg = 1.7, (0.2, 0.5, 0.9), torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64)
    origins, directions = oblique_rays(32)
    box = torch.tensor([[-WIDE, -WIDE, -0.5], [WIDE, WIDE, 0.5]], dtype=torch.float64)
    out = VolumeRenderer(samples)(
        slab_field(sigma, colour, (-0.5, 0.5)), origins, directions, 0.0, 100.0, box, bg, torch.Generator().manual_seed(1)
    )
    transmitted = torch.exp(-sigma * path_length(directions, 1.0))
    expected = torch.tensor(colour, dtype=torch.float64) * (1 - transmitted)[:, None] + bg * transmitted[:, None]
    torch.testing.assert_close(out.rgb[0], expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(out.opacity, 1 - transmitted, rtol=0, atol=1e-12)


def test_a_slab_inside_a_longer_interval_converges_to_the_closed_form_and_its_expected_depth():
    """Bins straddle the slab's faces, so the error is at most the optical depth of one bin at each face,
    σ δ ‖d‖; with 4096 samples it is below 2e-3, and the expected depth matches
    E[t | stopped] = a + 1/σ' − L' e^{−σ'L'}/(1 − e^{−σ'L'}) (σ' = σ‖d‖/|d_z| per unit of t, L' = its t-length)."""
    sigma, colour, bg = 2.5, (1.0, 1.0, 1.0), torch.zeros(3, dtype=torch.float64)
    origins, directions = oblique_rays(16)
    box = torch.tensor([[-WIDE, -WIDE, -2.0], [WIDE, WIDE, 2.0]], dtype=torch.float64)
    out = VolumeRenderer(4096)(slab_field(sigma, colour, (-0.5, 0.3)), origins, directions, 0.0, 100.0, box, bg)
    opacity = 1 - torch.exp(-sigma * path_length(directions, 0.8))
    torch.testing.assert_close(out.opacity, opacity, rtol=0, atol=2e-3)
    rate = sigma * directions.norm(dim=-1)  # optical depth per unit of the ray parameter t
    t_enter, t_len = (5.0 - 0.3) / directions[:, 2].abs(), 0.8 / directions[:, 2].abs()
    decay = torch.exp(-rate * t_len)
    depth = t_enter + 1 / rate - t_len * decay / (1 - decay)
    torch.testing.assert_close(out.depth, depth, rtol=0, atol=5e-3)


def test_the_error_of_a_straddled_slab_is_bounded_by_one_bin_per_face():
    """Midpoint quadrature puts a bin that a face crosses wholly inside or outside: the optical depth is off by
    at most σ δ ‖d‖ per face, so |Δ opacity| ≤ 2 σ δ ‖d‖, a bound that falls as 1/S."""
    origins, directions = oblique_rays(8)
    box = torch.tensor([[-WIDE, -WIDE, -2.0], [WIDE, WIDE, 2.0]], dtype=torch.float64)
    field, bg = slab_field(3.0, (1.0, 1.0, 1.0), (-0.41, 0.37)), torch.zeros(3, dtype=torch.float64)
    exact = 1 - torch.exp(-3.0 * path_length(directions, 0.78))
    for samples in (16, 128, 1024):
        error = (VolumeRenderer(samples)(field, origins, directions, 0.0, 100.0, box, bg).opacity - exact).abs()
        bin_length = path_length(directions, 4.0) / samples  # the box's 4 units of z in S bins
        assert (error <= 2 * 3.0 * bin_length).all(), (samples, error.max().item())
        assert error.max() > 0  # the faces do straddle bins: the bound is exercised, not trivially met


def test_rays_are_clipped_to_the_box_and_a_miss_renders_the_background():
    box = torch.tensor([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]])
    origins = torch.tensor([[0.0, 0.0, 5.0], [3.0, 0.0, 5.0], [0.0, 0.0, 0.5]])
    directions = torch.tensor([[0.0, 0.0, -2.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0]])
    t0, t1 = ray_box_interval(origins, directions, box, 0.1, 10.0)
    torch.testing.assert_close(t0[[0, 2]], torch.tensor([2.0, 0.1]))  # d = −2 meets the box at t ∈ [2, 3]; from
    torch.testing.assert_close(t1[[0, 2]], torch.tensor([3.0, 1.5]))  # inside the box the interval starts at near
    assert t1[1] == t0[1]  # a ray beside the box: an empty interval
    dense = lambda p: (torch.full_like(p[..., 0], 50.0), torch.zeros(*p.shape[:-1], 3))
    out = VolumeRenderer(16)(dense, origins, directions, 0.1, 10.0, box, torch.tensor([0.3, 0.6, 0.9]))
    torch.testing.assert_close(out.rgb[0, 1], torch.tensor([0.3, 0.6, 0.9]))
    assert out.opacity[1] == 0 and out.opacity[0] > 0.999


def test_stratified_samples_lie_in_their_bins():
    t0, t1 = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 2.5])
    jitter = torch.rand(2, 10, generator=torch.Generator().manual_seed(0))
    edges, samples = stratified_bins(t0, t1, 10, jitter)
    assert ((samples >= edges[:, :-1]) & (samples < edges[:, 1:])).all()
    torch.testing.assert_close(edges[:, [0, -1]], torch.stack([t0, t1], 1))


def test_importance_sampling_draws_in_proportion_to_the_weights():
    """Weights 0 / 0.25 / 0.75 on three unit bins: of 4000 stratified draws, ≈ 1000 fall in bin 1 and ≈ 3000 in
    bin 2 (the weight floor moves a few), none in bin 0 beyond the floor's share."""
    edges = torch.tensor([[0.0, 1.0, 2.0, 3.0]])
    weights = torch.tensor([[0.0, 0.25, 0.75]])
    merged = importance_edges(edges, weights, 4000)
    originals = torch.tensor([1.0, 1.0, 2.0])  # edges 0, 1, 2 and 3 fall in bins 0, 1, 2, 2
    counts = torch.histc(merged[0], bins=3, min=0.0, max=3.0) - originals
    assert merged.shape == (1, 4004) and (merged[0, 1:] >= merged[0, :-1]).all()
    assert abs(counts[1].item() - 1000) <= 10 and abs(counts[2].item() - 3000) <= 10 and counts[0] <= 2


def test_hierarchical_rendering_of_the_exact_slab_keeps_the_closed_form():
    """The fine pass renders the merged bins, all inside the slab: still exact; both passes are returned."""
    origins, directions = oblique_rays(8)
    box = torch.tensor([[-WIDE, -WIDE, -0.5], [WIDE, WIDE, 0.5]], dtype=torch.float64)
    out = VolumeRenderer(8, importance_samples=16)(
        slab_field(0.9, (0.0, 1.0, 0.0), (-0.5, 0.5)),
        origins,
        directions,
        0.0,
        100.0,
        box,
        torch.zeros(3, dtype=torch.float64),
        torch.Generator().manual_seed(0),
    )
    assert out.rgb.shape == (2, 8, 3)
    exact = 1 - torch.exp(-0.9 * path_length(directions, 1.0))
    torch.testing.assert_close(out.rgb[:, :, 1], exact.expand(2, 8), rtol=0, atol=1e-12)


def test_compositing_has_the_analytic_gradient_in_float64():
    gen = torch.Generator().manual_seed(0)
    density = torch.rand(3, 5, generator=gen, dtype=torch.float64, requires_grad=True)
    colour = torch.rand(3, 5, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    edges, samples = stratified_bins(torch.zeros(3, dtype=torch.float64), torch.full((3,), 2.0, dtype=torch.float64), 5)
    fn = lambda s, c: composite(
        s, c, edges, samples, torch.ones(3, dtype=torch.float64), torch.full((3,), 0.5, dtype=torch.float64)
    )[0]
    assert torch.autograd.gradcheck(fn, (density, colour))
    # ∂C/∂σ_0 of a single bin: δ e^{−σδ} (c − c_bg)
    one = composite(
        density[:1, :1],
        colour[:1, :1],
        torch.tensor([[0.0, 0.4]], dtype=torch.float64),
        torch.tensor([[0.2]], dtype=torch.float64),
        torch.ones(1, dtype=torch.float64),
        torch.zeros(3, dtype=torch.float64),
    )[0]
    (grad,) = torch.autograd.grad(one[0, 0], density)
    assert math.isclose(grad[0, 0].item(), 0.4 * math.exp(-0.4 * density[0, 0].item()) * colour[0, 0, 0].item(), rel_tol=1e-12)
