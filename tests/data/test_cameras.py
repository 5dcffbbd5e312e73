"""Cameras: the ray of every pixel lands where an independent pinhole projection (numpy, float64) puts it."""

import math

import numpy as np
import pytest
import torch

from inr.data.cameras import Intrinsics, look_at, orbit_poses, pixel_rays, turntable_poses, view_rays


def project(points: np.ndarray, pose: np.ndarray, intr: Intrinsics) -> tuple[np.ndarray, np.ndarray]:
    """World points (N, 3) -> image positions (u, v) in pixels (u right, v down) and depth along the view axis,
    written from the pinhole model: X_c = Rᵀ(X − t), u = f_x x_c / (−z_c) + c_x, v = c_y − f_y y_c / (−z_c)."""
    cam = (points - pose[:3, 3]) @ pose[:3, :3]  # rows: Rᵀ (X − t)
    depth = -cam[:, 2]
    return np.stack([intr.fx * cam[:, 0] / depth + intr.cx, intr.cy - intr.fy * cam[:, 1] / depth], 1), depth


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_points_along_a_pixels_ray_project_onto_that_pixels_centre(seed):
    rng = np.random.default_rng(seed)
    intr = Intrinsics(48, 64, 70.0, 65.0, 31.0, 25.5)  # non-square, off-centre: each term is exercised
    eye = torch.tensor(rng.normal(size=3) * 3, dtype=torch.float32)
    pose = look_at(eye, torch.tensor(rng.normal(size=3) * 0.3, dtype=torch.float32), torch.tensor([0.0, 0.0, 1.0]))
    rows, cols = torch.tensor(rng.integers(0, 48, 50)), torch.tensor(rng.integers(0, 64, 50))
    origins, directions = pixel_rays(pose[None], torch.zeros(50, dtype=torch.long), rows, cols, intr)
    t = torch.tensor(rng.uniform(0.5, 6.0, 50), dtype=torch.float32)
    points = (origins + t[:, None] * directions).double().numpy()
    uv, depth = project(points, pose.double().numpy(), intr)
    np.testing.assert_allclose(uv, np.stack([cols + 0.5, rows + 0.5], 1), atol=1e-3)  # pixel centres
    np.testing.assert_allclose(depth, t.double().numpy(), rtol=1e-5)  # t is the depth along the view axis


def test_a_known_world_point_is_hit_by_the_ray_of_the_pixel_it_projects_to():
    """A camera at (0, 0, 4) looking at the origin, y up: the origin is the image centre, and a point 1 unit to
    the right at depth 4 lies f/4 pixels right of it."""
    intr = Intrinsics.from_focal(65, 65, 80.0)  # odd size: the centre pixel's centre is the principal point
    pose = look_at(torch.tensor([0.0, 0.0, 4.0]), torch.zeros(3), torch.tensor([0.0, 1.0, 0.0]))
    origins, directions = view_rays(pose, intr)
    centre = 32 * 65 + 32
    hit = origins[centre] + 4.0 * directions[centre]
    torch.testing.assert_close(hit, torch.zeros(3), atol=1e-6, rtol=0)
    right = 32 * 65 + 32 + 20  # 20 pixels right = 20 / 80 · 4 = 1 unit at depth 4
    torch.testing.assert_close(origins[right] + 4.0 * directions[right], torch.tensor([1.0, 0.0, 0.0]), atol=1e-6, rtol=0)
    up = (32 - 20) * 65 + 32  # rows grow downwards: 20 rows up is +1 in y
    torch.testing.assert_close(origins[up] + 4.0 * directions[up], torch.tensor([0.0, 1.0, 0.0]), atol=1e-6, rtol=0)


def test_poses_are_rigid_and_look_at_their_target():
    poses = orbit_poses(torch.tensor([0.3, 2.0, 4.0]), torch.tensor([0.2, 0.7, 1.1]), 3.0, torch.tensor([0.1, -0.2, 0.3]))
    rotation = poses[:, :3, :3]
    torch.testing.assert_close(rotation.transpose(1, 2) @ rotation, torch.eye(3).expand(3, 3, 3), atol=1e-6, rtol=0)
    torch.testing.assert_close(torch.linalg.det(rotation), torch.ones(3))
    view_axis = -rotation[:, :, 2]  # the camera looks along its −z
    to_target = torch.nn.functional.normalize(torch.tensor([0.1, -0.2, 0.3]) - poses[:, :3, 3], dim=-1)
    torch.testing.assert_close(view_axis, to_target, atol=1e-6, rtol=0)
    torch.testing.assert_close((poses[:, :3, 3] - torch.tensor([0.1, -0.2, 0.3])).norm(dim=-1), torch.full((3,), 3.0))
    table = turntable_poses(8, 30.0, 4.0)
    torch.testing.assert_close(table[:, 2, 3], torch.full((8,), 4.0 * math.sin(math.radians(30.0))))


def test_resized_intrinsics_keep_the_rays_of_the_same_image_positions():
    """Halving the image halves f and c: pixel (i, j) at full size and the pixel whose centre is the same
    image position at half size see along the same ray."""
    full = Intrinsics(64, 64, 70.0, 70.0, 32.0, 32.0)
    half = full.resized(32, 32)
    assert (half.fx, half.cx) == (35.0, 16.0)
    pose = torch.eye(4)
    _, d_half = pixel_rays(pose[None], torch.zeros(1, dtype=torch.long), torch.tensor([5]), torch.tensor([9]), half)
    # the half-size pixel centre (9.5, 5.5) is (19, 11) at full size: a pixel corner, between columns 18 and 19
    x = ((9 + 0.5) * 2 - full.cx) / full.fx
    torch.testing.assert_close(d_half[0], torch.tensor([x, -((5 + 0.5) * 2 - full.cy) / full.fy, -1.0]))
