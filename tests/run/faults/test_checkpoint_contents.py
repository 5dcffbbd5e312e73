"""What a checkpoint holds is checked before it is used: its recorded model configuration against the
command's, its weights for NaN, its training state's shape, and its archive's expanded size before inflating."""

import zipfile

import pytest
import torch

from inr.run.checkpoints import MODEL_CONFIG_KEY


def _save(checkpoint, path):
    torch.save(checkpoint, path)
    return path


def _last(trained_run):
    return torch.load(trained_run / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)


def test_the_model_configuration_is_recorded_in_the_checkpoint(trained_run):
    recorded = _last(trained_run)[MODEL_CONFIG_KEY]
    assert recorded["class_path"] == "inr.tasks.ImageFitting"
    assert recorded["init_args"]["network"]["init_args"]["activation"] == "relu"


@pytest.mark.parametrize(
    "extra, difference",
    [
        (
            ["--model.init_args.network.init_args.activation", "tanh"],
            "network.init_args.activation is 'relu' in the checkpoint and 'tanh' here",
        ),
        (
            ["--model.init_args.network.init_args.output_activation", "none"],
            "network.init_args.output_activation is 'sigmoid' in the checkpoint and 'none' here",
        ),
        (["--model.init_args.encoder.init_args.sigma", "3"], "encoder.init_args.sigma is 10.0 in the checkpoint and 3.0 here"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "fit"])
def test_a_checkpoint_of_another_configuration_with_the_same_shapes_is_refused(
    tmp_path, run_cli, kit, trained_run, extra, difference, command
):
    ckpt = str(trained_run / "checkpoints" / "last.ckpt")
    outcome = run_cli([command, *kit.tiny(tmp_path, "--ckpt_path", ckpt, *extra)])
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "made by another model: model.init_args." + difference in outcome.errors[0]
    assert kit.files_under(tmp_path) == []


def test_ckpt_path_last_does_not_resume_another_configurations_run(tmp_path, run_cli, kit, trained_run):
    kit.copy_run(trained_run, tmp_path)
    before = kit.files_under(tmp_path)
    outcome = run_cli(kit.tiny(tmp_path, "--ckpt_path", "last", "--model.init_args.encoder.init_args.sigma", "3"))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "sigma is 10.0 in the checkpoint and 3.0 here" in outcome.errors[0]
    assert kit.files_under(tmp_path) == before


def test_resuming_with_another_optimizer_class_is_refused(tmp_path, run_cli, kit, trained_run):
    run = kit.copy_run(trained_run, tmp_path)
    before = kit.files_under(tmp_path)
    sgd = ["--model.init_args.optimizer", "torch.optim.SGD", "--model.init_args.optimizer.init_args.lr", "0.01"]
    outcome = run_cli(kit.tiny(tmp_path, "--ckpt_path", str(run / "checkpoints" / "last.ckpt"), *sgd))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "its optimizer state is torch.optim.Adam's and this config's optimizer is torch.optim.SGD" in outcome.errors[0]
    assert kit.files_under(tmp_path) == before


def test_predict_from_a_checkpoint_with_nan_weights_is_refused(tmp_path, run_cli, kit, trained_run):
    checkpoint = _last(trained_run)
    key = next(k for k in checkpoint["state_dict"] if k.endswith("weight"))
    checkpoint["state_dict"][key][0, 0] = float("nan")
    ckpt = _save(checkpoint, tmp_path / "nan.ckpt")
    outcome = run_cli(["predict", *kit.tiny(tmp_path / "runs", "--ckpt_path", str(ckpt), "--out", str(tmp_path / "out"))])
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert f"its parameters are not finite ({key} holds NaN or inf)" in outcome.errors[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda c: c.update(callbacks={"ModelCheckpoint": 5}), "its callbacks state is damaged"),
        (lambda c: c.update(optimizer_states=["garbage"]), "its optimizer state is damaged"),
        (
            lambda c: c["loops"]["fit_loop"].update({"epoch_progress": "garbage"}),
            "its saved training state does not restore",
        ),
    ],
)
def test_garbage_training_state_in_a_valid_checkpoint_is_refused(tmp_path, run_cli, kit, trained_run, damage, expected):
    checkpoint = _last(trained_run)
    damage(checkpoint)
    ckpt = _save(checkpoint, tmp_path / "damaged.ckpt")
    outcome = run_cli(kit.tiny(tmp_path / "runs", "--ckpt_path", str(ckpt)))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert expected in outcome.errors[0] and "Traceback" not in outcome.stderr
    assert kit.files_under(tmp_path / "runs") == []


def test_a_checkpoint_that_expands_beyond_its_file_is_refused_before_inflating(tmp_path, run_cli, kit, trained_run):
    checkpoint = _last(trained_run)
    checkpoint["padding"] = torch.zeros(2**22)  # 16 MiB of zeros: a few KiB once deflated
    plain = _save(checkpoint, tmp_path / "plain.ckpt")
    bomb = tmp_path / "bomb.ckpt"
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info.filename, source.read(info.filename))
    assert bomb.stat().st_size < 2**20
    outcome = run_cli(["validate", *kit.tiny(tmp_path / "runs", "--ckpt_path", str(bomb))])
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert "its entries expand to 16.0 MiB from a" in outcome.errors[0] and "refused before inflating" in outcome.errors[0]
