"""A turntable video of a mesh: the surface drawn from ``frames`` azimuths around its vertical axis.

Drawn by matplotlib's 3-D axes (painter's algorithm, flat shading by one light fixed to the shape, which turns with it), off
screen through the Agg renderer: a preview of a learned shape, not a renderer. Drawing time grows with
the triangle count (matplotlib sorts every triangle each frame), so large meshes are decimated by keeping
every k-th triangle up to ``max_triangles``.
"""

from __future__ import annotations

import numpy as np

from inr.errors import InputError, check_memory


def turntable_frames(
    verts: np.ndarray, faces: np.ndarray, frames: int = 36, size: int = 256, elevation: float = 20.0, max_triangles: int = 20_000
) -> np.ndarray:
    """Frames (T, size, size, 3) uint8 of the mesh seen from azimuths 360°·t/T at ``elevation`` degrees.

    Vertices are x, y, z (as ``inr.export.mesh`` writes them), drawn with x, y horizontal and z up; the view is
    centred on the mesh and scaled to its largest extent, the same for every frame.
    """
    if frames < 1 or size < 16:
        raise InputError(f"a turntable needs frames ≥ 1 and size ≥ 16, got {frames} and {size}")
    if len(faces) == 0:
        raise InputError("the mesh has no triangles to draw")
    check_memory(f"a turntable of {frames:,} frames of {size}×{size}", frames * size * size * 3, advice="choose fewer --frames")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LightSource
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    step = max(1, -(-len(faces) // max_triangles))  # ceil: keep every step-th triangle
    points = np.asarray(verts, dtype=np.float64)  # (x, y, z): z drawn upwards
    triangles = points[np.asarray(faces)[::step]]  # (F, 3, 3)
    centre = (points.max(0) + points.min(0)) / 2
    half = float((points.max(0) - points.min(0)).max()) / 2 or 0.5

    figure = Figure(figsize=(size / 100, size / 100), dpi=100)
    canvas = FigureCanvasAgg(figure)
    ax = figure.add_axes((0, 0, 1, 1), projection="3d")
    ax.add_collection3d(
        Poly3DCollection(
            triangles, facecolors=(0.55, 0.7, 0.9), linewidths=0, shade=True, lightsource=LightSource(azdeg=315, altdeg=45)
        )
    )
    for axis, c in zip("xyz", centre):
        getattr(ax, f"set_{axis}lim")(c - half, c + half)
    ax.set_box_aspect((1, 1, 1), zoom=1.3)  # 3-D axes keep wide margins; the default leaves the shape small
    ax.set_axis_off()
    out = np.empty((frames, size, size, 3), dtype=np.uint8)
    for t in range(frames):
        ax.view_init(elev=elevation, azim=360.0 * t / frames)
        canvas.draw()
        out[t] = np.asarray(canvas.buffer_rgba())[:size, :size, :3]
    return out
