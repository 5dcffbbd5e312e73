"""The held-out samples within the training samples' span (``baselines.interior``): on an even grid the last
held-out row and column lie beyond the last training pixel, where interpolation replicates the edge and a network
extrapolates; ``interior_psnr`` leaves them out of every row alike (numpy on the same arrays)."""

import numpy as np
import pytest

from inr.data import ImageDataModule
from inr.experiments.baselines import interior, interpolations, score_prediction


@pytest.mark.parametrize("side, inside", [(16, 7), (15, 7)])
def test_the_edge_beyond_the_last_training_pixel_is_left_out(side, inside):
    dm = ImageDataModule(path="data/astronaut.png", resolution=side, split="every_other")
    dm.setup("fit")
    mask = interior(dm).reshape(dm.test_shape)
    assert int(mask.sum()) == inside * inside  # even: the last held-out row and column out; odd: none beyond
    target = dm.values_grid().double()
    for name, (predict, _) in interpolations(dm, (0.0, 1.0)).items():
        pred = predict()
        scores = score_prediction(pred, target, dm)
        held = (pred - target).numpy()[:, 1::2, 1::2][:, :inside, :inside]
        assert scores["interior_psnr"] == pytest.approx(-10 * np.log10(np.mean(held**2)), abs=1e-6), name
        if side % 2:
            assert scores["interior_psnr"] == pytest.approx(scores["psnr"])
