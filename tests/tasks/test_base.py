"""INRModule: chunked rendering on any grid, the cached encoding, and the step's grid prediction."""

from functools import partial

import lightning as L
import pytest
import torch

from inr.data import ImageDataModule, grid_coordinates
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.tasks import ImageFitting, SignalFitting, VideoFitting, VolumeFitting


def _model(**kw):
    return ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=8, sigma=3.0),
        network=partial(MLP, width=16, depth=2, output_activation="sigmoid"),
        out_channels=3,
        **kw,
    )


def test_render_at_twice_resolution_matches_pointwise_prediction():
    model = _model(render_chunk=37)  # a chunk that does not divide the grid
    image = model.render((24, 32))
    assert image.shape == (3, 24, 32)
    coords = grid_coordinates((24, 32)).reshape(-1, 2)
    expected = model.predict(coords, chunk=10_000).T.reshape(3, 24, 32)
    torch.testing.assert_close(image, expected, atol=1e-6, rtol=0)


def test_cached_encoding_trains_identically(fit_steps):
    results = []
    for cache in (True, False):
        torch.manual_seed(0)
        model = _model(cache_encoding=cache)
        fit_steps(model, ImageDataModule(resolution=16), steps=5)
        results.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    torch.testing.assert_close(results[0], results[1], atol=1e-6, rtol=0)


def test_full_batch_step_leaves_grid_prediction_and_render_uses_data_grid(fit_steps):
    model = _model()
    dm = ImageDataModule(resolution=16, split="every_other")
    fit_steps(model, dm, steps=2)
    assert model.last_train_grid_prediction.shape == (3, 8, 8)
    assert model.render().shape == (3, 16, 16)
    assert model.target_grid().shape == (3, 16, 16)
    metrics = model.evaluate()
    assert set(metrics) == {"train/psnr", "test/psnr", "full/psnr", "full/ssim"} and all(m > 0 for m in metrics.values())
    assert model.training


def test_network_parameters_are_registered_once_with_or_without_compile():
    plain, compiled = _model(), _model(compile=True)
    for model in (plain, compiled):
        keys = list(model.state_dict())
        assert all(k.startswith(("encoder.", "network.")) for k in keys), keys
        assert len(list(model.parameters())) == len(list(model.network.parameters()))
    assert list(plain.state_dict()) == list(compiled.state_dict())


def test_every_mlp_task_takes_compile_and_keeps_its_parameters():
    for cls, in_dim in ((ImageFitting, 2), (VideoFitting, 3), (SignalFitting, 1), (VolumeFitting, 3)):
        net = partial(MLP, width=8, depth=1, output_activation="none")
        model = cls(encoder=GaussianEncoding(in_dim=in_dim, num_features=4, sigma=1.0), network=net, compile=True)
        assert model.hparams.compile is True, cls.__name__
        assert isinstance(model._network_fn, torch._dynamo.eval_frame.OptimizedModule), cls.__name__
        assert model._network_fn._orig_mod is model.network, cls.__name__


@pytest.mark.slow
def test_compiled_network_trains_as_the_eager_one():
    """Two Adam steps, compiled vs eager, from the same initial parameters: the same loss and parameters
    to float32 rounding (the compiled kernels may sum in another order), atol 1e-5."""
    torch.manual_seed(0)
    eager = _model()
    compiled = _model(compile=True)
    compiled.load_state_dict(eager.state_dict())
    coords, target = torch.rand(64, 2), torch.rand(64, 3)
    results = []
    for model in (eager, compiled):
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(2):
            loss = model.loss(model._network_fn(model.encoder(coords)), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        results.append((loss.detach(), [p.detach().clone() for p in model.network.parameters()]))
    (loss_e, params_e), (loss_c, params_c) = results
    torch.testing.assert_close(loss_c, loss_e, atol=1e-5, rtol=0)
    for a, b in zip(params_c, params_e):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


class _EpochErrors(L.Callback):
    """Recomputes each training batch's prediction before the optimizer moves the parameters and keeps the
    epoch's squared errors, to check ``train/psnr_epoch`` independently of torchmetrics."""

    def __init__(self):
        self.psnr_by_epoch, self.logged, self._sq = [], [], []

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        self._batch = batch

    def on_after_backward(self, trainer, module):
        with torch.no_grad():
            pred = module.postprocess(module(self._batch["coords"])).double()
        self._sq.append((pred - self._batch["values"].double()).square().flatten())

    def on_train_epoch_end(self, trainer, module):  # runs before the module's own hook
        mse = torch.cat(self._sq).mean()
        self.psnr_by_epoch.append(float(10 * torch.log10(1 / mse)))
        self._sq = []

    def on_train_epoch_start(self, trainer, module):
        if trainer.current_epoch > 0:
            self.logged.append(float(trainer.callback_metrics["train/psnr_epoch"]))


def test_epoch_metric_is_the_psnr_of_the_epochs_pooled_errors_and_restarts_each_epoch(quiet_trainer):
    """PSNR of the epoch = 10 log10(1 / mean of all its squared errors) over every batch of that epoch only
    (not the mean of the batches' PSNRs, not carried over from the epoch before); float64 reference,
    tolerance 1e-3 dB (float32 sums in the metric)."""
    torch.manual_seed(0)
    model = _model()
    errors = _EpochErrors()
    dm = ImageDataModule(resolution=16, batch_size=32, steps_per_epoch=4)
    trainer = quiet_trainer(max_epochs=3, callbacks=[errors])
    trainer.fit(model, datamodule=dm)
    errors.logged.append(float(trainer.callback_metrics["train/psnr_epoch"]))
    assert len(errors.psnr_by_epoch) == len(errors.logged) == 3
    for expected, logged in zip(errors.psnr_by_epoch, errors.logged):
        assert abs(expected - logged) < 1e-3, (expected, logged)
    assert len(set(round(p, 3) for p in errors.psnr_by_epoch)) == 3  # the epochs differ, so the check can fail
