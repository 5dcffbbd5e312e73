"""Sharded full batches under data parallelism: the shares cover the split once, and their weighted mean
gradient, averaged over the ranks as DDP does, is the full batch's gradient."""

from functools import partial
from types import SimpleNamespace

import pytest
import torch

from inr.data import ImageDataModule
from inr.data.module import shard, shard_weight
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting


def _as_rank(dm, rank, world_size):
    dm.trainer = SimpleNamespace(
        global_rank=rank, world_size=world_size, current_epoch=0
    )  # what the DataModule reads of a Trainer
    return dm


@pytest.mark.parametrize("n, world_size", [(10, 2), (11, 2), (11, 3), (4, 4)])
def test_shares_concatenate_to_the_split_and_weights_average_to_one(n, world_size):
    index = torch.arange(100, 100 + n)
    shares = [shard(index, r, world_size) for r in range(world_size)]
    assert torch.equal(torch.cat(shares), index)
    assert max(map(len, shares)) - min(map(len, shares)) <= 1
    weights = [shard_weight(len(s), n, world_size) for s in shares]
    assert sum(weights) / world_size == pytest.approx(1.0, abs=1e-12)


def test_full_batch_gather_gives_each_rank_its_share_and_validation_its_part_of_the_heldout_split():
    dms = [_as_rank(ImageDataModule(resolution=10, split="every_other", eval_chunk=4), r, 2) for r in range(2)]
    batches = [dm.gather(None, torch.device("cpu")) for dm in dms]
    train = dms[0].train_index  # 25 points: shares of 13 and 12
    assert [len(b["index"]) for b in batches] == [13, 12]
    assert torch.equal(torch.cat([b["index"] for b in batches]), train)
    assert [b["shard_weight"] for b in batches] == [pytest.approx(26 / 25), pytest.approx(24 / 25)]
    for b in batches:
        torch.testing.assert_close(b["values"], dms[0].values[b["index"]])
        torch.testing.assert_close(b["coords"], dms[0].grid.coords(b["index"]))
    seen = [torch.cat([v["index"] for v in dm.val_dataloader()]) for dm in dms]
    assert torch.equal(torch.cat(seen), dms[0].test_index)
    single = ImageDataModule(resolution=10, split="every_other").gather(None, torch.device("cpu"))
    assert "shard_weight" not in single and len(single["index"]) == 25  # one process: the whole split


def test_random_batches_are_not_sharded():
    dm = _as_rank(ImageDataModule(resolution=10, split="all", batch_size=8), 1, 2)
    batch = next(iter(dm.train_dataloader()))
    assert len(batch["index"]) == 8  # a batch of its own per rank (seeded by rank), as on one process


def test_a_split_smaller_than_the_ranks_is_refused():
    dm = ImageDataModule(resolution=4, split="every_other")  # 4 training points
    dm.check_shardable(4)
    with pytest.raises(InputError, match="fewer than the 5 ranks"):
        dm.check_shardable(5)


@pytest.mark.filterwarnings("ignore:You are trying to `self.log")  # no Trainer: nothing to log to
def test_weighted_share_gradients_averaged_over_ranks_equal_the_full_batch_gradient():
    """Uneven shares (13 and 12 of 25 points); float64, so the two sides agree to rounding (1e-12)."""
    torch.manual_seed(0)
    model = ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=8, sigma=3.0),
        network=partial(MLP, width=16, depth=2, output_activation="sigmoid"),
    ).double()

    def gradient(batch):
        model.zero_grad()
        batch = {k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in batch.items()}
        batch["full_batch"] = False  # no encoding cache across the calls
        model.on_train_batch_start(batch, 0)  # reads the share's weight, as in a Trainer
        model.backward(model.training_step(batch, 0))
        return torch.cat([p.grad.flatten() for p in model.parameters()])

    full = gradient(ImageDataModule(resolution=10, split="every_other").gather(None, torch.device("cpu")))
    shares = [
        gradient(_as_rank(ImageDataModule(resolution=10, split="every_other"), r, 2).gather(None, torch.device("cpu")))
        for r in range(2)
    ]
    averaged = (shares[0] + shares[1]) / 2  # DDP's all-reduce mean
    torch.testing.assert_close(averaged, full, rtol=0, atol=1e-12)
    assert (shares[0] - full).abs().max() > 1e-4  # a share alone is not the full batch: the check can fail
