"""Bad meshes through the command line (``train.py --config shape.yaml --data.init_args.path X``): one line
naming the file and the problem, exit 2, nothing written; the real ``train.py`` in a subprocess for one of them."""

import pytest

import inr.errors

TETRA = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
CASES = {
    "missing file": (None, "no/such/mesh.obj", "no/such/mesh.obj: file not found"),
    "unsupported extension": ("mesh.xyz", "0 0 0\n", "unsupported mesh extension '.xyz'"),
    "unreadable": (
        "mesh.ply",
        "ply\nformat binary_little_endian 1.0\nelement vertex 99\nproperty float x\nend_header\nxx",
        "not a readable mesh",
    ),
    "empty file": ("mesh.obj", "", "file is empty"),
    "empty mesh": ("mesh.obj", TETRA, "the mesh is empty (no triangles)"),
    "nan vertex": (
        "mesh.obj",
        TETRA.replace("v 0 1 0", "v nan 1 0") + "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
        "1 of 4 vertices have NaN or infinite",
    ),
    "open mesh": (
        "mesh.obj",
        TETRA + "f 1 3 2\nf 1 2 4\nf 1 4 3\n",
        "not watertight, so it has no well-defined inside for occupancy; set data.init_args.open_mesh winding_number",
    ),
    "zero volume": ("mesh.obj", TETRA + "f 1 2 3\nf 1 3 2\n", "the mesh is closed but encloses no volume"),
    "collapsed": ("mesh.obj", "v 1 1 1\nv 1 1 1\nv 1 1 1\nf 1 2 3\n", "collapses to one point"),
}


def command(save_dir, path):
    return ["--config", "shape.yaml", "--data.init_args.path", str(path), "--trainer.logger.init_args.save_dir", str(save_dir)]


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_mesh_is_one_line_exit_2_nothing_written(tmp_path, run_cli, kit, name):
    filename, content, expected = CASES[name]
    path = filename if filename is None else tmp_path / filename
    if filename is None:
        path = content
    else:
        path.write_text(content)
    outcome = run_cli(command(tmp_path / "runs", path))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert not (tmp_path / "runs").exists()


def test_a_mesh_beyond_the_memory_bound_is_refused_with_its_estimate(tmp_path, run_cli, monkeypatch):
    monkeypatch.setattr(inr.errors, "available_memory_bytes", lambda: 2**20)
    monkeypatch.setattr("inr.run.cli.check_model_memory", lambda *args, **kwargs: None)  # the mesh's check, not the model's
    outcome = run_cli(command(tmp_path / "runs", "data/trefoil.obj"))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "trefoil.obj (about 9,125 triangles in 0.3 MiB) needs an estimated" in outcome.errors[0]
    assert "simplify the mesh" in outcome.errors[0]


@pytest.mark.slow
def test_the_real_command_refuses_an_open_mesh(tmp_path, kit):
    (tmp_path / "open.obj").write_text(TETRA + "f 1 3 2\nf 1 2 4\nf 1 4 3\n")
    proc = kit.run_script(command(tmp_path / "runs", tmp_path / "open.obj"))
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and len(errors) == 1 and "open.obj: the mesh is not watertight" in errors[0]
    assert "data.init_args.mode sdf with data.init_args.sign unsigned" in errors[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("name", ["meshes", "shape.obj"])
def test_a_directory_given_as_the_mesh_is_called_a_directory(tmp_path, run_cli, name):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "inside.obj").write_text(TETRA + "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    outcome = run_cli(command(tmp_path / "runs", folder))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert outcome.errors[0] == f"error: {folder}: a directory, not a mesh file (.obj, .ply, .stl, .off, .glb)"
    assert not (tmp_path / "runs").exists()
