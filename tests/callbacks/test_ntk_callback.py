"""NTKCallback in tiny real Trainers: tags in the event file, the loss prediction under SGD, eval mode,
a resumed run keeping K₀, and configuration from YAML."""

from functools import partial

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.callbacks import NTKCallback
from inr.callbacks.ntk import kernel_drift, slice_plane
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.ntk import empirical_ntk
from inr.tasks import ImageFitting


class ModeRecording(ImageFitting):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.modes: list[bool] = []

    def forward(self, coords):
        self.modes.append(self.training)
        return super().forward(coords)


def tiny_model(cls=ImageFitting, lr=0.5):
    torch.manual_seed(0)
    return cls(
        encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=3.0, seed=0),
        network=partial(MLP, width=128, depth=2),
        out_channels=3,
        optimizer=partial(torch.optim.SGD, lr=lr),
    )


def test_slice_plane_and_drift():
    index, plane, centre = slice_plane((6, 8), resolution=4)  # every 2nd row and column through (3, 4)
    assert plane == (3, 4) and centre == 3 * 8 + 4
    assert index.tolist()[:4] == [0, 2, 4, 6] and index.tolist()[4] == 16
    index3, plane3, _ = slice_plane((4, 6, 6), resolution=8)  # 3D: the plane at the middle of axis 0
    assert plane3 == (6, 6) and bool((index3 // 36 == 2).all())
    k0 = torch.eye(3)
    assert kernel_drift(k0, k0) == 0.0 and abs(kernel_drift(2 * k0, k0) - 1.0) < 1e-7


def test_logs_tags_predicts_sgd_loss_and_restores_mode(tmp_path, tiny_trainer):
    L.seed_everything(0)
    dm = ImageDataModule(resolution=16, split="every_other", steps_per_epoch=5)  # 64 training pixels, full batch
    model = tiny_model(ModeRecording)
    cb = NTKCallback(every_n_epochs=1, num_probes=64, num_eigenvalues=3, slice_resolution=8)  # all 64 pixels
    trainer = tiny_trainer(tmp_path, [cb], max_epochs=3)
    trainer.fit(model, datamodule=dm)
    assert model.training and False in model.modes  # measured in eval mode, back to train
    assert abs(cb.elapsed - 0.5 * 15) < 1e-9  # 15 SGD steps at lr 0.5
    acc = EventAccumulator(trainer.log_dir, size_guidance={"images": 0, "scalars": 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    expected = {"ntk/drift", "ntk/probe_mse_observed", "ntk/probe_mse_predicted", "ntk/eigenvalue_0", "ntk/eigenvalue_2"}
    assert expected <= tags and "ntk/eigenvalue_3" not in tags
    assert "ntk/kernel_slice" in acc.Tags()["images"]
    drift = {e.step: e.value for e in acc.Scalars("ntk/drift")}
    assert sorted(drift) == [0, 5, 10, 15] and drift[0] < 1e-6 and drift[15] > 1e-4  # K₀ full vs trace: fp32 round-off at step 0
    obs = {e.step: e.value for e in acc.Scalars("ntk/probe_mse_observed")}
    pred = {e.step: e.value for e in acc.Scalars("ntk/probe_mse_predicted")}
    assert abs(pred[0] - obs[0]) < 1e-6 * obs[0]  # no time elapsed: the prediction is f₀
    assert obs[15] < 0.8 * obs[0] and pred[15] < 0.8 * pred[0]  # both fell
    # probes = the whole training set, so only linearisation separates them: measured 7% apart, asserted 15%
    assert abs(pred[15] / obs[15] - 1) < 0.15
    # the logged eigenvalues are those of the kernel recomputed independently at the end
    x = dm.grid.coords(cb.probe_index)
    model.eval()
    k = empirical_ntk(model, x, method="jacobian")
    lam0 = {e.step: e.value for e in acc.Scalars("ntk/eigenvalue_0")}[15]
    assert abs(float(torch.linalg.eigvalsh(k.double() / 64)[-1]) / lam0 - 1) < 1e-4


def test_resumed_run_keeps_its_reference_kernel(tmp_path, tiny_trainer):
    dm = ImageDataModule(resolution=16, split="every_other", steps_per_epoch=2)
    ckpt = ModelCheckpoint(dirpath=str(tmp_path / "ckpt"), save_last=True)
    first = NTKCallback(every_n_epochs=1, num_probes=16, slice_resolution=0)
    tiny_trainer(tmp_path, [first, ckpt], max_epochs=2, enable_checkpointing=True).fit(tiny_model(), datamodule=dm)
    second = NTKCallback(every_n_epochs=1, num_probes=16, slice_resolution=0)
    trainer = tiny_trainer(tmp_path, [second], max_epochs=3)
    trainer.fit(tiny_model(), datamodule=dm, ckpt_path=str(tmp_path / "ckpt" / "last.ckpt"))
    # a fresh callback on a fresh model would have drawn K₀ of another initialisation; it restored the first
    assert torch.equal(second.k0, first.k0) and torch.equal(second.probe_index, first.probe_index)
    assert second.reference_step == 0 and abs(second.elapsed - 0.5 * 6) < 1e-9
    assert second.last["ntk/drift"] > first.last["ntk/drift"] > 0.0


def test_configurable_from_yaml(configured_from_yaml):
    probes = "{every_n_epochs: 1, num_probes: 24, method: structured, slice_resolution: 8}"
    cb, _ = configured_from_yaml("ntk.yaml", NTKCallback, probes, steps=10, width=16)
    assert cb.num_probes == 24 and cb.k0.shape == (24, 24, 3, 3) and "ntk/drift" in cb.last


def test_one_dimensional_task_logs_a_profile_plot(tmp_path, tiny_trainer):
    from inr.data import SignalDataModule
    from inr.tasks import SignalFitting

    assert slice_plane((10,), resolution=4)[1:] == ((4,), 5)  # every 3rd sample, centre sample 5
    torch.manual_seed(0)
    dm = SignalDataModule(generator="power_law", length=32, steps_per_epoch=2)
    model = SignalFitting(
        encoder=GaussianEncoding(in_dim=1, num_features=8, sigma=2.0),
        network=partial(MLP, width=16, depth=1),
        optimizer=partial(torch.optim.SGD, lr=0.1),
    )
    trainer = tiny_trainer(tmp_path, [NTKCallback(every_n_epochs=1, num_probes=8, slice_resolution=16)], max_epochs=1)
    trainer.fit(model, datamodule=dm)
    acc = EventAccumulator(trainer.log_dir, size_guidance={"images": 0})
    acc.Reload()
    assert [e.step for e in acc.Images("ntk/kernel_slice")] == [0, 2]
