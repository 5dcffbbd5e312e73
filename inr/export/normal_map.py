"""Normal-map images of a triangle mesh: one ray per pixel from a pinhole camera, the first triangle hit, its
unit normal n shown as the colour ½(n + 1) (x red, y green, z blue), white where no triangle is hit.

The camera follows the paper's 3D shape notebook (``pose_spherical(90 + 10 + 45, −30, 2)``, focal 0.9·H) in
direction: the mesh's box is mapped to [−1, 1]³ around its centre and the camera looks at the centre from
azimuth 145° and elevation 30°, but from distance 3 instead of 2, so that a shape filling its box is seen whole. Rays are cast through libigl's AABB tree, all pixels in one call.
"""

from __future__ import annotations

import math

import numpy as np

from inr.errors import InputError
from inr.extras import require
from inr.geometry.sampling import face_normals_and_areas

# the notebook's render camera: pose_spherical(theta=90 + 10 + 45, phi=-30, radius=2), focal = 0.9 · H; radius 3 here
AZIMUTH, ELEVATION, DISTANCE, FOCAL = 145.0, 30.0, 3.0, 0.9


def camera_rays(size: int, azimuth: float = AZIMUTH, elevation: float = ELEVATION, distance: float = DISTANCE):
    """Origins (size², 3) and unit directions (size², 3) of a pinhole camera on a sphere of radius ``distance``
    around the origin, looking at it, z up; pixel rows from top to bottom."""
    az, el = math.radians(azimuth), math.radians(elevation)
    eye = distance * np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    forward = -eye / np.linalg.norm(eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    i, j = np.meshgrid(np.arange(size) + 0.5, np.arange(size) + 0.5, indexing="xy")  # (size, size): column, row
    x, y = (i - size / 2) / (FOCAL * size), -(j - size / 2) / (FOCAL * size)
    directions = forward + x[..., None] * right + y[..., None] * up  # (size, size, 3)
    directions = directions.reshape(-1, 3) / np.linalg.norm(directions.reshape(-1, 3), axis=1, keepdims=True)
    return np.broadcast_to(eye, directions.shape).copy(), directions


def normal_map(verts: np.ndarray, faces: np.ndarray, box: np.ndarray, size: int = 256) -> np.ndarray:
    """The mesh's normal map (size, size, 3) uint8, seen by the notebook's camera around ``box`` (2, 3).

    Example:
        >>> from inr.geometry.procedural import torus_mesh
        >>> v, f = torus_mesh(0.3, 0.1)
        >>> image = normal_map(v, f, np.array([[-0.4, -0.4, -0.1], [0.4, 0.4, 0.1]]), size=32)
        >>> image.shape, bool((image == 255).all(axis=-1).any()), bool((image != 255).any())
        ((32, 32, 3), True, True)
    """
    igl = require("igl", extra="meshes", what="rendering a mesh")

    if len(faces) == 0:
        raise InputError("the mesh has no triangles to render")
    box = np.asarray(box, dtype=np.float64)
    centre, half = box.mean(axis=0), float((box[1] - box[0]).max()) / 2 or 1.0
    v = np.ascontiguousarray((np.asarray(verts, dtype=np.float64) - centre) / half)  # the box into [−1, 1]³
    f = np.ascontiguousarray(faces, dtype=np.int64)
    origins, directions = camera_rays(size)
    tree = igl.AABB()
    tree.init(v, f)
    hit, _, _ = tree.intersect_ray_first(v, f, origins, directions)  # triangle index per ray, −1 for none
    normals, _ = face_normals_and_areas(verts, faces)
    image = np.full((size * size, 3), 255, dtype=np.uint8)
    seen = hit >= 0
    image[seen] = np.round(255 * 0.5 * (normals[hit[seen]] + 1)).astype(np.uint8)
    return image.reshape(size, size, 3)
