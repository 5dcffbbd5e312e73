"""SpectralBiasCallback in tiny real Trainers: tags logged, history written and resumed, reuse without a
second forward pass, train mode restored, memory skip, and the error falling with training."""

import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.callbacks import SpectralBiasCallback
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.spectral import band_relative_error, dc_relative_error, spectral_summary
from inr.tasks import ImageFitting

REPO = Path(__file__).resolve().parents[2]


class RecordingFitting(ImageFitting):
    """ImageFitting that records the mode its grid evaluations ran in and counts them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.eval_modes: list[bool] = []

    def predict(self, coords, chunk=None):
        self.eval_modes.append(self.training)
        return super().predict(coords, chunk)

    def render(self, shape=None, chunk=None):
        self.eval_modes.append(self.training)
        return super().render(shape, chunk)


def tiny_model(cls=ImageFitting):
    return cls(
        encoder=GaussianEncoding(in_dim=2, num_features=64, sigma=6.0, seed=0),
        network=partial(MLP, width=64, depth=2, output_activation="sigmoid"),
        out_channels=3,
        optimizer=partial(torch.optim.Adam, lr=1e-2),
    )


@pytest.mark.slow
def test_logs_tags_writes_history_and_learns(tmp_path, tiny_trainer):
    L.seed_everything(0)
    dm = ImageDataModule(resolution=32, split="every_other", steps_per_epoch=5)
    model = tiny_model(RecordingFitting)
    cb = SpectralBiasCallback(num_bands=8, figure_every_n_epochs=3)
    trainer = tiny_trainer(tmp_path, [cb], max_epochs=12)
    trainer.fit(model, datamodule=dm)

    # full-batch steps on the training grid: every epoch reused the step's prediction; only the final
    # measurement (parameters after the last update) ran a forward pass, in eval mode
    assert model.eval_modes == [False], model.eval_modes
    assert model.training

    h = np.load(os.path.join(trainer.log_dir, "spectral_history.npz"))
    assert h["grid"] == "train" and tuple(h["shape"]) == (16, 16)
    assert h["errors"].shape == (13, 8) and h["edges"].shape == (9,) and h["edges"][-1] == 8
    np.testing.assert_array_equal(h["steps"], [5 * e + 4 for e in range(12)] + [60])
    np.testing.assert_array_equal(h["epochs"], list(range(1, 13)) + [12])
    assert h["prediction_power"].shape == h["residual_power"].shape == (13, len(h["spectrum_edges"]) - 1)

    # the callback agrees with the functions on the final state, DC and pooled errors included
    pred = model.render(dm.train_shape)  # every_other on an even grid: the training grid is Grid(train_shape)
    target = dm.values_grid(dm.train_index, dm.train_shape)
    errors, edges = band_relative_error(pred, target, num_bands=8)
    np.testing.assert_allclose(h["errors"][-1], errors.numpy(), rtol=1e-4)
    np.testing.assert_allclose(h["edges"], edges.numpy())
    summary = spectral_summary(pred, target, num_bands=8)
    for key in ("dc", "low", "high", "all"):
        assert h[key].shape == (13,)
        np.testing.assert_allclose(h[key][-1], float(summary[key]), rtol=1e-4)
    np.testing.assert_allclose(h["dc"][-1], float(dc_relative_error(pred, target)), rtol=1e-4)
    # bands of one cycle per unit: band 0 = [0, 1) would hold DC alone, which is kept apart
    assert np.isnan(h["errors"][:, 0]).all() and np.isfinite(h["errors"][:, 1:]).all() and np.isfinite(h["dc"]).all()

    # untrained vs trained: the error falls overall, at DC and in every band
    assert h["all"][-1] < 0.5 * h["all"][0], h["all"]
    assert h["dc"][-1] < h["dc"][0], h["dc"]
    assert (h["errors"][-1, 1:] < h["errors"][0, 1:]).all(), h["errors"][[0, -1]]

    events = EventAccumulator(trainer.log_dir, size_guidance={"scalars": 0, "images": 0}).Reload()
    scalars, images = set(events.Tags()["scalars"]), set(events.Tags()["images"])
    assert {f"spectral/rel_err/band_{b:02d}" for b in range(1, 8)} <= scalars
    assert "spectral/rel_err/band_00" not in scalars  # no target energy in it: not logged
    assert {"spectral/rel_err/dc", "spectral/rel_err/low", "spectral/rel_err/high", "spectral/rel_err/all"} <= scalars
    np.testing.assert_allclose([e.value for e in events.Scalars("spectral/rel_err/dc")], h["dc"], rtol=1e-6)
    assert {"spectral/heatmap", "spectral/spectra"} <= images
    logged = events.Scalars("spectral/rel_err/band_03")
    assert [e.step for e in logged] == list(h["steps"])
    np.testing.assert_allclose([e.value for e in logged], h["errors"][:, 3], rtol=1e-6)
    # figures every 3 epochs (after epochs 3, 6, 9; the 12th is the last) and once at the end
    assert [e.step for e in events.Images("spectral/heatmap")] == [14, 29, 44, 60]


def test_full_grid_rendered_in_eval_mode_and_back(tmp_path, tiny_trainer):
    dm = ImageDataModule(resolution=16, split="every_other", batch_size=32, steps_per_epoch=2)
    model = tiny_model(RecordingFitting)

    class ModeProbe(L.Callback):
        modes = []

        def on_train_epoch_end(self, trainer, pl_module):
            self.modes.append(pl_module.training)

    cb, probe = SpectralBiasCallback(num_bands=4, figure_every_n_epochs=0), ModeProbe()
    trainer = tiny_trainer(tmp_path, [cb, probe], max_epochs=2)
    trainer.fit(model, datamodule=dm)
    # random batches: nothing to reuse, so "auto" renders the whole 16×16 grid each epoch, in eval mode
    assert cb.history["grid"] == "full" and cb.history["shape"] == [16, 16]
    assert cb.history["steps"] == [2, 4]
    assert model.eval_modes and not any(model.eval_modes)
    assert probe.modes == [True, True]


def test_skips_cleanly_when_too_large(tmp_path, tiny_trainer):
    dm = ImageDataModule(resolution=16, split="every_other", steps_per_epoch=2)
    cb = SpectralBiasCallback(max_memory_mb=0.001)  # the 8×8×3 training grid needs ≈ 9 KiB, over 1 KiB
    trainer = tiny_trainer(tmp_path, [cb], max_epochs=3)
    with pytest.warns(UserWarning, match="spectral logging is skipped") as record:
        trainer.fit(tiny_model(), datamodule=dm)
    assert sum("spectral logging is skipped" in str(w.message) for w in record) == 1
    assert trainer.global_step == 6 and cb.skipped and not cb.history["steps"]
    assert not os.path.exists(os.path.join(trainer.log_dir, "spectral_history.npz"))
    events = EventAccumulator(trainer.log_dir).Reload()
    assert not [t for t in events.Tags()["scalars"] if t.startswith("spectral/")]


@pytest.mark.slow
def test_resumed_run_continues_the_history(tmp_path, tiny_trainer):
    dm = ImageDataModule(resolution=16, split="every_other", steps_per_epoch=2)
    ckpt = ModelCheckpoint(dirpath=str(tmp_path / "ckpt"), save_last=True)
    first = SpectralBiasCallback(num_bands=4, figure_every_n_epochs=0)
    tiny_trainer(tmp_path, [first, ckpt], max_epochs=2, enable_checkpointing=True).fit(tiny_model(), datamodule=dm)
    assert first.history["steps"] == [1, 3, 4]

    second = SpectralBiasCallback(num_bands=4, figure_every_n_epochs=0)
    trainer = tiny_trainer(tmp_path, [second], max_epochs=4)
    trainer.fit(tiny_model(), datamodule=dm, ckpt_path=str(tmp_path / "ckpt" / "last.ckpt"))
    # the checkpoint was written at the end of epoch 1, before the first run's closing measurement (step 4)
    assert second.history["steps"] == [1, 3, 5, 7, 8]
    assert second.history["epochs"] == [1, 2, 3, 4, 4]
    np.testing.assert_allclose(second.history["errors"][:2], first.history["errors"][:2])
    saved = np.load(os.path.join(trainer.log_dir, "spectral_history.npz"))
    assert saved["errors"].shape == (5, 4)


@pytest.mark.slow
def test_configurable_from_yaml(configured_from_yaml):
    bands = "{num_bands: 6, spacing: log, figure_every_n_epochs: 0}"
    cb, cli = configured_from_yaml("spectral.yaml", SpectralBiasCallback, bands, steps=20, width=32)
    assert cb.spacing == "log" and len(cb.history["edges"]) == 7
    assert os.path.isfile(os.path.join(cli.trainer.log_dir, "spectral_history.npz"))


DDP_SCRIPT = """
import sys
from functools import partial
import lightning as L, torch
from inr.callbacks import SpectralBiasCallback
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.methods.training import quiet_trainer  # the quiet_trainer fixture's own: no fixture reaches this process
from inr.networks import MLP
from inr.tasks import ImageFitting
if __name__ == "__main__":
    model = ImageFitting(encoder=GaussianEncoding(2, 16, 4.0), network=partial(MLP, width=16, depth=1), out_channels=3)
    dm = ImageDataModule(resolution=16, split="every_other", steps_per_epoch=2)
    cb = SpectralBiasCallback(num_bands=4, figure_every_n_epochs=1)
    trainer = quiet_trainer(-1, logger=True, callbacks=[cb], accelerator="cpu", devices=2, strategy="ddp", max_epochs=2,
                            default_root_dir=sys.argv[1])
    trainer.fit(model, datamodule=dm)
    print("rank", trainer.global_rank, "measured", len(cb.history["steps"]), flush=True)
"""


@pytest.mark.slow
def test_ddp_two_ranks_do_not_deadlock(tmp_path):
    script = tmp_path / "ddp_run.py"
    script.write_text(DDP_SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    # a collective inside rank-0-only code would hang here: the timeout turns that into a failure
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )  # generous: two processes start slowly on a loaded machine
    assert out.returncode == 0, out.stderr[-2000:]
    # each rank trains on its share of the full batch, so rank 0 renders the training grid at the ends of the
    # two epochs (steps 2 and 4) instead of reusing a step's prediction; the closing measurement is step 4's
    assert "rank 0 measured 2" in out.stdout and "rank 1 measured 0" in out.stdout, out.stdout
    files = list(tmp_path.rglob("spectral_history.npz"))
    assert len(files) == 1 and np.load(files[0])["errors"].shape == (2, 4)
    assert np.load(files[0])["steps"].tolist() == [2, 4]
