"""A non-finite loss stops training with one message naming the step, and the weights stay good."""

import lightning as L
import pytest
import torch

from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.tasks import ImageFitting
from inr.tasks.guards import NonFiniteLossGuard, TrainingDiverged


def test_nan_loss_stops_before_the_weights_change(tmp_path, diverging_at, quiet_trainer):
    model = diverging_at(7, encoder=GaussianEncoding(num_features=8), out_channels=3)
    trainer = quiet_trainer(20, default_root_dir=tmp_path, enable_checkpointing=True)
    snapshot = {}

    class Snapshot(L.Callback):
        def on_train_batch_end(self, trainer, pl_module, *args):
            snapshot.update({k: v.clone() for k, v in pl_module.state_dict().items()})

    trainer.callbacks.append(Snapshot())
    with pytest.raises(TrainingDiverged, match=r"at step 7 \(epoch 1\)") as err:
        trainer.fit(model, datamodule=ImageDataModule(resolution=16, steps_per_epoch=5))
    assert "\n" not in str(err.value) and "epoch=0-step=5.ckpt" in str(err.value)
    # the failing step did not touch the parameters, and they are all finite
    for key, value in model.state_dict().items():
        assert torch.equal(value, snapshot[key]) and torch.isfinite(value).all(), key
    assert (tmp_path / "checkpoints" / "epoch=0-step=5.ckpt").exists()


def test_every_task_installs_the_guard():
    assert any(isinstance(cb, NonFiniteLossGuard) for cb in ImageFitting(out_channels=3).configure_callbacks())
