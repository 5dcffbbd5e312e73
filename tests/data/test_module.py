"""Batches are whole tensors gathered by index; random draws are reproducible per (seed, epoch, rank)."""

import torch

from inr.data import ImageDataModule
from inr.data.module import FULL_BATCH_STEPS_PER_EPOCH, IndexBatches


def test_full_batch_is_gathered_once_and_reused():
    dm = ImageDataModule(resolution=16, split="every_other")
    first, second = dm.gather(None, torch.device("cpu")), dm.gather(None, torch.device("cpu"))
    assert first["full_batch"] and first["coords"].shape == (64, 2) and first["values"].shape == (64, 3)
    # the same tensors every step: no per-step copy of the training set
    assert first["coords"] is second["coords"] and first["values"] is second["values"]
    torch.testing.assert_close(first["values"], dm.values[dm.train_index])
    torch.testing.assert_close(first["coords"], dm.grid.coords(dm.train_index))


def test_random_batches_reproducible_and_distinct_per_rank_and_epoch():
    split = torch.arange(0, 1000, 2)

    def draw(epoch, rank):
        return torch.cat([b["index"] for b in IndexBatches(split, 32, 3, seed=5, epoch_fn=lambda: epoch, rank=rank)])

    assert torch.equal(draw(0, 0), draw(0, 0))
    assert not torch.equal(draw(0, 0), draw(0, 1))
    assert not torch.equal(draw(0, 0), draw(1, 0))
    assert set(draw(2, 1).tolist()) <= set(split.tolist())


def test_validation_covers_heldout_split_once():
    dm = ImageDataModule(resolution=20, split="every_other", eval_chunk=7)
    seen = torch.cat([b["index"] for b in dm.val_dataloader()])
    assert torch.equal(seen, dm.test_index) and len(dm.val_dataloader()) == 15  # ceil(100 / 7)


def test_steps_per_epoch_defaults():
    assert ImageDataModule(resolution=16).steps_per_epoch == FULL_BATCH_STEPS_PER_EPOCH
    assert ImageDataModule(resolution=16, split="all", batch_size=100).steps_per_epoch == 3  # ceil(256 / 100)
    assert ImageDataModule(resolution=16, steps_per_epoch=4).steps_per_epoch == 4


def test_minibatch_gather_matches_values():
    dm = ImageDataModule(resolution=16, split="all", batch_size=10)
    batch = next(iter(dm.train_dataloader()))
    out = dm.gather(batch["index"], torch.device("cpu"))
    assert out["coords"].shape == (10, 2) and not out["full_batch"]
    torch.testing.assert_close(out["values"], dm.values[batch["index"]])
