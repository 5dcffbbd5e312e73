"""Geometry of triangle meshes and level sets, as pure functions (arrays in, arrays or numbers out): the paper's
normalisation, inside/outside by winding numbers, distances, surface sampling, marching cubes over a box, and
the surface measures (Chamfer, normal consistency, F-score; IoU is ``inr.metrics.iou``). Procedural meshes for tests and the bundled data.
"""

from inr.geometry.containment import contains, fast_winding_number, solid_angles, winding_number
from inr.geometry.distance import MeshQueries
from inr.geometry.level_set import box_axes, level_set_mesh, marching_cubes, sample_box
from inr.geometry.normalize import BOX_MARGIN, bounding_box, normalize_vertices, uniform_in_box
from inr.geometry.procedural import torus_knot_tube, torus_mesh
from inr.geometry.sampling import face_normals_and_areas, near_surface, sample_surface
from inr.geometry.surface_metrics import METRICS, nearest, surface_distances

__all__ = [
    "BOX_MARGIN",
    "METRICS",
    "MeshQueries",
    "bounding_box",
    "box_axes",
    "contains",
    "face_normals_and_areas",
    "fast_winding_number",
    "level_set_mesh",
    "marching_cubes",
    "near_surface",
    "nearest",
    "normalize_vertices",
    "sample_box",
    "sample_surface",
    "solid_angles",
    "surface_distances",
    "torus_knot_tube",
    "torus_mesh",
    "uniform_in_box",
    "winding_number",
]
