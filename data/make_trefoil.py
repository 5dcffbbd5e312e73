"""Writes data/trefoil.obj, the bundled mesh of the shape configs: a ribbed, fluted tube around a trefoil knot.

    python data/make_trefoil.py            # rewrites data/trefoil.obj (the same bytes every time)

The mesh is ``inr.geometry.procedural.torus_knot_tube()`` with its defaults: the (2, 3) torus knot on a torus
of radii (1, 0.42), a tube of radius 0.17 with 60 ribs across it (depth 15 %) and 6 flutes along it (10 %),
360 × 16 vertices, 11,520 triangles. Closed (watertight), one handle, holes through it, and detail (the ribs)
about 13 cycles per unit of the normalised frame, where the whole knot spans 1.
"""

from pathlib import Path

from inr.geometry.procedural import torus_knot_tube

OUT = Path(__file__).resolve().parent / "trefoil.obj"


def main() -> None:
    verts, faces = torus_knot_tube()
    lines = [
        "# trefoil knot tube, inr.geometry.procedural.torus_knot_tube() (data/make_trefoil.py)",
        "# vertices in x, y, z; triangles counter-clockwise seen from outside",
    ]
    lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in verts]
    lines += [f"f {a} {b} {c}" for a, b, c in faces + 1]  # OBJ indices start at 1
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(verts):,} vertices, {len(faces):,} triangles, {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
