"""The synthetic scene's ground truth: analytic hits against ray marching, shading against its formula."""

import math

import pytest
import torch

from inr.data.cameras import Intrinsics, look_at, view_rays
from inr.data.scenes import MISS, Box, Scene, Sphere, blocks_scene, make_scene
from inr.errors import InputError


def inside(primitive, p):
    if isinstance(primitive, Sphere):
        return (p - torch.tensor(primitive.centre, dtype=p.dtype)).norm(dim=-1) <= primitive.radius
    lo, hi = torch.tensor(primitive.lo, dtype=p.dtype), torch.tensor(primitive.hi, dtype=p.dtype)
    return ((p >= lo) & (p <= hi)).all(-1)


def test_analytic_hits_match_ray_marching_for_every_primitive():
    """For 200 rays from random cameras, the first of 16,000 steps of 5e-4 that lies inside a primitive is
    within one step of the analytic depth, and rays that march through nothing are reported as misses."""
    scene = blocks_scene()
    poses = scene.camera_poses(4, seed=3)
    gen = torch.Generator().manual_seed(0)
    index = torch.randint(64 * 64, (4, 50), generator=gen)
    intr = scene.intrinsics(64)
    origins, directions = [], []
    for pose, pick in zip(poses, index):
        o, d = view_rays(pose.double(), intr)
        origins.append(o[pick]), directions.append(d[pick])
    o, d = torch.cat(origins), torch.cat(directions)
    _, depth = scene.trace(o, d)
    step = 5e-4
    t = 2.0 + step * torch.arange(16000, dtype=torch.float64)  # t ∈ [2, 10)
    points = o[:, None, :] + t[None, :, None] * d[:, None, :]  # (R, T, 3)
    hit = torch.zeros(points.shape[:2], dtype=torch.bool)
    for primitive in scene.primitives:
        hit |= inside(primitive, points)
    first = torch.where(hit.any(1), t[hit.float().argmax(1)], torch.full((len(o),), MISS, dtype=torch.float64))
    assert torch.equal(first.isinf(), depth.isinf()) and (~depth.isinf()).sum() > 100
    seen = ~depth.isinf()
    assert ((first[seen] - depth[seen]).abs() <= step).all()


def test_a_sphere_seen_head_on_has_the_shaded_colour_and_depth_of_the_formula():
    light = (0.0, 0.6, 0.8)
    scene = Scene([Sphere((0.0, 0.0, 0.0), 0.5, (0.8, 0.4, 0.2))], light=light, ambient=0.3, background=(0.0, 0.0, 1.0))
    intr = Intrinsics.from_focal(33, 33, 40.0)
    pose = look_at(torch.tensor([0.0, 0.0, 4.0]), torch.zeros(3), torch.tensor([0.0, 1.0, 0.0]))
    image, depth = scene.render(pose[None], intr)
    # the centre pixel sees the pole facing the camera: n = (0, 0, 1), n·l = 0.8, depth 4 − r
    shade = 0.3 + 0.7 * 0.8
    torch.testing.assert_close(image[0, 16, 16], torch.tensor([0.8, 0.4, 0.2]) * shade)
    assert math.isclose(depth[0, 16, 16].item(), 3.5, rel_tol=1e-6)
    # the silhouette: a ray at image offset x/f hits the sphere iff its distance to the centre ≤ r
    offsets = (torch.arange(33) + 0.5 - 16.5) / 40.0
    distance = 4.0 * offsets.abs() / torch.sqrt(1 + offsets**2)
    assert torch.equal(depth[0, 16].isfinite(), distance <= 0.5)
    torch.testing.assert_close(image[0, 0, 0], torch.tensor([0.0, 0.0, 1.0]))  # a corner sees the background


def test_textures_alternate_across_cells_and_bands():
    floor = Box((-1.0, -1.0, -0.2), (1.0, 1.0, 0.0), (1.0, 1.0, 1.0), checker=0.5, checker_colour=(0.0, 0.0, 0.0))
    points = torch.tensor([[0.25, 0.25, 0.0], [0.75, 0.25, 0.0], [0.75, 0.75, 0.0]])
    colours = floor.albedo(points)[:, 0]
    assert colours[0] != colours[1] and colours[0] == colours[2]
    ball = Sphere((0.0, 0.0, 0.0), 1.0, (1.0, 0.0, 0.0), stripes=0.2, stripe_colour=(0.0, 1.0, 0.0))
    bands = ball.albedo(torch.tensor([[0.0, 0.0, 0.1], [0.0, 0.0, 0.3], [0.0, 0.0, 0.5]]))
    assert torch.equal(bands[:, 0], torch.tensor([1.0, 0.0, 1.0]))


def test_scenes_are_chosen_by_name():
    assert make_scene("blocks", background=(0.0, 0.0, 0.0)).background == (0.0, 0.0, 0.0)
    with pytest.raises(InputError, match="unknown scene 'castle'"):
        make_scene("castle")
