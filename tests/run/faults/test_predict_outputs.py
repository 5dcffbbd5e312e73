"""predict never deletes what it did not write; a radiance field's checkpoint predicts its views, and the
mesh and turntable commands answer it in one line, sized before rendering and showing progress."""

import numpy as np
import pytest

from inr.run.mesh import main as mesh_main
from inr.run.turntable import main as turntable_main


# volume.yaml at 8³, a 16-wide network on 16 features, 2 steps, no sanity pass, progress bar or callbacks
def volume(kit, save_dir) -> list[str]:
    return kit.flags("volume.yaml", 8, width=16, features=16, steps=2, quiet=True, save_dir=save_dir)


def _exit_code(call) -> int:
    try:
        call()
        return 0
    except SystemExit as exc:
        return exc.code


@pytest.fixture(scope="module")
def volume_run(tmp_path_factory, kit):
    from inr.run.cli import cli_main

    save_dir = tmp_path_factory.mktemp("volume")
    cli_main(volume(kit, save_dir))
    return save_dir


@pytest.fixture(scope="module")
def nerf_run(tmp_path_factory, tiny_nerf_args):
    from inr.run.cli import cli_main

    save_dir = tmp_path_factory.mktemp("nerf")
    cli_main(tiny_nerf_args(save_dir))
    return save_dir


@pytest.fixture
def predict_volume(kit, volume_run):
    """``predict_volume(out, *extra)``: the arguments of ``predict`` on the volume run's last checkpoint into ``out``."""
    return lambda out, *extra: ["predict", *volume(kit, volume_run), "--ckpt_path", "last", "--out", str(out), *extra]


def test_predict_refuses_to_replace_a_slices_folder_holding_other_files(tmp_path, run_cli, predict_volume):
    out = tmp_path / "out"
    (out / "slices").mkdir(parents=True)
    (out / "slices" / "notes.txt").write_text("mine")
    outcome = run_cli(predict_volume(out, "--video", "none"))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "slices holds files predict did not write (notes.txt)" in outcome.errors[0]
    assert sorted(p.name for p in out.rglob("*")) == ["notes.txt", "slices"]


def test_predict_replaces_its_own_earlier_slices(tmp_path, run_cli, predict_volume):
    out = tmp_path / "out"
    for _ in range(2):
        outcome = run_cli(predict_volume(out, "--video", "none"))
        assert outcome.code == 0, outcome.stderr[-2000:]
    assert sorted(p.name for p in (out / "slices").iterdir()) == [f"slice_{i:04d}.png" for i in range(8)]
    assert sorted(p.name for p in out.iterdir()) == ["field.npy", "slices"]


def test_predict_rejects_fps_zero(tmp_path, run_cli, predict_volume):
    outcome = run_cli(predict_volume(tmp_path / "out", "--fps", "0"))
    assert outcome.code == 2 and outcome.errors == ["error: --fps must be a finite number > 0, got 0"], outcome.stderr[-2000:]
    assert not (tmp_path / "out").exists()


def test_predict_of_a_radiance_field_renders_every_view(tiny_nerf_args, tmp_path, run_cli, nerf_run):
    out = tmp_path / "out"
    args = ["predict", *tiny_nerf_args(nerf_run), "--ckpt_path", "last"]
    outcome = run_cli([*args, "--out", str(out), "--video", "none", "--scale", "2"])
    assert outcome.code == 0, outcome.stderr[-2000:]
    field = np.load(out / "field.npy")
    assert field.shape == (6, 16, 16, 5) and np.isfinite(field).all()  # 4 + 2 views at twice their 8×8
    assert (0 <= field[..., 4]).all() and (field[..., 4] <= 1 + 1e-6).all()  # colour, depth, accumulation
    assert len(list((out / "frames").glob("frame_*.png"))) == 6


def test_mesh_of_a_radiance_field_above_its_density_is_one_line(tmp_path, capsys, nerf_run):
    """A radiance field is meshed at a density threshold (tests/export/test_radiance_mesh.py); one its density
    never reaches is refused in one line, and nothing is written."""
    ckpt = next(nerf_run.rglob("last.ckpt"))
    args = ["--ckpt", str(ckpt), "--out", str(tmp_path / "m.ply"), "--resolution", "8", "--level", "1e9"]
    code = _exit_code(lambda: mesh_main(args))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: radiance field: the field never crosses level 1e+09"), err
    assert err[0].endswith("choose another --level") and not (tmp_path / "m.ply").exists()


def test_mesh_with_an_image_as_config_is_one_line(tmp_path, capsys, volume_run, kit):
    ckpt = next(volume_run.rglob("last.ckpt"))
    config = kit.root / "data" / "astronaut.png"
    code = _exit_code(lambda: mesh_main(["--ckpt", str(ckpt), "--config", str(config), "--out", str(tmp_path / "m.ply")]))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"error: {config}: not a text file (a run's config.yaml is YAML)"], err


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--resolution", "100000"], "a turntable of 60 frames of 100,000×100,000 needs an estimated"),
        (["--frames", "1000000"], "--frames must be between 1 and 100,000, got 1,000,000"),
    ],
)
def test_turntable_sizes_are_refused_before_rendering(tmp_path, capsys, nerf_run, extra, expected):
    ckpt = next(nerf_run.rglob("last.ckpt"))
    code = _exit_code(lambda: turntable_main(["--ckpt", str(ckpt), "--out", str(tmp_path / "t.gif"), *extra]))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and expected in err[0], err
    assert not (tmp_path / "t.gif").exists()


def test_turntable_shows_progress(tmp_path, capsys, nerf_run):
    ckpt = next(nerf_run.rglob("last.ckpt"))
    turntable_main(["--ckpt", str(ckpt), "--out", str(tmp_path / "t.gif"), "--frames", "3", "--resolution", "8"])
    assert "turntable: frame 3/3" in capsys.readouterr().err
    assert (tmp_path / "t.gif").stat().st_size > 0


def test_a_camera_path_renders_colour_depth_and_accumulation_videos(tiny_nerf_args, tmp_path, run_cli, nerf_run):
    """An orbit of 5 frames and a nerfstudio-style JSON path: each view is the model's render of that camera, and
    the files are frames and a video of the colour, the depth and the accumulation."""
    import json

    import torch

    from inr.data.cameras import turntable_poses
    from inr.run.model_loader import load_model

    args = ["predict", *tiny_nerf_args(nerf_run), "--ckpt_path", "last"]
    orbit = tmp_path / "orbit"
    outcome = run_cli([*args, "--out", str(orbit), "--camera_path", "orbit", "--frames", "5", "--video", "gif"])
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert sorted(p.name for p in orbit.iterdir()) == ["accumulation.gif", "depth.gif", "field.npy", "frames", "video.gif"]
    field = np.load(orbit / "field.npy")
    assert field.shape == (5, 8, 8, 5) and len(list((orbit / "frames").glob("frame_*.png"))) == 5
    model = load_model(next(nerf_run.rglob("last.ckpt")))
    expected = model.render_view(turntable_poses(5, 30.0, float(model.orbit_radius))[2])
    np.testing.assert_allclose(field[2, ..., :3], expected["rgb"].permute(1, 2, 0).numpy(), atol=1e-5)
    np.testing.assert_allclose(field[2, ..., 3], expected["depth"].numpy(), atol=1e-4)

    path = tmp_path / "path.json"
    first = torch.eye(4)
    first[2, 3] = float(model.orbit_radius)  # a camera on the z axis looking down at the scene's centre
    path.write_text(json.dumps({"camera_path": [{"camera_to_world": first.flatten().tolist()}], "fps": 12}))
    out = tmp_path / "json"
    outcome = run_cli([*args, "--out", str(out), "--camera_path", str(path), "--video", "none"])
    assert outcome.code == 0, outcome.stderr[-2000:]
    np.testing.assert_allclose(
        np.load(out / "field.npy")[0, ..., :3], model.render_view(first)["rgb"].permute(1, 2, 0).numpy(), atol=1e-5
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"frames": [{"camera_to_world": [1, 2, 3]}]}')
    outcome = run_cli([*args, "--out", str(tmp_path / "no"), "--camera_path", str(bad)])
    assert outcome.code == 2 and outcome.errors == [f"error: --camera_path {bad}: frame 0 has no 4×4 camera_to_world"]
    assert not (tmp_path / "no").exists()


def test_a_nerfstudio_camera_path_renders_at_its_own_size_and_field_of_view(tiny_nerf_args, tmp_path, run_cli, nerf_run):
    """render_height × render_width and each camera's fov (vertical, degrees) as nerfstudio renders them: f = ½H /
    tan(½ fov), square pixels, the principal point at the centre; --scale still multiplies the path's size."""
    import json
    import math

    import torch

    from inr.data.cameras import Intrinsics
    from inr.run.model_loader import load_model

    model = load_model(next(nerf_run.rglob("last.ckpt")))
    pose = torch.eye(4)
    pose[2, 3] = float(model.orbit_radius)
    cameras = [{"camera_to_world": pose.flatten().tolist(), "fov": fov} for fov in (30.0, 75.0)]
    path = tmp_path / "camera_path.json"
    path.write_text(json.dumps({"camera_type": "perspective", "render_height": 6, "render_width": 10, "camera_path": cameras}))
    args = ["predict", *tiny_nerf_args(nerf_run), "--ckpt_path", "last", "--video", "none"]
    outcome = run_cli([*args, "--out", str(tmp_path / "out"), "--camera_path", str(path)])
    assert outcome.code == 0, outcome.stderr[-2000:]
    field = np.load(tmp_path / "out" / "field.npy")
    assert field.shape == (2, 6, 10, 5)
    for k, fov in enumerate((30.0, 75.0)):
        camera = Intrinsics(6, 10, 3 / math.tan(math.radians(fov) / 2), 3 / math.tan(math.radians(fov) / 2), 5.0, 3.0)
        expected = model.render_view(pose, camera)["rgb"].permute(1, 2, 0).numpy()
        np.testing.assert_allclose(field[k, ..., :3], expected, atol=1e-5)
    assert np.abs(field[0, ..., :3] - field[1, ..., :3]).max() > 1e-3  # the two fields of view differ
    outcome = run_cli([*args, "--out", str(tmp_path / "scaled"), "--camera_path", str(path), "--scale", "2"])
    assert outcome.code == 0 and np.load(tmp_path / "scaled" / "field.npy").shape == (2, 12, 20, 5)


@pytest.mark.parametrize(
    "content, expected",
    [
        ({"camera_type": "fisheye", "camera_path": [{"camera_to_world": list(range(16))}]}, "camera_type 'fisheye'"),
        ({"render_height": 0, "render_width": 8, "camera_path": [{"camera_to_world": list(range(16))}]}, "render_height"),
        ({"camera_path": [{"camera_to_world": list(range(16)), "fov": 190}]}, "frame 0: fov must be"),
        ('{"camera_path": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply to be a camera path"),
    ],
)
def test_a_camera_path_it_cannot_honour_is_one_line(tiny_nerf_args, tmp_path, run_cli, nerf_run, content, expected):
    import json

    path = tmp_path / "camera_path.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    args = ["predict", *tiny_nerf_args(nerf_run), "--ckpt_path", "last"]
    outcome = run_cli([*args, "--out", str(tmp_path / "out"), "--camera_path", str(path)])
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert not (tmp_path / "out").exists()
