"""Paths: a logger name, version or callback file name cannot lead writes out of the run, and every run
file gets the usual permissions."""

import os
import stat

import pytest

from inr.io.files import current_umask


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--trainer.logger.init_args.name", "../../escape"], "trainer.logger.init_args.name '../../escape': must not leave"),
        (["--trainer.logger.init_args.version", "../escape"], "trainer.logger.init_args.version '../escape': must not leave"),
        (
            [
                "--trainer.callbacks+=inr.callbacks.SpectralBiasCallback",
                "--trainer.callbacks.init_args.filename",
                "../../escape.npz",
            ],
            "SpectralBiasCallback.filename '../../escape.npz': must be a plain file name",
        ),
        (["--checkpoint.filename", "../../../../escape"], "checkpoint.filename '../../../../escape': must stay inside"),
        (["--checkpoint.dirpath", "elsewhere"], "elsewhere': must lie inside the run directory"),
    ],
)
def test_names_that_would_write_outside_the_run_are_refused(tmp_path, run_cli, kit, extra, expected):
    save_dir = tmp_path / "deep" / "runs"
    outcome = run_cli(kit.tiny(save_dir, *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert kit.files_under(tmp_path) == []


def test_a_second_logger_cannot_write_outside_its_save_dir(tmp_path, run_cli, kit):
    save_dir = tmp_path / "deep" / "runs"
    second = ["--trainer.logger+=CSVLogger", "--trainer.logger.init_args.save_dir", str(save_dir)]
    outcome = run_cli(kit.tiny(save_dir, *second, "--trainer.logger.init_args.name", "../../x18"))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "trainer.logger[1].init_args.name '../../x18': must not leave" in outcome.errors[0]
    assert kit.files_under(tmp_path) == []


def test_run_files_have_the_usual_mode(tmp_path, run_cli, kit):
    outcome = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "5", "--trainer.callbacks+=inr.callbacks.SpectralBiasCallback"))
    assert outcome.code == 0, outcome.stderr[-2000:]
    run = tmp_path / "image" / "version_0"
    expected = 0o666 & ~current_umask()
    modes = {
        p.name: stat.S_IMODE(os.stat(p).st_mode)
        for p in [run / "spectral_history.npz", run / "config.yaml", run / "checkpoints" / "last.ckpt"]
    }
    assert modes == dict.fromkeys(modes, expected)
    assert not (run / "train.lock").exists()  # released and removed when the run ended
