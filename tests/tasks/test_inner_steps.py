"""K optimizer steps per Lightning step (``inner_steps``) end bit for bit where K = 1 ends: the same batches, the
same parameters and Adam moments, the same logged values at the same steps, for the cached full batch and for
random batches, with max_steps not a multiple of K, epochs not a multiple of K, stacked members, gradient
clipping, a scheduler, bf16-mixed and Lightning's own step path; the guard names the diverging step."""

from functools import partial

import lightning as L
import pytest
import torch
from lightning.pytorch.loggers import TensorBoardLogger
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.data import ImageDataModule, VolumeDataModule
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting, VolumeFitting
from inr.tasks.guards import NonFiniteLossGuard, TrainingDiverged

STEPS, EPOCH, K = 17, 7, 4  # 17 steps: epochs of 7 in groups of 4, 4, 3 (the last group of the run cut to 1)


def image(k: int, **kwargs):
    model = ImageFitting(
        encoder=GaussianEncoding(num_features=16, sigma=3.0),
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        inner_steps=k,
        **kwargs,
    )
    return model, ImageDataModule(resolution=16, split="every_other", steps_per_epoch=EPOCH)


def volume(k: int, **kwargs):
    model = VolumeFitting(
        encoder=GaussianEncoding(in_dim=3, num_features=16, sigma=2.0),
        network=partial(MLP, width=32, depth=2, output_activation="none"),
        inner_steps=k,
        **kwargs,
    )
    return model, VolumeDataModule(builtin="sphere", resolution=16, batch_size=256, steps_per_epoch=EPOCH)


def fit(make, k: int, steps: int = STEPS, logger=False, model_kwargs=None, **trainer_kwargs):
    torch.manual_seed(0)
    model, dm = make(k, **(model_kwargs or {}))
    settings = dict(enable_checkpointing=False, enable_progress_bar=False, limit_val_batches=0, enable_model_summary=False)
    trainer = L.Trainer(max_steps=steps, logger=logger, log_every_n_steps=5, **{**settings, **trainer_kwargs})
    trainer.fit(model, datamodule=dm)
    return model, trainer


def assert_same_state(a, b, trainer_a, trainer_b):
    assert trainer_a.global_step == trainer_b.global_step
    assert trainer_a.current_epoch == trainer_b.current_epoch
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q), name
    state_a, state_b = trainer_a.optimizers[0].state_dict()["state"], trainer_b.optimizers[0].state_dict()["state"]
    for key in state_a:
        for moment in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(state_a[key][moment], state_b[key][moment]), (key, moment)


@pytest.mark.parametrize("make", [image, volume], ids=["cached full batch", "random batches"])
def test_k_steps_per_batch_end_bit_for_bit_where_one_step_ends(make):
    one, trainer_one = fit(make, 1)
    grouped, trainer_grouped = fit(make, K)
    assert trainer_grouped.global_step == STEPS  # max_steps 17 stops exactly, inside a group of 4
    assert not grouped.automatic_optimization and one.automatic_optimization
    assert_same_state(one, grouped, trainer_one, trainer_grouped)
    # 3 epochs: 2 + 2 + 1 groups (7 = 4 + 3; the third epoch's first group cut to the run's last 3 steps)
    assert trainer_grouped.fit_loop.epoch_loop.batch_progress.total.completed == 5


def scalars(trainer) -> dict[str, list[tuple[int, float]]]:
    acc = EventAccumulator(trainer.log_dir)
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.mark.parametrize("members", [None, 2], ids=["single", "two members"])
def test_logged_values_and_their_steps_are_those_of_one_step_per_batch(tmp_path, members):
    kwargs = {"members": members} if members else {}
    _, one = fit(image, 1, logger=TensorBoardLogger(tmp_path, name="one"), model_kwargs=kwargs)
    _, grouped = fit(image, K, logger=TensorBoardLogger(tmp_path, name="grouped"), model_kwargs=kwargs)
    logs_one, logs_grouped = scalars(one), scalars(grouped)
    assert logs_one.keys() == logs_grouped.keys()
    assert [s for s, _ in logs_grouped["train/loss"]] == [4, 9, 14]  # every 5th optimizer step, inside groups too
    for tag, series in logs_one.items():
        # the epoch values pool the same predictions, updated in another order: equal to float32 rounding
        assert [s for s, _ in series] == [s for s, _ in logs_grouped[tag]], tag
        assert [v for _, v in logs_grouped[tag]] == pytest.approx([v for _, v in series], rel=1e-6), tag
    assert torch.equal(one.callback_metrics["train/loss"], grouped.callback_metrics["train/loss"])


def test_stacked_members_with_k_steps_end_where_one_step_ends():
    one, trainer_one = fit(image, 1, model_kwargs={"members": 2})
    grouped, trainer_grouped = fit(image, K, model_kwargs={"members": 2})
    assert_same_state(one, grouped, trainer_one, trainer_grouped)


@pytest.mark.parametrize("algorithm", ["norm", "value"])
def test_gradient_clipping_clips_every_inner_step(algorithm):
    clip = dict(gradient_clip_val=1e-3, gradient_clip_algorithm=algorithm)
    one, trainer_one = fit(volume, 1, **clip)
    grouped, trainer_grouped = fit(volume, K, **clip)
    unclipped, _ = fit(volume, K)
    assert_same_state(one, grouped, trainer_one, trainer_grouped)
    assert not torch.equal(next(grouped.parameters()), next(unclipped.parameters()))


def test_the_scheduler_steps_once_per_optimizer_step():
    scheduler = {"scheduler": partial(torch.optim.lr_scheduler.StepLR, step_size=3, gamma=0.5)}
    one, trainer_one = fit(image, 1, model_kwargs=scheduler)
    grouped, trainer_grouped = fit(image, K, model_kwargs=scheduler)
    assert_same_state(one, grouped, trainer_one, trainer_grouped)
    lr = trainer_grouped.optimizers[0].param_groups[0]["lr"]
    assert lr == trainer_one.optimizers[0].param_groups[0]["lr"] == 1e-3 * 0.5 ** (STEPS // 3)


def test_bf16_mixed_k_steps_end_where_one_step_ends():
    one, trainer_one = fit(volume, 1, precision="bf16-mixed")
    grouped, trainer_grouped = fit(volume, K, precision="bf16-mixed")
    assert_same_state(one, grouped, trainer_one, trainer_grouped)


def test_lightning_step_path_and_the_direct_path_agree():
    """The path a gradient scaler takes (Lightning's manual_backward and optimizer step, with their hooks)
    computes what the direct path computes."""
    direct, trainer_direct = fit(volume, K)
    torch.manual_seed(0)
    model, dm = volume(K)
    model.lightning_steps = True
    trainer = L.Trainer(
        max_steps=STEPS,
        logger=False,
        log_every_n_steps=5,
        enable_checkpointing=False,
        enable_progress_bar=False,
        limit_val_batches=0,
        enable_model_summary=False,
    )
    trainer.fit(model, datamodule=dm)
    assert_same_state(direct, model, trainer_direct, trainer)


@pytest.mark.parametrize("lagged", [False, True], ids=["checked at once", "lagged, as on a GPU"])
def test_the_guard_names_the_diverging_inner_step(tmp_path, diverging_at, lagged):
    model = diverging_at(6, encoder=GaussianEncoding(num_features=8), out_channels=3, inner_steps=K)
    model.configure_callbacks = lambda: [NonFiniteLossGuard(lagged=lagged)]
    trainer = L.Trainer(
        max_steps=20, logger=False, default_root_dir=tmp_path, enable_progress_bar=False, enable_model_summary=False
    )
    with pytest.raises(TrainingDiverged, match=r"the loss is nan at step 6 \(epoch 1\)"):  # step 6: the 2nd of a group
        trainer.fit(model, datamodule=ImageDataModule(resolution=16, steps_per_epoch=5))


def test_settings_k_steps_cannot_take_are_refused():
    with pytest.raises(InputError, match="model.inner_steps must be an integer ≥ 1"):
        ImageFitting(inner_steps=0)
    model, dm = image(K)
    trainer = L.Trainer(max_steps=4, logger=False, accumulate_grad_batches=2, enable_progress_bar=False)
    with pytest.raises(InputError, match="trainer.accumulate_grad_batches 2: with model.inner_steps > 1"):
        trainer.fit(model, datamodule=dm)


@pytest.mark.slow
def test_compiled_k_steps_end_where_compiled_single_steps_end():
    one, trainer_one = fit(volume, 1, model_kwargs={"compile": True})
    grouped, trainer_grouped = fit(volume, K, model_kwargs={"compile": True})
    assert_same_state(one, grouped, trainer_one, trainer_grouped)
