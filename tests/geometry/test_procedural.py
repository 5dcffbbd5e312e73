"""The procedural meshes and the bundled data/trefoil.obj: closed, one handle, outward, and reproducible."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import trimesh

from inr.geometry.containment import winding_number
from inr.geometry.procedural import torus_knot_tube, torus_mesh

ROOT = Path(__file__).resolve().parents[2]


def test_the_bundled_trefoil_is_the_generators_mesh_closed_with_one_handle():
    mesh = trimesh.load(ROOT / "data" / "trefoil.obj", force="mesh", process=False)
    verts, faces = torus_knot_tube()
    assert np.array_equal(mesh.faces, faces)
    assert np.abs(mesh.vertices - verts).max() <= 5e-7  # six decimals in the file
    merged = trimesh.Trimesh(mesh.vertices, mesh.faces, process=True)
    assert merged.is_watertight and merged.is_winding_consistent and merged.volume > 0
    assert merged.euler_number == 0  # V − E + F = 2 − 2g: one handle (genus 1), holes through it
    assert len(merged.split(only_watertight=False)) == 1


def test_the_script_writes_the_same_file(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_trefoil", ROOT / "data" / "make_trefoil.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "OUT", tmp_path / "t.obj")
    script.main()
    assert (tmp_path / "t.obj").read_bytes() == (ROOT / "data" / "trefoil.obj").read_bytes()


def test_the_tube_does_not_cross_itself():
    """No point is inside twice: the winding number of the tube never exceeds 1 (exact sum on a coarser tube)."""
    verts, faces = torus_knot_tube(segments=120, sides=8)
    p = np.random.default_rng(0).uniform(verts.min(0), verts.max(0), (2000, 3))
    w = winding_number(p, verts, faces)
    assert w.max() < 1.01 and w.min() > -0.01 and (w > 0.5).sum() > 50


def test_torus_volume_and_refusal_of_too_few_segments():
    verts, faces = torus_mesh(1.0, 0.3, segments=256, sides=64)
    # inscribed polygons: the 64-gon holds sin(2π/64)/(2π/64) = 0.99839 of the disc's area, the 256-gon ring 0.99990
    shrink = np.sinc(2 / 64) * np.sinc(2 / 256)  # np.sinc(x) = sin(πx)/(πx)
    assert trimesh.Trimesh(verts, faces).volume == pytest.approx(2 * np.pi**2 * 0.3**2 * shrink, rel=2e-4)
    with pytest.raises(ValueError, match="at least 3"):
        torus_knot_tube(segments=2)
