"""SpectralBiasCallback on the 1D signal and 3D volume tasks: it measures their grids (the training grid
reused from full batches for signals, the rendered full grid for randomly batched volumes) and agrees with
``band_relative_error`` computed independently on the final field."""

from functools import partial

import numpy as np
import pytest
import torch

from inr.callbacks import SpectralBiasCallback
from inr.data import SignalDataModule, VolumeDataModule
from inr.encoders import GaussianEncoding, IdentityEncoding
from inr.networks import MLP
from inr.spectral import band_relative_error
from inr.tasks import SignalFitting, VolumeFitting


@pytest.mark.slow
def test_signal_spectral_bias_is_measured_low_band_first(tmp_path, tiny_trainer):
    # 2 + 40 cycles of equal amplitude on 256 samples: a plain ReLU MLP learns the low one first
    data = SignalDataModule(generator="sinusoids", length=256, frequencies=[2.0, 40.0], phases=[0.0, 0.0])
    model = SignalFitting(IdentityEncoding(1), partial(MLP, width=64, depth=3), 1, optimizer=partial(torch.optim.Adam, lr=1e-2))
    callback = SpectralBiasCallback(every_n_epochs=1, num_bands=4, figure_every_n_epochs=0)
    tiny_trainer(tmp_path, [callback], max_epochs=30).fit(model, datamodule=data)
    h = callback.history_arrays()
    assert str(h["grid"]) == "train" and h["shape"].tolist() == [128]  # the reused full-batch prediction
    assert len(h["steps"]) == 31  # every epoch, plus the final measurement
    # bands over 0..64 cycles of the 128-sample training grid: 2 cycles in band 0, 40 in band 2
    assert h["errors"][-1, 0] < 0.5 < h["errors"][-1, 2]  # measured here: 0.08 and 0.995 after 300 steps
    assert h["errors"][-1, 0] < h["errors"][0, 0]
    pred = model.predict(data.grid.coords(data.train_index)).T.reshape(1, 128)
    errors, _ = band_relative_error(pred, data.values_grid(data.train_index, data.train_shape), num_bands=4)
    np.testing.assert_allclose(h["errors"][-1], errors.numpy(), rtol=1e-4, equal_nan=True)


def test_volume_with_random_batches_is_measured_on_its_rendered_grid(tmp_path, tiny_trainer):
    data = VolumeDataModule(builtin="sphere", resolution=12, batch_size=512, steps_per_epoch=5)
    model = VolumeFitting(
        GaussianEncoding(in_dim=3, num_features=16, sigma=1.0, seed=0),
        partial(MLP, width=32, depth=2),
        1,
        optimizer=partial(torch.optim.Adam, lr=1e-2),
        mode="occupancy",
    )
    callback = SpectralBiasCallback(every_n_epochs=1, num_bands=3, figure_every_n_epochs=0)
    tiny_trainer(tmp_path, [callback], max_epochs=3).fit(model, datamodule=data)
    h = callback.history_arrays()
    assert str(h["grid"]) == "full" and h["shape"].tolist() == [12, 12, 12]
    assert len(h["steps"]) == 3 and np.isfinite(h["errors"]).all()
    assert h["errors"][-1, 0] < h["errors"][0, 0]  # the coarse band improves with training
    errors, _ = band_relative_error(model.render(), model.target_grid(), num_bands=3)
    np.testing.assert_allclose(h["errors"][-1], errors.numpy(), rtol=1e-4)
    assert (tmp_path / "run/version_0/spectral_history.npz").exists()
