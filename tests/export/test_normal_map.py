"""Normal maps: a sphere seen by the camera shows its normals as colours, centred, with the background white."""

import numpy as np
import trimesh

from inr.export.normal_map import camera_rays, normal_map


def test_a_sphere_normal_map_is_its_normals_as_colours():
    mesh = trimesh.creation.icosphere(subdivisions=4, radius=0.4)
    box = np.array([[-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]])
    image = normal_map(mesh.vertices, mesh.faces, box, size=64).astype(float)
    hit = (image != 255).any(-1)
    # the sphere (radius 0.8 once the box is mapped to [−1, 1]³) seen from distance 3: a disc in the middle
    assert hit[32, 32] and not hit[0, 0] and not hit[63, 63] and 0.05 < hit.mean() < 0.5
    # the centre pixel sees the point of the sphere facing the camera: its normal points back along the ray
    origins, directions = camera_rays(64)
    centre = 32 * 64 + 32
    normal = image[32, 32] / 255 * 2 - 1
    assert np.dot(normal, -directions[centre]) > 0.98
