"""validate, test and predict name the run and the data of the checkpoint they read, in one line, and refuse a
checkpoint trained on another signal than the config's (``--ckpt_path last`` included): they would score or render
that run's model on the config's grid, cameras or measurements, silently."""

import pytest
import torch
import yaml

from inr.run.resume import DATA_CONFIG_KEY


@pytest.fixture(scope="module")
def camera_run(tmp_path_factory, tiny_run_args, cli_run):
    """The newest run under runs/image/ was trained on data/camera.png, not image.yaml's astronaut."""
    save_dir = tmp_path_factory.mktemp("runs")
    assert cli_run(tiny_run_args(save_dir, "--data.init_args.path", "data/camera.png"))[0] == 0
    return save_dir, save_dir / "image" / "version_0"


@pytest.mark.slow
@pytest.mark.parametrize("command", ["predict", "validate"])
def test_a_checkpoint_of_other_data_is_refused_naming_the_difference_and_the_runs_config(
    camera_run, command, capsys, tiny_run_args, cli_run, files_under
):
    save_dir, run_dir = camera_run
    before = files_under(save_dir)
    capsys.readouterr()
    code, _ = cli_run([command, *tiny_run_args(save_dir), "--ckpt_path", "last"])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1, errors
    assert "was trained on other data than this config's: data.init_args.path is 'data/camera.png' in the checkpoint" in errors[0]
    assert f"--config {run_dir.resolve() / 'config.yaml'}" in errors[0]
    assert files_under(save_dir) == before  # nothing written


@pytest.mark.slow
def test_the_runs_own_config_predicts_and_the_line_names_the_run_and_its_data(camera_run, capsys, tmp_path, cli_run):
    save_dir, run_dir = camera_run
    code, cli = cli_run(
        ["predict", "--config", str(run_dir / "config.yaml"), "--ckpt_path", "last", "--out", str(tmp_path / "p")]
    )
    assert code == 0 and (tmp_path / "p" / "image.png").is_file()
    notes = [line for line in capsys.readouterr().err.splitlines() if "predict reads" in line]
    assert len(notes) == 1
    assert f"of the run {run_dir.resolve()}, trained on ImageDataModule(path='data/camera.png', resolution=16" in notes[0]


@pytest.mark.slow
def test_settings_that_only_batch_the_signal_are_not_a_difference(camera_run, capsys, tiny_run_args, cli_run):
    save_dir, run_dir = camera_run
    args = tiny_run_args(save_dir, "--data.init_args.path", "data/camera.png", "--data.init_args.batch_size", "8")
    assert cli_run(["validate", *args, "--ckpt_path", str(run_dir / "checkpoints" / "last.ckpt")])[0] == 0


@pytest.mark.slow
def test_a_checkpoint_without_its_data_recorded_is_read_against_its_runs_config(
    camera_run, capsys, tiny_run_args, tmp_path, cli_run
):
    """Checkpoints written before the data was recorded in them: the run's config.yaml beside them says."""
    save_dir, run_dir = camera_run
    old = tmp_path / "old" / "version_0"
    (old / "checkpoints").mkdir(parents=True)
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    assert checkpoint.pop(DATA_CONFIG_KEY)["init_args"]["path"] == "data/camera.png"
    torch.save(checkpoint, old / "checkpoints" / "last.ckpt")
    (old / "config.yaml").write_text(yaml.safe_dump({"data": yaml.safe_load((run_dir / "config.yaml").read_text())["data"]}))
    code, _ = cli_run(["test", *tiny_run_args(save_dir), "--ckpt_path", str(old / "checkpoints" / "last.ckpt")])
    assert code == 2 and "data.init_args.path is 'data/camera.png' in the checkpoint" in capsys.readouterr().err
