"""Containment and signed distance of points against triangle meshes: libigl, point-cloud-utils and pysdf side
by side, for speed and for accuracy against the closed forms of a torus.

    .venv/bin/python benchmarks/mesh_queries.py                    # 2^15 and 2^18 points, 11,520 and 184,320 triangles
    .venv/bin/python benchmarks/mesh_queries.py --points 32768 --repeats 5 --large   # and a 737,280-triangle mesh

Needs point-cloud-utils and pysdf beside the package's libigl (neither is a dependency of inr): ``pip install
point-cloud-utils``; pysdf has no wheel for Python 3.11 and builds only with Eigen's headers
(``apt-get install libeigen3-dev``, then ``CPLUS_INCLUDE_PATH=/usr/include/eigen3 pip install pysdf``).

Meshes: the bundled trefoil tube (``inr.geometry.procedural.torus_knot_tube`` as data/trefoil.obj holds it,
11,520 triangles), the same tube at 16× the triangles, and with ``--large`` at 64× (a scanned statue's size:
the Stanford dragon has 871k). Points: uniform in the mesh's bounding box, half of them moved to within
N(0, 0.01²) of the surface (the paper's near-surface test set), as a training step draws them.

Accuracy: a torus of radii (0.35, 0.12) tessellated with 65,536 triangles, against its closed forms
inside = hypot(hypot(x, y) − R, z) < r and d = hypot(hypot(x, y) − R, z) − r. The tessellation lies within
``gap`` of the true torus (its chords' sagitta), so a point farther than ``gap`` from the surface has one right
answer, and every method's signed distance may differ from the closed form by at most ``gap`` plus its own
error. Reported: wrong labels among those points (of 2^18), and max |d − d_true| − gap (≤ 0: exact).

Rows (each timed on the same points, repeats interleaved, median):
- ``igl fwn``: ``igl.fast_winding_number(V, F, Q)`` > ½ (Barill et al. 2018);
- ``igl wn exact``: ``igl.winding_number`` (every triangle for every point) > ½;
- ``igl sd fwn`` / ``igl sd pseudonormal``: ``igl.signed_distance`` with the fast-winding-number sign or the
  angle-weighted pseudonormal sign (Bærentzen & Aanæs 2005);
- ``pcu sd``: ``point_cloud_utils.signed_distance_to_mesh`` (distance + fast-winding-number sign);
- ``inr MeshQueries sd``: ``inr.geometry.distance.MeshQueries.signed_distance``: libigl's AABB distance (tree built
  once) with the sign of ``igl.fast_winding_number``;
- ``pysdf``: ``pysdf.SDF(V, F)``: distance by nearest-neighbour search on the vertices plus a ray-parity sign,
  ``contains`` its sign alone (pysdf has no wheel for this Python: built from source against Eigen);
- ``numpy exact wn``: ``inr.geometry.containment.winding_number`` (the suite's reference), small inputs only.
Ratios are against ``igl fwn``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from inr.geometry.containment import winding_number
from inr.geometry.distance import MeshQueries
from inr.geometry.procedural import torus_knot_tube, torus_mesh
from inr.io.command_line import CommandParser

TORUS_R, TORUS_A = 0.35, 0.12


def query_points(verts: np.ndarray, faces: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """n points: half uniform in the bounding box, half at surface samples + N(0, 0.01²)."""
    rng = np.random.default_rng(seed)
    lo, hi = verts.min(0), verts.max(0)
    uniform = rng.uniform(lo, hi, (n - n // 2, 3))
    tri = verts[faces]
    area = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    f = rng.choice(len(faces), n // 2, p=area / area.sum())
    u, v = rng.random((2, n // 2))
    su = np.sqrt(u)
    bary = np.stack([1 - su, su * (1 - v), su * v], 1)
    near = (tri[f] * bary[..., None]).sum(1) + rng.normal(0, 0.01, (n // 2, 3))
    return np.concatenate([uniform, near])


def methods(verts: np.ndarray, faces: np.ndarray, with_exact: bool) -> dict[str, Callable[[np.ndarray], tuple]]:
    """name -> (points -> (inside bool, signed distance or None)); d < 0 inside for every row."""
    import igl
    import point_cloud_utils as pcu
    import pysdf

    V, F = np.ascontiguousarray(verts, dtype=np.float64), np.ascontiguousarray(faces, dtype=np.int64)
    sdf = pysdf.SDF(V.astype(np.float32), F.astype(np.uint32))
    sign = igl.SignedDistanceType
    queries = MeshQueries(V, F)  # libigl's AABB tree built once, as the data module holds it
    rows = {
        "igl fwn": lambda q: (igl.fast_winding_number(V, F, q) > 0.5, None),
        "igl wn exact": lambda q: (igl.winding_number(V, F, q) > 0.5, None),
        "igl sd fwn": lambda q: _signed(igl.signed_distance(q, V, F, sign.SIGNED_DISTANCE_TYPE_FAST_WINDING_NUMBER)[0]),
        "igl sd pseudonormal": lambda q: _signed(igl.signed_distance(q, V, F, sign.SIGNED_DISTANCE_TYPE_PSEUDONORMAL)[0]),
        "pcu sd": lambda q: _signed(pcu.signed_distance_to_mesh(q, V, F)[0]),
        "inr MeshQueries sd": lambda q: _signed(queries.signed_distance(q)),
        "pysdf contains": lambda q: (sdf.contains(q.astype(np.float32)), None),
        "pysdf sd": lambda q: _signed(-sdf(q.astype(np.float32)).astype(np.float64)),  # pysdf: positive inside
    }
    if with_exact:
        rows["numpy exact wn"] = lambda q: (winding_number(q, V, F) > 0.5, None)
    return rows


def _signed(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return d < 0, d


def timed(fn: Callable[[np.ndarray], tuple], q: np.ndarray) -> float:
    start = time.perf_counter()
    fn(q)
    return time.perf_counter() - start


def speed(name: str, verts: np.ndarray, faces: np.ndarray, n: int, repeats: int, skip: set[str]) -> None:
    q = query_points(verts, faces, n)
    rows = {k: v for k, v in methods(verts, faces, with_exact=len(faces) * n <= 2**29).items() if k not in skip}
    for fn in rows.values():  # build each library's trees once, as a data module holding the mesh does
        fn(q[:64])
    times: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(repeats):
        for k, fn in rows.items():
            times[k].append(timed(fn, q))
    base = statistics.median(times["igl fwn"])
    print(f"\n{name}: {len(faces):,} triangles, {n:,} points, median of {repeats}")
    print("| method | ms | points/s | ratio vs igl fwn |\n|---|---:|---:|---:|")
    for k, t in times.items():
        m = statistics.median(t)
        print(f"| {k} | {1000 * m:.1f} | {n / m:,.0f} | {m / base:.2f} |")


def accuracy(n: int) -> None:
    segments, sides = 512, 128
    verts, faces = torus_mesh(TORUS_R, TORUS_A, segments=segments, sides=sides)
    # chord sagitta of the outer circle (radius R + a) and of the tube's circle, bounding the mesh–torus distance
    gap = (TORUS_R + TORUS_A) * (1 - math.cos(math.pi / segments)) + TORUS_A * (1 - math.cos(math.pi / sides))
    q = np.random.default_rng(1).uniform(-0.5, 0.5, (n, 3))
    near = query_points(verts, faces, n, seed=2)
    q = np.concatenate([q[: n // 2], near[n // 2 :]])
    true = np.hypot(np.hypot(q[:, 0], q[:, 1]) - TORUS_R, q[:, 2]) - TORUS_A
    clear = np.abs(true) > gap
    print(
        f"\naccuracy: torus ({TORUS_R}, {TORUS_A}), {len(faces):,} triangles, tessellation gap {gap:.2e}; {n:,} points, {clear.sum():,} farther than the gap"
    )
    print("| method | wrong labels (of the clear points) | max(abs(d − d_true)) − gap |\n|---|---:|---:|")
    for k, fn in methods(verts, faces, with_exact=False).items():
        if k == "igl wn exact":  # 2^18 × 131,072 terms: minutes; the exact sum is checked on a subset below
            continue
        inside, d = fn(q)
        wrong = int((inside[clear] != (true[clear] < 0)).sum())
        err = "—" if d is None else f"{np.abs(d - true).max() - gap:.1e}"
        print(f"| {k} | {wrong} | {err} |")
    sub = np.random.default_rng(3).choice(n, 4096, replace=False)  # the exact numpy sum on a subset: 4,096 × 65,536 pairs
    w = winding_number(q[sub], verts, faces)
    print(f"| numpy exact wn (4,096 of the points) | {int(((w > 0.5)[clear[sub]] != (true[sub][clear[sub]] < 0)).sum())} | — |")


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[2**15, 2**18])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--large", action="store_true", help="also a 737,280-triangle tube")
    args = parser.parse_args()
    print(f"torch threads {torch.get_num_threads()}")
    accuracy(2**18)
    meshes = [("trefoil (data/trefoil.obj)", torus_knot_tube()), ("trefoil ×16", torus_knot_tube(segments=1440, sides=64))]
    if args.large:
        meshes.append(("trefoil ×64", torus_knot_tube(segments=2880, sides=128)))
    for name, (v, f) in meshes:
        for n in args.points:
            # the exact sums cost points × triangles: only where that stays under a few seconds
            skip = set() if len(f) * n <= 2**32 else {"igl wn exact"}
            speed(name, v, f, n, args.repeats, skip)


if __name__ == "__main__":
    main()
