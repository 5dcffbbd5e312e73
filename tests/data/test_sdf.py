"""Signed-distance primitives against closed forms, and their unit gradient (float64 autograd)."""

import math

import torch

from inr.data.sdf import SPHERE_RADIUS, box, builtin_sdf, cylinder, sdf_grid, sphere, torus


def test_primitives_match_closed_forms_at_chosen_points():
    p = torch.tensor([[0.5, 0.5, 0.9], [0.5, 0.5, 0.5]], dtype=torch.float64)
    torch.testing.assert_close(sphere(p, (0.5, 0.5, 0.5), 0.25), torch.tensor([0.15, -0.25], dtype=torch.float64))
    # box of half-size 0.1: a face point outside by 0.2, a corner diagonal, the centre (−0.1)
    q = torch.tensor([[0.8, 0.5, 0.5], [0.7, 0.7, 0.7], [0.5, 0.5, 0.5]], dtype=torch.float64)
    expected = torch.tensor([0.2, math.sqrt(3) * 0.1, -0.1], dtype=torch.float64)
    torch.testing.assert_close(box(q, (0.5, 0.5, 0.5), (0.1, 0.1, 0.1)), expected)
    # torus around y, R = 0.3, r = 0.05: on the ring's centre line −r, at the centre R − r
    t = torch.tensor([[0.8, 0.5, 0.5], [0.5, 0.5, 0.5]], dtype=torch.float64)
    torch.testing.assert_close(torus(t, (0.5, 0.5, 0.5), 0.3, 0.05), torch.tensor([-0.05, 0.25], dtype=torch.float64))
    torch.testing.assert_close(cylinder(t, (0.5, 0.5, 0.5), 0.1, axis=0), torch.tensor([-0.1, -0.1], dtype=torch.float64))


def test_exact_primitives_have_unit_gradient():
    gen = torch.Generator().manual_seed(0)
    p = torch.rand(200, 3, generator=gen, dtype=torch.float64).requires_grad_(True)
    for d in (
        sphere(p, (0.5, 0.5, 0.5), 0.2),
        box(p, (0.5, 0.5, 0.5), (0.1, 0.2, 0.15)),
        torus(p, (0.5, 0.5, 0.5), 0.3, 0.05),
    ):
        (g,) = torch.autograd.grad(d.sum(), p)
        torch.testing.assert_close(g.norm(dim=-1), torch.ones(200, dtype=torch.float64), atol=1e-9, rtol=0)


def test_sdf_grid_equals_pointwise_evaluation_on_the_grid():
    shape = (5, 6, 7)
    axes = [torch.arange(n) / n for n in shape]
    points = torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1).reshape(-1, 3)
    for name in ("sphere", "bumpy"):
        torch.testing.assert_close(sdf_grid(name, shape).reshape(-1), builtin_sdf(name, points))


def test_sphere_volume_fraction_matches_four_thirds_pi_r_cubed():
    # 48³ lattice points inside; the lattice estimate's error is of order the surface area × one voxel / 2
    inside = (sdf_grid("sphere", (48, 48, 48)) < 0).double().mean()
    assert abs(float(inside) - 4 / 3 * math.pi * SPHERE_RADIUS**3) < 0.01
