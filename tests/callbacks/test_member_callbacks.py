"""Callbacks on a model with members: SpectralBiasCallback measures each member against its own target as the
pure function does and logs mean ± std over the members; ImageLogger logs each member's images."""

from functools import partial

import lightning as L
import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.callbacks import ImageLogger, SpectralBiasCallback
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.spectral import spectral_summary
from inr.tasks import ImageFitting


def members_model():
    return ImageFitting(
        member_encoders=[GaussianEncoding(num_features=32, sigma=s, seed=k) for k, s in enumerate((2.0, 6.0, 12.0))],
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        optimizer=partial(torch.optim.Adam, lr=1e-2),
    )


@pytest.mark.parametrize("source", ["full", "train"])
def test_each_member_is_measured_against_its_own_target(tmp_path, tiny_trainer, source):
    L.seed_everything(0)
    dm = ImageDataModule(path=["data/astronaut.png", "data/camera.png", "data/astronaut.png"], resolution=32, steps_per_epoch=5)
    model = members_model()
    cb = SpectralBiasCallback(num_bands=6, source=source, figure_every_n_epochs=2)
    trainer = tiny_trainer(tmp_path, [cb], max_epochs=4)
    trainer.fit(model, datamodule=dm)
    h = cb.history_arrays()
    assert h["errors"].shape == (len(h["steps"]), 3, 6) and h["dc"].shape == (len(h["steps"]), 3)
    assert h["target_energy"].shape == (3, 6) and h["prediction_power"].shape[:2] == (len(h["steps"]), 3)
    model.eval()
    for k in range(3):  # the final measurement, against the pure function on member k's own field and target
        member, target = model.member(k), dm.member_data(k)
        if source == "full":
            pred, truth = member.render(), target.values_grid()
        else:
            coords = dm.grid.coords(dm.train_index)
            pred = member.predict(coords).T.reshape(3, *dm.train_shape)  # (N, C) -> (C, *train_shape)
            truth = target.values_grid(dm.train_index, dm.train_shape)
        reference = spectral_summary(pred, truth, num_bands=6)
        np.testing.assert_allclose(h["errors"][-1, k], reference["errors"].numpy(), rtol=1e-4, atol=1e-6)
        for key in ("dc", "low", "high", "all"):
            assert h[key][-1, k] == pytest.approx(float(reference[key]), rel=1e-4, abs=1e-6), (k, key)
    assert not np.allclose(h["errors"][-1, 0], h["errors"][-1, 1])  # other σ and targets: other errors
    # the members' own errors are kept in the history file, their mean ± std and per-member values are logged
    saved = np.load(tmp_path / "run" / "version_0" / "spectral_history.npz")
    np.testing.assert_array_equal(saved["errors"], h["errors"])
    events = EventAccumulator(str(tmp_path / "run" / "version_0")).Reload()
    tags = set(events.Tags()["scalars"])
    assert {
        "spectral/rel_err/band_00/mean",
        "spectral/rel_err/band_00/std",
        "spectral/rel_err/low/m2",
        "spectral/rel_err/low/std",
    } <= tags
    last = {tag: events.Scalars(tag)[-1].value for tag in ("spectral/rel_err/band_03/mean", "spectral/rel_err/band_03/std")}
    assert last["spectral/rel_err/band_03/mean"] == pytest.approx(h["errors"][-1, :, 3].mean(), rel=1e-5)
    assert last["spectral/rel_err/band_03/std"] == pytest.approx(h["errors"][-1, :, 3].std(), rel=1e-4)
    assert {"spectral/bands", "spectral/heatmap", "spectral/spectra"} <= set(events.Tags()["images"])
    assert any((tmp_path / "run" / "version_0" / "media" / "spectral" / "bands").glob("step_*.png"))


def test_image_logger_logs_every_members_images(tmp_path, tiny_trainer):
    dm = ImageDataModule(path=["data/astronaut.png", "data/camera.png", "data/camera.png"], resolution=16, steps_per_epoch=5)
    model = members_model()
    trainer = tiny_trainer(tmp_path, [ImageLogger(every_n_epochs=1)], max_epochs=2)
    trainer.fit(model, datamodule=dm)
    media = tmp_path / "run" / "version_0" / "media" / "images"
    for k in range(3):
        for name in ("reconstruction", "abs_error", "target"):
            assert any((media / name / f"m{k}").glob("step_*.png")), (name, k)
    assert not any((media / "reconstruction").glob("step_*.png"))  # no image of the stack as a whole
    # member 1's logged target is camera.png (its own), member 0's the astronaut
    import imageio.v3 as iio

    targets = [iio.imread(next((media / "target" / f"m{k}").glob("*.png"))) for k in range(3)]
    assert not np.array_equal(targets[0], targets[1]) and np.array_equal(targets[1], targets[2])
