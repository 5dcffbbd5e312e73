"""Data settings that used to become a default, be misread or exhaust memory get one line through the
command: CT detector and angle counts, angles in degrees, video frame counts, integer NeRF views."""

import numpy as np
import pytest

# a 16-wide network on 16 features for 2 steps, no sanity pass, progress bar or callbacks (tests/conftest.py)
SMALL = dict(width=16, features=16, steps=2, quiet=True)


def ct(kit, save_dir, *extra):
    return [*kit.flags("ct.yaml", 16, **SMALL, save_dir=save_dir), *extra]


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--data.init_args.detectors", "0"], "data.detectors must be ≥ 1"),
        (["--data.init_args.detectors", "1000000"], "the CT operator (20 angles × 1,000,000 detector bins"),
        (["--data.init_args.angles", "1000000"], "the CT operator (1,000,000 angles × 23 detector bins"),
    ],
)
def test_ct_sizes_are_checked_before_the_operator_is_built(tmp_path, run_cli, kit, extra, expected):
    outcome = run_cli(ct(kit, tmp_path, *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert kit.files_under(tmp_path) == []


def test_ct_angles_in_degrees_are_refused(tmp_path, run_cli, kit):
    angles = np.arange(20) * 9.0  # 0 … 171: degrees
    np.save(tmp_path / "angles.npy", angles)
    np.save(tmp_path / "sinogram.npy", np.ones((20, 23), dtype=np.float32))
    extra = [
        "--data.init_args.sinogram",
        str(tmp_path / "sinogram.npy"),
        "--data.init_args.angles_path",
        str(tmp_path / "angles.npy"),
    ]
    outcome = run_cli(ct(kit, tmp_path / "runs", *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "angles up to 171 look like degrees" in outcome.errors[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "frames, expected",
    [("-1", "data.frames must be ≥ 2 (or null: every frame), got -1"), ("100000", "built-in pan clip at 6,400,000")],
)
def test_video_frame_counts_are_refused_before_frames_are_made(tmp_path, run_cli, kit, frames, expected):
    resolution = 8
    if frames == "100000":  # at 8×8 the clip fits; at the source window's 307×307 its 10⁵ frames would not
        resolution = "null"
        expected = "built-in pan clip at 9,424,900,000 grid points needs an estimated"
    outcome = run_cli([*kit.flags("video.yaml", resolution, **SMALL, save_dir=tmp_path), "--data.init_args.frames", frames])
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert kit.files_under(tmp_path) == []


def test_sigma_zero_is_refused(tmp_path, run_cli, kit):
    outcome = run_cli(kit.tiny(tmp_path, "--model.init_args.encoder.init_args.sigma", "0"))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "GaussianEncoding.sigma must be a finite number > 0, got 0" in outcome.errors[0]
    assert kit.files_under(tmp_path) == []


def test_inverse_resolution_zero_is_refused(tmp_path, capsys):
    from inr.experiments.inverse import main

    with pytest.raises(SystemExit) as exit_:
        main(["--task", "ct", "--resolution", "0", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and err == ["error: --resolution must be ≥ 2, got 0"]
    assert not (tmp_path / "out").exists()


def test_nerf_views_are_sized_at_the_resolution_they_are_upsampled_to(tmp_path, run_cli, kit):
    images = np.random.default_rng(0).random((4, 8, 8, 3)).astype(np.float32)
    poses = np.tile(np.eye(4, dtype=np.float32), (4, 1, 1))
    poses[:, 2, 3] = 3.0
    np.savez(tmp_path / "views.npz", images=images, poses=poses, focal=np.float64(10.0))
    args = ["--config", "nerf.yaml", "--trainer.logger.init_args.save_dir", str(tmp_path / "runs"), "--trainer.callbacks", "null"]
    extra = ["--data.init_args.path", str(tmp_path / "views.npz"), "--data.init_args.resolution", "100000"]
    outcome = run_cli([*args, *extra, "--data.init_args.holdout_every", "2"])
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "at 40,000,000,000 grid points needs an estimated" in outcome.errors[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("source", ["auto", "train"])
def test_a_grid_too_small_for_spectral_bands_is_refused_before_training(tmp_path, run_cli, kit, source):
    """``--data.init_args.resolution 2``: the every_other training grid is 1×1, which holds no frequency band; the
    spectral callback failed on it after training, leaving the run directory behind."""
    spectral = ["--trainer.callbacks+=inr.callbacks.SpectralBiasCallback", "--trainer.callbacks.init_args.source", source]
    outcome = run_cli(kit.tiny(tmp_path, "--data.init_args.resolution", "2", *spectral))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "SpectralBiasCallback: the training grid 1×1 has an axis of fewer than 2 points" in outcome.errors[0]
    assert "choose a larger data.resolution" in outcome.errors[0] and "Traceback" not in outcome.stderr
    assert list(tmp_path.iterdir()) == []  # not even the logger's name folder


def test_a_grid_of_two_points_per_axis_is_measured(tmp_path, run_cli, kit):
    """The whole 2×2 grid (source full) holds one band: measured, not refused."""
    spectral = ["--trainer.callbacks+=inr.callbacks.SpectralBiasCallback", "--trainer.callbacks.init_args.source", "full"]
    outcome = run_cli(kit.tiny(tmp_path, "--data.init_args.resolution", "2", "--trainer.max_steps", "2", *spectral))
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert (tmp_path / "image" / "version_0" / "spectral_history.npz").exists()
