"""A training step reads no tensor on the host between logging steps, so on a GPU the host can run ahead of
the device: every ``item()``, ``bool()``, ``float()``, ``tolist()``… of a tensor, and every ``torch.tensor``
made (a host-to-device copy on a GPU), is recorded during the steps that do not log, with the code that made
it. The one read allowed is the non-finite guard's of the previous step's flag, which on a GPU is pinned host
memory read after that step's event (``NonFiniteLossGuard(lagged=True)``); a NaN is still caught, one step
late, and no checkpoint is written with it. With K optimizer steps per Lightning step (``inner_steps``) the same
holds for the Lightning steps none of whose K steps logs, with one guard read per Lightning step."""

import os
import sys
from functools import partial
from pathlib import Path

import lightning as L
import pytest
import torch
from torch.overrides import TorchFunctionMode

from inr.data import ImageDataModule, VolumeDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.tasks import ImageFitting, VolumeFitting
from inr.tasks.guards import NonFiniteLossGuard, TrainingDiverged

READS = {
    torch.Tensor.item,
    torch.Tensor.__bool__,
    torch.Tensor.__float__,
    torch.Tensor.__int__,
    torch.Tensor.__index__,
    torch.Tensor.tolist,
    torch.Tensor.numpy,
    torch.tensor,
}
GUARD = sys.modules[NonFiniteLossGuard.__module__].__file__
TORCH = str(Path(torch.__file__).parent) + os.sep
OPTIMIZERS = str(Path(torch.optim.__file__).parent) + os.sep


class HostReads(TorchFunctionMode):
    """Records (function, file:line of the first frame outside torch) of each host read while ``on``."""

    def __init__(self) -> None:
        super().__init__()
        self.on, self.reads = False, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.on and func in READS and not self.in_optimizer():
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith(TORCH):
                frame = frame.f_back
            where = f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}" if frame is not None else "?"
            self.reads.append((getattr(func, "__name__", str(func)), where))
        return func(*args, **(kwargs or {}))

    @staticmethod
    def in_optimizer() -> bool:
        """Whether the read is the optimizer's own: Adam reads its step counts, CPU tensors also on a GPU (not
        ``capturable``), as the hand loop's Adam does. (The whole training step runs inside Lightning's
        ``optimizer.step(closure)``, so only the innermost frame outside torch's core decides.)"""
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith(TORCH):
            if frame.f_code.co_filename.startswith(OPTIMIZERS):
                return True
            frame = frame.f_back
        return False


class WatchQuietSteps(L.Callback):
    """Turns the recorder on from the start of each (Lightning) step none of whose ``k`` optimizer steps logs to its end."""

    def __init__(self, mode: HostReads, every: int, k: int = 1) -> None:
        self.mode, self.every, self.k, self.watched = mode, every, k, 0

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        first = trainer.global_step
        logs = any((s + 1) % self.every == 0 for s in range(first, first + self.k))
        logs = logs or trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
        self.mode.on = not logs and trainer.global_step > 2  # after the metrics' first updates set up their groups
        self.watched += self.mode.on

    def on_train_batch_end(self, *args) -> None:
        self.mode.on = False


def image(k: int = 1):
    model = ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=3.0),
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        inner_steps=k,
    )
    return model, ImageDataModule(resolution=16, split="every_other", steps_per_epoch=12)


def volume(k: int = 1):
    model = VolumeFitting(
        encoder=GaussianEncoding(in_dim=3, num_features=16, sigma=2.0),
        network=partial(MLP, width=32, depth=2, output_activation="none"),
        inner_steps=k,
    )
    return model, VolumeDataModule(builtin="sphere", resolution=16, batch_size=256, steps_per_epoch=12)


def quiet_trainer(tmp_path, callbacks, steps: int, every: int = 5) -> L.Trainer:
    return L.Trainer(
        max_steps=steps,
        default_root_dir=tmp_path,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        log_every_n_steps=every,
        callbacks=callbacks,
    )


@pytest.mark.parametrize("k", [1, 4], ids=["one step per batch", "four inner steps"])
@pytest.mark.parametrize("build", [image, volume], ids=["image full batch", "volume random batches"])
def test_steps_between_logging_read_nothing_on_the_host(build, tmp_path, k):
    model, dm = build(k)
    model.configure_callbacks = lambda: [NonFiniteLossGuard(lagged=True)]  # the guard as on a GPU
    mode = HostReads()
    every, steps = (5, 12) if k == 1 else (10, 24)  # K = 4: the groups [4, 8) and [12, 16) log nothing
    watch = WatchQuietSteps(mode, every=every, k=k)
    with mode:
        quiet_trainer(tmp_path, [watch], steps=steps, every=every).fit(model, datamodule=dm)
    assert watch.watched >= (6 if k == 1 else 2)
    others = [(name, where) for name, where in mode.reads if not where.startswith(GUARD)]
    assert others == []
    # the guard's one read per step: the previous step's flag (on a GPU: pinned host memory, after its event)
    assert len(mode.reads) == watch.watched
    assert all(where.endswith(" read_pending") for _, where in mode.reads)


def test_the_lagged_guard_stops_one_step_later_and_no_checkpoint_holds_the_bad_step(tmp_path, diverging_at):
    model = diverging_at(5, encoder=GaussianEncoding(num_features=8), out_channels=3)
    checkpoints = L.pytorch.callbacks.ModelCheckpoint(dirpath=tmp_path, every_n_train_steps=1, save_top_k=-1)
    guard = NonFiniteLossGuard(lagged=True)
    trainer = L.Trainer(
        max_steps=20,
        logger=False,
        default_root_dir=tmp_path,
        enable_progress_bar=False,
        limit_val_batches=0,
        enable_model_summary=False,
        callbacks=[checkpoints],
    )
    model.configure_callbacks = lambda: [guard]
    with pytest.raises(TrainingDiverged, match=r"at step 5 \(epoch 1\)") as err:
        trainer.fit(model, datamodule=ImageDataModule(resolution=16, steps_per_epoch=3))
    # the checkpoint after step 5 (global step 6) was refused: the last one written is the one after step 4
    written = sorted(p.name for p in tmp_path.glob("*.ckpt"))
    assert written[-1] == "epoch=1-step=5.ckpt", written
    assert "epoch=1-step=5.ckpt" in str(err.value)
    state = torch.load(tmp_path / written[-1], weights_only=True)["state_dict"]
    assert all(torch.isfinite(v).all() for v in state.values())
