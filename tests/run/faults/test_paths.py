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


@pytest.mark.parametrize("version", ["", "."])
def test_a_version_that_names_no_folder_of_its_own_is_refused(tmp_path, run_cli, kit, version):
    """version "" would make the logger's name folder (runs/image, where every other version lies) the run directory."""
    outcome = run_cli(kit.tiny(tmp_path / "runs", f"--trainer.logger.init_args.version={version}"))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert f"trainer.logger.init_args.version {version!r}: must name a run directory of its own" in outcome.errors[0]
    assert kit.files_under(tmp_path) == []


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--trainer.logger.init_args.project", "team/inr"], "trainer.logger.init_args.project 'team/inr': a W&B project"),
        (["--trainer.logger.init_args.project", "a:b#c"], "(found # :)"),
        (["--trainer.logger.init_args.project", "p" * 129], "at most 128 characters"),
        (["--trainer.logger.init_args.id", "run/1"], "trainer.logger.init_args.id 'run/1': a W&B run id"),
    ],
)
def test_a_wandb_name_wandb_would_refuse_is_one_line_before_anything_starts(tmp_path, run_cli, kit, monkeypatch, extra, expected):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.chdir(tmp_path)  # where wandb would make its folder, had it started
    wandb = ["--trainer.logger", "lightning.pytorch.loggers.WandbLogger", "--trainer.logger.init_args.save_dir", str(tmp_path)]
    outcome = run_cli(kit.tiny(tmp_path, *wandb, *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert "Traceback" not in outcome.stderr and kit.files_under(tmp_path) == []
