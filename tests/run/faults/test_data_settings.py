"""Data settings that used to become a default, be misread or exhaust memory get one line through the
command: CT detector and angle counts, angles in degrees, video frame counts, integer NeRF views."""

import numpy as np
import pytest

CT = [
    "--config",
    "ct.yaml",
    "--data.init_args.resolution",
    "16",
    "--model.init_args.network.init_args.width",
    "16",
    "--model.init_args.encoder.init_args.num_features",
    "16",
    "--trainer.max_steps",
    "2",
    "--trainer.num_sanity_val_steps",
    "0",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.callbacks",
    "null",
]


def ct(save_dir, *extra):
    return [*CT, "--trainer.logger.init_args.save_dir", str(save_dir), *extra]


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--data.init_args.detectors", "0"], "data.detectors must be ≥ 1"),
        (["--data.init_args.detectors", "1000000"], "the CT operator (20 angles × 1,000,000 detector bins"),
        (["--data.init_args.angles", "1000000"], "the CT operator (1,000,000 angles × 23 detector bins"),
    ],
)
def test_ct_sizes_are_checked_before_the_operator_is_built(tmp_path, run_cli, kit, extra, expected):
    outcome = run_cli(ct(tmp_path, *extra))
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
    outcome = run_cli(ct(tmp_path / "runs", *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "angles up to 171 look like degrees" in outcome.errors[0]
    assert not (tmp_path / "runs").exists()
