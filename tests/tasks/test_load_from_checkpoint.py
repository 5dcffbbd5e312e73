"""Lightning's own ``load_from_checkpoint`` on a run of the command line: the recorded configs rebuild the task,
predictions equal the run's; a model built in Python takes its parts as arguments; a checkpoint naming a class
outside the trusted packages builds nothing."""

import pytest
import torch

from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.run.cli import cli_main
from inr.tasks import ImageFitting, INRModule


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_run_args):
    save_dir = tmp_path_factory.mktemp("runs")
    cli = cli_main(tiny_run_args(save_dir))
    return cli.model, save_dir / "image" / "version_0" / "checkpoints" / "last.ckpt"


@pytest.mark.parametrize("cls", [ImageFitting, INRModule])
def test_a_cli_run_loads_with_lightnings_call_and_predicts_as_trained(trained, cls):
    model, path = trained
    loaded = cls.load_from_checkpoint(path)
    assert type(loaded) is ImageFitting and isinstance(loaded.encoder, GaussianEncoding) and not loaded.training
    coords = torch.rand(64, 2, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(loaded.predict(coords), model.eval().predict(coords), rtol=0, atol=0)
    assert loaded.hparams["encoder"]["class_path"] == "inr.encoders.GaussianEncoding"


def test_a_model_built_in_python_takes_its_parts_as_arguments(tmp_path, fit_steps):
    from inr.data import ImageDataModule

    encoder = lambda: GaussianEncoding(in_dim=2, num_features=8, sigma=3.0, seed=1)
    model = ImageFitting(encoder=encoder())
    trainer = fit_steps(model, ImageDataModule(resolution=16, split="every_other"), 2)
    trainer.save_checkpoint(tmp_path / "python.ckpt")
    loaded = ImageFitting.load_from_checkpoint(tmp_path / "python.ckpt", encoder=encoder())
    torch.testing.assert_close(loaded.encoder.b, model.encoder.b)
    with pytest.raises(RuntimeError, match="encoder.b"):  # without its parts: the default encoder does not fit
        ImageFitting.load_from_checkpoint(tmp_path / "python.ckpt")


def test_a_checkpoint_naming_an_untrusted_class_builds_nothing(trained, tmp_path):
    _, path = trained
    checkpoint = torch.load(path, weights_only=True)
    checkpoint["hyper_parameters"]["encoder"] = {"class_path": "payload.Evil", "init_args": {}}
    torch.save(checkpoint, tmp_path / "crafted.ckpt")
    with pytest.raises(InputError, match="outside the trusted packages"):
        ImageFitting.load_from_checkpoint(tmp_path / "crafted.ckpt")
