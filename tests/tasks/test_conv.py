"""ConvFitting: a ConvDecoder fitted to an image from a fixed code, trained on the split's training pixels."""

from functools import partial

import pytest
import torch

from inr.data import ImageDataModule
from inr.errors import InputError
from inr.networks import ConvDecoder
from inr.run.cli import cli_main
from inr.tasks import ConvFitting
from inr.tasks.conv import nearest_indices


def _model(code="noise", **kw):
    net = partial(ConvDecoder, width=8, depth=3, upsample=[1, 2], output_activation="sigmoid")
    return ConvFitting(network=net, out_channels=3, code=code, code_channels=4, **kw)


def test_trains_and_reads_the_decoded_image_at_the_split_pixels(fit_steps):
    torch.manual_seed(0)
    model, dm = _model(), ImageDataModule(resolution=16, split="every_other")
    fit_steps(model, dm, steps=30)
    assert model.code.shape == (1, 4, 4, 4)  # 16 / (2 · 2)
    image = model.render()
    assert image.shape == (3, 16, 16)
    # the held-out metrics read the decoder's output at [1::2, 1::2]
    test = dm.gather(dm.test_index, model.device)
    torch.testing.assert_close(model.predict(test["coords"]).T.reshape(3, 8, 8), image[:, 1::2, 1::2])
    # a training step's loss is the MSE on [::2, ::2] only, and its grid prediction is that sub-image
    batch = dm.gather(None, model.device)
    with torch.no_grad():
        raw = model.measure(model.field(batch), batch)
    loss, pred = model.loss(raw, batch["values"]), model.postprocess(raw)
    target = dm.values_grid()
    torch.testing.assert_close(loss, ((model.decode()[:, ::2, ::2] - target[:, ::2, ::2]) ** 2).mean())
    torch.testing.assert_close(pred.T.reshape(3, 8, 8), image[:, ::2, ::2])
    # the last step's grid prediction is that sub-image as it was one optimizer update earlier
    assert model.last_train_grid_prediction.shape == (3, 8, 8)
    assert float((model.last_train_grid_prediction - image[:, ::2, ::2]).abs().max()) < 0.1
    # it learned: training PSNR above the PSNR of the initial decoder
    metrics = model.evaluate()
    torch.manual_seed(0)
    fresh = _model()
    fit_steps(fresh, dm, steps=0)
    assert metrics["train/psnr"] > fresh.evaluate()["train/psnr"] + 1.0


def test_render_at_another_resolution_samples_nearest(fit_steps):
    model, dm = _model(), ImageDataModule(resolution=16, split="all")
    fit_steps(model, dm, steps=1)
    image = model.render()
    assert torch.equal(model.render((8, 8)), image[:, ::2, ::2])
    big = model.render((32, 32))
    assert big.shape == (3, 32, 32) and torch.equal(big[:, ::2, ::2], image)


def test_lowres_code_sees_only_training_pixels(fit_steps):
    dm = ImageDataModule(resolution=16, split="every_other")
    model = _model(code="lowres")
    fit_steps(model, dm, steps=1)
    code = model.code.clone()
    assert code.shape == (1, 3, 4, 4)
    dm.values[dm.test_index] = 0.5  # change every held-out pixel: the code must not move
    assert torch.equal(model.make_code(), code)


def test_code_size_that_does_not_fit_the_network_is_refused(fit_steps):
    with pytest.raises(InputError, match="code_size"):
        fit_steps(_model(code_size=5), ImageDataModule(resolution=16), steps=1)
    with pytest.raises(InputError, match="does not divide"):
        fit_steps(_model(), ImageDataModule(resolution=18), steps=1)


def test_one_hook_serves_training_and_evaluation(fit_steps):
    """ConvFitting overrides only the field: the step, predict, render and forward come from INRModule."""
    from inr.tasks import INRModule

    for name in ("training_step", "validation_step", "forward", "predict", "render", "measure"):
        assert getattr(ConvFitting, name) is getattr(INRModule, name), name
    assert ConvFitting.field is not INRModule.field
    model, dm = _model(), ImageDataModule(resolution=16, split="all")
    fit_steps(model, dm, steps=1)
    assert model.coordinate_network() is None  # the structured NTK refuses it


def test_nearest_indices_round_trip_grid_coordinates():
    dm = ImageDataModule(resolution=[6, 10], split="all")
    index = torch.arange(60)
    assert torch.equal(nearest_indices(dm.grid.coords(index), (6, 10)), index)


@pytest.mark.slow
def test_cli_trains_the_conv_config(tmp_path, capsys):
    cli = cli_main(
        [
            "--config",
            "conv.yaml",
            "--data.init_args.resolution",
            "32",
            "--model.init_args.code_channels",
            "4",
            "--model.init_args.network.init_args.width",
            "8",
            "--trainer.max_steps",
            "4",
            "--trainer.enable_progress_bar",
            "false",
            "--trainer.default_root_dir",
            str(tmp_path),
            "--trainer.logger.init_args.save_dir",
            str(tmp_path),
        ]
    )
    assert isinstance(cli.model, ConvFitting) and cli.trainer.global_step == 4
    assert cli.model.code.shape == (1, 4, 4, 4)  # 32 / 2³
    out = capsys.readouterr().out
    assert "summary:" in out and "test/psnr" in out
    assert list(tmp_path.glob("conv/version_0/events.out.tfevents.*"))


def test_spectral_callback_reuses_the_step_prediction(tmp_path, quiet_trainer):
    """The spectral callback measures ConvFitting from its training-grid prediction, like a coordinate MLP."""
    from inr.callbacks.spectral import SpectralBiasCallback

    callback = SpectralBiasCallback(every_n_epochs=1, num_bands=4, figure_every_n_epochs=0)
    # 32² -> a 16² training grid: band 0 of 4 holds |k| = 1 besides DC (on an 8² grid it holds DC alone, and DC is apart)
    model, dm = _model(), ImageDataModule(resolution=32, split="every_other")
    trainer = quiet_trainer(20, callbacks=[callback], default_root_dir=str(tmp_path))
    trainer.fit(model, datamodule=dm)
    errors = torch.as_tensor(callback.history["errors"])
    assert errors.shape[1] == 4 and len(errors) >= 2 and callback.history["grid"] == "train"
    assert bool(torch.isfinite(errors).all())
