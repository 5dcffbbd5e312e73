"""MonitoringBudget thins validation, spectral measurements and images to its share of the wall time and keeps the
closing ones; the spectral callback's step cadence measures between inner steps what one step per batch measures;
a volume's logged slices are the whole render's central slices."""

from functools import partial

import lightning as L
import numpy as np
import pytest
import torch
from lightning.pytorch.loggers import TensorBoardLogger

from inr.callbacks import ImageLogger, SpectralBiasCallback
from inr.callbacks.budget import MonitoringBudget
from inr.callbacks.images import slice_predictions, spatial_views
from inr.data import ImageDataModule, VolumeDataModule
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting, VolumeFitting


def image(k: int = 1) -> ImageFitting:
    torch.manual_seed(0)
    return ImageFitting(
        encoder=GaussianEncoding(num_features=16, sigma=3.0),
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        inner_steps=k,
    )


class CountValidations(L.Callback):
    def __init__(self) -> None:
        self.at: list[int] = []

    def on_validation_end(self, trainer, pl_module) -> None:
        if not trainer.sanity_checking:
            self.at.append(trainer.global_step)


def observed_run(tmp_path, budget):
    spectral, images, validations = SpectralBiasCallback(num_bands=4), ImageLogger(every_n_epochs=1), CountValidations()
    trainer = L.Trainer(
        max_epochs=6,
        logger=TensorBoardLogger(str(tmp_path), name="run"),
        callbacks=[spectral, images, validations] + ([budget] if budget else []),
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(image(), datamodule=ImageDataModule(resolution=16, split="every_other", steps_per_epoch=2))
    return spectral.history["steps"], validations.at


def test_a_budget_skips_what_exceeds_its_share_and_keeps_the_closing_observations(tmp_path):
    steps, validated = observed_run(tmp_path / "all", None)
    assert steps == [1, 3, 5, 7, 9, 11, 12] and validated == [2, 4, 6, 8, 10, 12]
    budget = MonitoringBudget(max_share=1e-9)  # nothing after the first of each kind fits
    steps, validated = observed_run(tmp_path / "thinned", budget)
    # the first validation (nothing spent yet) runs; after it nothing fits but the closing observations
    assert validated == [2, 12] and steps == [12]
    assert budget.skipped["validation"] == 4 and budget.skipped["spectral"] == 6 and budget.skipped["images"] == 5
    assert budget.spent > 0 and budget.costs.keys() == {"validation"}  # the closing ones are not counted


def test_a_budget_share_outside_zero_one_is_refused():
    with pytest.raises(InputError, match="MonitoringBudget.max_share must be in"):
        MonitoringBudget(max_share=0)


def test_spectral_steps_cadence_between_inner_steps_measures_what_one_step_per_batch_measures(tmp_path):
    histories = []
    for k in (1, 4):
        spectral = SpectralBiasCallback(num_bands=4, every_n_steps=3)
        trainer = L.Trainer(
            max_steps=17,
            logger=TensorBoardLogger(str(tmp_path), name=f"k{k}"),
            callbacks=[spectral],
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            limit_val_batches=0,
        )
        trainer.fit(image(k), datamodule=ImageDataModule(resolution=16, split="every_other", steps_per_epoch=7))
        histories.append(spectral.history)
    one, grouped = histories
    # reused predictions: the step before global steps 3, 6, ..., 15, then the closing render at 17
    assert one["steps"] == grouped["steps"] == [2, 5, 8, 11, 14, 17]
    assert one["epochs"] == grouped["epochs"]
    np.testing.assert_array_equal(np.stack(one["errors"]), np.stack(grouped["errors"]))


def test_a_volumes_slices_are_the_central_slices_of_its_whole_render():
    model = VolumeFitting(
        encoder=GaussianEncoding(in_dim=3, num_features=8, sigma=2.0),
        network=partial(MLP, width=16, depth=2, output_activation="none"),
    )
    dm = VolumeDataModule(builtin="sphere", resolution=8)
    dm.setup("fit")
    model.attach_data(dm)
    with torch.no_grad():
        whole = spatial_views(model.render((6, 7, 8)), 3)
        slices = slice_predictions(model, (6, 7, 8))
    assert whole.keys() == slices.keys() == {"slice_0", "slice_1", "slice_2"}
    for name, view in whole.items():
        assert slices[name].shape == view.shape
        torch.testing.assert_close(slices[name], view, rtol=1e-6, atol=1e-6)
