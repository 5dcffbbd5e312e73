"""The CUDA-graph path of the inner steps (``cuda_graphs``) where it needs no CUDA: on the CPU it is skipped with
one log line; its refusals name the setting; and its static batch, warm-up, capture and replay bookkeeping, run
with ``EagerGraph`` standing in for ``torch.cuda.CUDAGraph`` (a replay calls the captured step again and writes
into the first replay's tensors), trains bit for bit as the eager steps."""

import logging
from functools import partial

import lightning as L
import pytest
import torch

from inr.data import ImageDataModule, VolumeDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.tasks import ImageFitting, VolumeFitting
from inr.tasks.graphs import WARMUP_STEPS, EagerGraph, refusal

STEPS, EPOCH, K = 17, 7, 4


def image(**kwargs):
    model = ImageFitting(
        encoder=GaussianEncoding(num_features=16, sigma=3.0),
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        **{"inner_steps": K, **kwargs},
    )
    return model, ImageDataModule(resolution=16, split="every_other", steps_per_epoch=EPOCH)


def volume(**kwargs):
    model = VolumeFitting(
        encoder=GaussianEncoding(in_dim=3, num_features=16, sigma=2.0),
        network=partial(MLP, width=32, depth=2, output_activation="none"),
        **{"inner_steps": K, **kwargs},
    )
    return model, VolumeDataModule(builtin="sphere", resolution=16, batch_size=256, steps_per_epoch=EPOCH)


def trainer(steps: int = STEPS, **kwargs) -> L.Trainer:
    settings = dict(logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    return L.Trainer(max_steps=steps, limit_val_batches=0, log_every_n_steps=5, **{**settings, **kwargs})


def fit(make, backend=None, model_kwargs=None, **trainer_kwargs):
    torch.manual_seed(0)
    model, dm = make(**(model_kwargs or {}))
    model.graph_backend = backend
    fitted = trainer(**trainer_kwargs)
    fitted.fit(model, datamodule=dm)
    return model, fitted


@pytest.mark.parametrize("make", [image, volume], ids=["full batch", "random batches"])
def test_captured_and_replayed_steps_train_as_the_eager_steps(make):
    eager, trainer_eager = fit(make, model_kwargs={"cuda_graphs": False}, gradient_clip_val=0.5)
    graphed, trainer_graphed = fit(make, backend=EagerGraph, model_kwargs={"cuda_graphs": True}, gradient_clip_val=0.5)
    steps = graphed._graphed[1]
    assert steps is not None and steps.warm == WARMUP_STEPS and steps.backend.replays == STEPS - WARMUP_STEPS
    assert steps.full_batch == (make is image)
    assert trainer_graphed.global_step == trainer_eager.global_step == STEPS
    for (name, p), q in zip(eager.named_parameters(), graphed.parameters(), strict=True):
        assert torch.equal(p, q), name
    moments = lambda t: [s[m] for s in t.optimizers[0].state.values() for m in ("exp_avg", "exp_avg_sq")]
    assert all(torch.equal(a, b) for a, b in zip(moments(trainer_eager), moments(trainer_graphed), strict=True))
    # the epoch's values pooled every step, the replays' outputs copied before the next replay rewrote them
    assert trainer_graphed.callback_metrics.keys() == trainer_eager.callback_metrics.keys()
    for key, value in trainer_eager.callback_metrics.items():
        assert torch.allclose(trainer_graphed.callback_metrics[key], value, rtol=1e-6), key
    # the grid prediction the spectral callback reuses is a copy, not the graph's output buffer
    assert torch.equal(graphed.last_train_grid_prediction, eager.last_train_grid_prediction) if make is image else True


def test_on_the_cpu_the_graph_is_skipped_with_one_log_line(caplog):
    eager, _ = fit(image)
    # the logger's own level: a comparison run earlier in this process may have set Lightning's to ERROR
    with caplog.at_level(logging.INFO, logger="lightning.pytorch.utilities.rank_zero"):
        graphed, _ = fit(image, model_kwargs={"cuda_graphs": True})
    lines = [r.getMessage() for r in caplog.records if "model.cuda_graphs" in r.getMessage()]
    assert lines == [
        "model.cuda_graphs: not used, the device is cpu; CUDA graphs need a CUDA device; the training steps run eagerly"
    ]
    assert all(torch.equal(p, q) for p, q in zip(eager.parameters(), graphed.parameters(), strict=True))


@pytest.mark.parametrize(
    "model_kwargs, trainer_kwargs, reason",
    [
        ({"inner_steps": 1}, {}, "model.inner_steps is 1"),
        ({"scheduler": partial(torch.optim.lr_scheduler.StepLR, step_size=3)}, {}, "a learning-rate scheduler"),
        ({"optimizer": partial(torch.optim.SGD, lr=0.1)}, {}, "SGD has no capturable form"),
        ({"compile": True}, {}, "choose one of compile and cuda_graphs"),
        ({}, {"precision": "bf16-mixed"}, "precision bf16-mixed"),
    ],
)
def test_each_refusal_names_its_setting(model_kwargs, trainer_kwargs, reason):
    seen = []

    class Probe(L.Callback):
        def on_train_start(self, trainer, pl_module):
            seen.append(refusal(pl_module, trainer))

    model, dm = image(**{"cuda_graphs": True, **model_kwargs})
    model.graph_backend = EagerGraph
    trainer(steps=1, callbacks=[Probe()], **trainer_kwargs).fit(model, datamodule=dm)
    assert seen and seen[0] is not None and reason in seen[0], seen
