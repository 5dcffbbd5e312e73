"""HeldOutPSNRHistory in a tiny real Trainer: when it measures, what it measures (against numpy), the training
time it counts, and the first step at which a target is met."""

from functools import partial

import lightning as L
import numpy as np
import pytest
import torch

from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.experiments.progress import HeldOutPSNRHistory, first_reach
from inr.networks import MLP
from inr.tasks import ImageFitting


def test_first_reach():
    assert first_reach([0, 10, 20], [30.0, 10.0, 40.0], 25.0) == 0  # the first crossing, not the last
    assert first_reach([0, 10, 20], [10.0, 25.0, 40.0], 25.0) == 1  # reaching the target exactly counts
    assert first_reach([], [], 1.0) is None
    with pytest.raises(ValueError):
        first_reach([0, 10], [1.0], 0.0)
    with pytest.raises(ValueError):
        HeldOutPSNRHistory(every_n_steps=0)


def test_history_in_a_tiny_trainer(tmp_path, quiet_trainer):
    L.seed_everything(0, verbose=False)
    dm = ImageDataModule(path="data/camera.png", resolution=16, split="every_other")
    model = ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=32, sigma=1.0, seed=0),
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        out_channels=3,
        optimizer=partial(torch.optim.Adam, lr=1e-2),
    )
    progress = HeldOutPSNRHistory(every_n_steps=4)
    trainer = quiet_trainer(10, callbacks=[progress])
    trainer.fit(model, datamodule=dm)
    h = progress.history
    assert h["steps"] == [0, 4, 8, 10]  # before training, every 4 steps, and the final step
    seconds = np.array(h["train_seconds"])
    assert seconds[0] == 0 and (np.diff(seconds) > 0).all()
    assert model.training  # the measurement restored the training mode
    # the last value is the held-out PSNR of the trained field, recomputed here with numpy in float64
    model.eval()
    pred = model.render().double().numpy()[:, 1::2, 1::2]  # (C, 16, 16) -> the held-out (C, 8, 8)
    target = dm.values_grid().double().numpy()[:, 1::2, 1::2]
    expected = 10 * np.log10(1.0 / np.mean((pred - target) ** 2))
    np.testing.assert_allclose(h["test_psnr"][-1], expected, rtol=1e-5)
    assert h["test_psnr"][-1] > h["test_psnr"][0] + 1  # training improved the held-out pixels
    # a target between the first and the last value is reached at a measured step, with its training time
    target_psnr = (h["test_psnr"][0] + h["test_psnr"][-1]) / 2
    reached = progress.reached(target_psnr)
    i = h["steps"].index(reached["target_step"])
    assert h["test_psnr"][i] >= target_psnr and all(v < target_psnr for v in h["test_psnr"][:i])
    assert reached["target_seconds"] == h["train_seconds"][i] and i > 0
    assert progress.reached(max(h["test_psnr"]) + 1) == {"target_step": None, "target_seconds": None}
