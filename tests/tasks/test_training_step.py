"""The framework's training step computes bit for bit what a plain PyTorch loop computes: the same batches,
losses, parameters and Adam moments after several steps, for random batches (volume) and for the cached
full batch (image), with the malloc thresholds ``train.py`` sets in force."""

import copy
from functools import partial

import pytest
import torch

from inr.data import ImageDataModule, VolumeDataModule
from inr.encoders import GaussianEncoding
from inr.io.allocator import retain_freed_memory
from inr.networks import MLP
from inr.tasks import ImageFitting, VolumeFitting

STEPS_PER_EPOCH, EPOCHS = 3, 2


def random_draws(split_index: torch.Tensor, batch_size: int, seed: int, epoch: int) -> list[torch.Tensor]:
    """The sampler's documented draws, written out: a generator seeded by (seed, epoch, rank 0) per epoch."""
    gen = torch.Generator().manual_seed((seed * 1_000_003 + epoch) * 65_537)
    return [split_index[torch.randint(len(split_index), (batch_size,), generator=gen)] for _ in range(STEPS_PER_EPOCH)]


def hand_loop(model, dm) -> list[torch.Tensor]:
    """encoder → network → the task's loss → Adam, in plain PyTorch; returns the losses of the steps."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    if dm.batch_size is None:
        batches = [dm.train_index] * (STEPS_PER_EPOCH * EPOCHS)
    else:
        batches = [i for epoch in range(EPOCHS) for i in random_draws(dm.train_index, dm.batch_size, dm.seed, epoch)]
    losses = []
    for index in batches:
        loss = model.loss(model.network(model.encoder(dm.grid.coords(index))), dm.values[index])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses, opt


def volume():
    model = VolumeFitting(
        encoder=GaussianEncoding(in_dim=3, num_features=16, sigma=2.0),
        network=partial(MLP, width=32, depth=2, output_activation="none"),
    )
    dm = VolumeDataModule(builtin="sphere", resolution=16, batch_size=256, steps_per_epoch=STEPS_PER_EPOCH)
    return model, dm


def image():
    model = ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=3.0),
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
    )
    dm = ImageDataModule(resolution=16, split="every_other", steps_per_epoch=STEPS_PER_EPOCH)
    return model, dm


@pytest.mark.parametrize("make", [volume, image], ids=["random batches", "cached full batch"])
def test_framework_step_equals_the_hand_loop_bit_for_bit(make, fit_steps):
    retain_freed_memory()
    torch.manual_seed(0)
    model, dm = make()
    hand_model, hand_dm = copy.deepcopy(model), copy.deepcopy(dm)
    hand_dm.setup("fit")
    losses, hand_opt = hand_loop(hand_model, hand_dm)

    trainer = fit_steps(model, dm, STEPS_PER_EPOCH * EPOCHS)

    assert trainer.global_step == len(losses)
    # the last step logs (it stops the run): its loss is the hand loop's last loss, bit for bit
    assert torch.equal(trainer.callback_metrics["train/loss"], losses[-1])
    for (name, p), q in zip(model.named_parameters(), hand_model.parameters()):
        assert torch.equal(p, q), name
    state, hand_state = trainer.optimizers[0].state_dict()["state"], hand_opt.state_dict()["state"]
    for key in hand_state:
        for moment in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(state[key][moment], hand_state[key][moment]), (key, moment)
