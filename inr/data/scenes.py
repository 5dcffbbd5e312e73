"""A synthetic scene with exact ground truth: opaque coloured primitives rendered by analytic ray intersection.

Every pixel's colour is that of the first surface its ray (through the pixel centre, ``inr.data.cameras``)
hits, shaded by a fixed distant light, C = a(p) (k_a + (1 − k_a) max(0, n·l)), or the background where the ray
hits nothing. The shading depends on the surface point only, not on the viewer (no highlights), so one
field of density and colour, with no view dependence, can reproduce every view exactly; the textures
(a checkerboard floor, a striped ball) give the views detail up to the pixel scale, which a coordinate
network without an input mapping cannot fit. Intersections are closed forms, vectorised over all rays, so
generating 100 views of 64×64 pixels takes well under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

import torch
from torch import Tensor

from inr.data.cameras import Intrinsics, orbit_poses, pixel_rays
from inr.errors import InputError

# no hit: the ray parameter of rays that see the background
MISS = math.inf
# hits closer than this to the ray origin are ignored (the camera is never inside a primitive)
HIT_EPS = 1e-6


@dataclass
class Sphere:
    """|p − centre| ≤ radius; with ``stripes`` > 0, bands of height ``stripes`` along z alternate between
    ``colour`` and ``stripe_colour``."""

    centre: tuple[float, float, float]
    radius: float
    colour: tuple[float, float, float]
    stripes: float = 0.0
    stripe_colour: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def intersect(self, o: Tensor, d: Tensor) -> tuple[Tensor, Tensor]:
        """Nearest t > 0 of |o + t d − c|² = r² (N,) (``MISS`` if none) and the outward normal there (N, 3)."""
        c = torch.tensor(self.centre, dtype=o.dtype, device=o.device)
        oc = o - c
        a, b, k = (d * d).sum(-1), 2 * (d * oc).sum(-1), (oc * oc).sum(-1) - self.radius**2
        disc = b * b - 4 * a * k
        root = disc.clamp_min(0).sqrt()
        near, far = (-b - root) / (2 * a), (-b + root) / (2 * a)
        t = torch.where(near > HIT_EPS, near, far)
        t = torch.where((disc >= 0) & (t > HIT_EPS), t, torch.full_like(t, MISS))
        normal = (o + torch.nan_to_num(t, posinf=0.0)[:, None] * d - c) / self.radius
        return t, normal

    def albedo(self, p: Tensor) -> Tensor:
        base = torch.tensor(self.colour, dtype=p.dtype, device=p.device).expand_as(p)
        if self.stripes <= 0:
            return base
        band = torch.floor((p[:, 2] - self.centre[2]) / self.stripes).remainder(2)[:, None]  # 0 or 1 per point
        return torch.where(band > 0, torch.tensor(self.stripe_colour, dtype=p.dtype, device=p.device), base)


@dataclass
class Box:
    """The axis-aligned box lo ≤ p ≤ hi; with ``checker`` > 0, cubic cells of side ``checker`` alternate
    between ``colour`` and ``checker_colour`` (a 3D checkerboard, seen on the faces)."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    colour: tuple[float, float, float]
    checker: float = 0.0
    checker_colour: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def intersect(self, o: Tensor, d: Tensor) -> tuple[Tensor, Tensor]:
        """Entry t > 0 of the ray into the box (slab method) (N,) (``MISS`` if none), and the normal of the
        face entered (N, 3)."""
        lo = torch.tensor(self.lo, dtype=o.dtype, device=o.device)
        hi = torch.tensor(self.hi, dtype=o.dtype, device=o.device)
        safe = torch.where(d.abs() < 1e-12, torch.full_like(d, 1e-12), d)
        t_lo, t_hi = (lo - o) / safe, (hi - o) / safe
        t_near, t_far = torch.minimum(t_lo, t_hi), torch.maximum(t_lo, t_hi)
        enter, axis = t_near.max(-1)
        leave = t_far.amin(-1)
        t = torch.where((enter <= leave) & (enter > HIT_EPS), enter, torch.full_like(enter, MISS))
        normal = torch.zeros_like(o).scatter_(1, axis[:, None], -torch.sign(d.gather(1, axis[:, None])))
        return t, normal

    def albedo(self, p: Tensor) -> Tensor:
        base = torch.tensor(self.colour, dtype=p.dtype, device=p.device).expand_as(p)
        if self.checker <= 0:
            return base
        # cell parity; the 1e-4 nudge keeps points on a face from flickering between the two cells they touch
        cells = torch.floor((p + 1e-4) / self.checker).sum(-1).remainder(2)[:, None]
        return torch.where(cells > 0, torch.tensor(self.checker_colour, dtype=p.dtype, device=p.device), base)


Primitive = Union[Sphere, Box]


@dataclass
class Scene:
    """Opaque primitives under a distant light, inside the cube [−bound, bound]³, seen by cameras on a
    sphere of ``camera_radius`` around the origin looking at ``target``; ``near``/``far`` bound every ray's depth."""

    primitives: list[Primitive]
    light: tuple[float, float, float] = (0.4, -0.3, 0.85)
    ambient: float = 0.35
    background: tuple[float, float, float] = (1.0, 1.0, 1.0)
    bound: float = 1.5
    camera_radius: float = 4.0
    elevation_deg: tuple[float, float] = (20.0, 60.0)
    fov_deg: float = 36.0
    target: tuple[float, float, float] = (0.0, 0.0, -0.25)
    near: float = 2.0
    far: float = 6.0

    def trace(self, origins: Tensor, directions: Tensor) -> tuple[Tensor, Tensor]:
        """Colours (N, 3) and hit depths t (N,) (``MISS`` for background) of rays (N, 3) each."""
        best = torch.full(origins.shape[:1], MISS, dtype=origins.dtype, device=origins.device)
        colour = torch.tensor(self.background, dtype=origins.dtype, device=origins.device).expand_as(origins).clone()
        light = torch.nn.functional.normalize(torch.tensor(self.light, dtype=origins.dtype, device=origins.device), dim=0)
        for primitive in self.primitives:  # a handful of primitives; every ray at once for each
            t, normal = primitive.intersect(origins, directions)
            closer = t < best
            if not closer.any():
                continue
            p = origins + torch.where(closer, t, torch.zeros_like(t))[:, None] * directions
            shade = self.ambient + (1 - self.ambient) * (normal * light).sum(-1).clamp_min(0)
            colour = torch.where(closer[:, None], primitive.albedo(p) * shade[:, None], colour)
            best = torch.where(closer, t, best)
        return colour.clamp(0, 1), best

    def render(self, poses: Tensor, intrinsics: Intrinsics) -> tuple[Tensor, Tensor]:
        """Images (V, H, W, 3) and depth maps (V, H, W) (``MISS`` where the background shows) of ``poses``."""
        views, h, w = len(poses), intrinsics.height, intrinsics.width
        index = torch.arange(views * h * w)
        pixel = index % (h * w)
        origins, directions = pixel_rays(poses.to(torch.float64), index // (h * w), pixel // w, pixel % w, intrinsics)
        colour, depth = self.trace(origins, directions)
        return colour.float().reshape(views, h, w, 3), depth.float().reshape(views, h, w)

    def camera_poses(self, count: int, seed: int) -> Tensor:
        """``count`` cameras at random azimuths and elevations (uniform in ``elevation_deg``) on the camera
        sphere, looking at ``target``, (count, 4, 4); the same seed gives the same cameras."""
        gen = torch.Generator().manual_seed(seed)
        azimuths = torch.rand(count, generator=gen, dtype=torch.float64) * 2 * math.pi
        lo, hi = (math.radians(e) for e in self.elevation_deg)
        elevations = lo + (hi - lo) * torch.rand(count, generator=gen, dtype=torch.float64)
        return orbit_poses(azimuths, elevations, self.camera_radius, torch.tensor(self.target)).float()

    def intrinsics(self, resolution: int) -> Intrinsics:
        return Intrinsics.from_field_of_view(resolution, resolution, math.radians(self.fov_deg))


def blocks_scene() -> Scene:
    """A checkered floor slab, a red ball, a ball striped every 0.12 units, a blue block and a green pillar,
    all inside [−1.2, 1.2]³ (z up)."""
    return Scene(
        [
            Box((-1.2, -1.2, -0.75), (1.2, 1.2, -0.6), (0.85, 0.85, 0.8), checker=0.3, checker_colour=(0.25, 0.3, 0.4)),
            Sphere((0.35, -0.35, -0.15), 0.45, (0.9, 0.25, 0.2)),
            Sphere((-0.45, 0.45, -0.25), 0.35, (0.95, 0.85, 0.2), stripes=0.12, stripe_colour=(0.3, 0.2, 0.6)),
            Box((-0.85, -0.85, -0.6), (-0.25, -0.3, 0.25), (0.2, 0.45, 0.85)),
            Box((0.35, 0.45, -0.6), (0.65, 0.75, 0.6), (0.3, 0.75, 0.35)),
        ]
    )


SCENES = {"blocks": blocks_scene}


def make_scene(name: str, background: Optional[tuple[float, float, float]] = None) -> Scene:
    if name not in SCENES:
        raise InputError(f"data.scene: unknown scene {name!r}; choose one of {', '.join(SCENES)}")
    scene = SCENES[name]()
    if background is not None:
        scene.background = tuple(background)
    return scene
