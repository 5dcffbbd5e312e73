"""``GridDataModule``: a target sampled on a regular grid, served as whole-tensor batches of coordinates.

A batch leaves the loader as a small description ``{"index": LongTensor | None}`` (``None`` = the whole
training set) and becomes ``{"coords": (B, d), "values": (B, C), "index": ...}`` on the training device in
``on_after_batch_transfer``: the target is copied to the device once, coordinates are computed from the
indices there, and nothing per pixel runs in Python.

Under data parallelism (N > 1 ranks) the full batch and the held-out split are sharded: rank r trains on its
contiguous share of the training split (``shard``) with the loss weight of ``shard_weight``, which makes the
averaged gradient the full batch's, and evaluates its share of the held-out split.

A task that takes K optimizer steps per training batch (``INRModule.inner_steps``) sets ``inner_steps`` here:
the loader then yields groups of up to K consecutive step descriptions of one epoch, ``{"steps": n, "index":
(n, B) | None}`` (one host-to-device transfer per group), which become a ``BatchGroup`` whose j-th batch is
gathered on the device when the task reaches its j-th step. The draws, and so the batches of every optimizer
step, are those of K = 1; an epoch still has ``steps_per_epoch`` optimizer steps.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any, Optional

import lightning as L
import torch
from torch import Tensor
from torch.utils.data import DataLoader, IterableDataset

from inr.data.grid import SPLITS, Grid, split_indices
from inr.errors import InputError, check_memory

# The loaders run in the main process (no workers), where an IterableDataset's __len__ is exact.
warnings.filterwarnings("ignore", message=".*Your `IterableDataset` has `__len__` defined.*")

# Full-batch training has no natural epoch; ten steps make one, so per-epoch callbacks run every ten steps.
FULL_BATCH_STEPS_PER_EPOCH = 10


def _only_item(batch: list[Any]) -> Any:
    return batch[0]


def shard(index: Tensor, rank: int, world_size: int) -> Tensor:
    """S_r = rank r's contiguous share of ``index`` among N = ``world_size`` ranks, ⌈n/N⌉ or ⌊n/N⌋ entries
    (the larger shares first); the shares in rank order concatenate back to ``index``.

    Example:
        >>> [shard(torch.arange(5), r, 2).tolist() for r in range(2)]
        [[0, 1, 2], [3, 4]]
    """
    return torch.tensor_split(index, world_size)[rank]


def shard_weight(shard_size: int, total: int, world_size: int) -> float:
    """w_r = N·n_r/n: the weight of rank r's mean loss over its n_r of the n points, so that data-parallel
    training, which averages gradients over the N ranks, follows the gradient of the mean over all n:
    (1/N) Σ_r w_r ∇(1/n_r) Σ_{i∈S_r} ℓ_i = (1/n) Σ_i ∇ℓ_i. Exact for any loss that is a mean over the
    batch's points; equal shards give w_r = 1.

    Example:
        >>> [shard_weight(len(shard(torch.arange(5), r, 2)), 5, 2) for r in range(2)]
        [1.2, 0.8]
    """
    return world_size * shard_size / total


def group_bounds(steps: int, group: int, skip: int = 0) -> list[tuple[int, int]]:
    """[start, stop) of the groups of at most ``group`` consecutive steps of an epoch of ``steps``, from step
    ``skip`` on: aligned to multiples of ``group`` from the epoch's start (a resume inside a group finishes that
    group first), so a resumed epoch has the groups the uninterrupted one had left.

    Example:
        >>> group_bounds(10, 4), group_bounds(10, 4, skip=5)
        ([(0, 4), (4, 8), (8, 10)], [(5, 8), (8, 10)])
    """
    bounds, start = [], skip
    while start < steps:
        stop = min(steps, (start // group + 1) * group)
        bounds.append((start, stop))
        start = stop
    return bounds


class IndexBatches(IterableDataset):
    """An epoch of batch descriptions ``{"index": ...}`` over one split: ``steps`` random draws of
    ``batch_size`` positions, ``None`` (the whole split) for full batches, or consecutive chunks covering the
    split once (``shuffle=False``, for evaluation). With ``group`` K > 1 (training), consecutive steps come in
    groups of up to K (``group_bounds``): ``{"steps": n, "index": (n, batch_size) | None}``.

    Random draws use a generator seeded by (seed, epoch, rank): each DDP rank draws its own batches, and a
    resumed run draws exactly what the uninterrupted run would have. It is an iterable dataset, so
    Lightning leaves its sharding to us instead of wrapping it in a distributed sampler.
    """

    def __init__(
        self,
        split_index: Tensor,
        batch_size: Optional[int],
        steps: int,
        seed: int = 0,
        shuffle: bool = True,
        epoch_fn: Callable[[], int] = lambda: 0,
        rank: int = 0,
        group: int = 1,
        step_fn: Callable[[], int] = lambda: 0,
    ) -> None:
        self.split_index, self.batch_size, self.steps, self.seed = split_index, batch_size, steps, seed
        self.shuffle, self.epoch_fn, self.rank, self.group, self.step_fn = shuffle, epoch_fn, rank, group, step_fn
        # (epoch, steps trained) restored from a checkpoint: that epoch's pass starts after those steps
        self.resume_at: Optional[tuple[int, int]] = None
        self.pass_epoch: Optional[int] = None  # the epoch of the latest pass
        self.pass_start = 0  # the global step at which the latest pass's epoch began (``step_fn``)

    def __len__(self) -> int:
        if self.batch_size is not None and not self.shuffle:
            return math.ceil(len(self.split_index) / self.batch_size)
        if self.group > 1:
            # no length: Lightning then ends the epoch when the groups run out, not after a count of them. A
            # group cut short by max_steps is one Lightning batch that trained only part of its steps, and a run
            # resumed from there has its remaining steps (and one batch more) to train in that epoch.
            raise TypeError("an epoch of grouped steps has no fixed number of batches")
        return self.steps

    def draws(self, epoch: int) -> Iterator[Optional[Tensor]]:
        """The indices of every step of ``epoch`` in order (None: the whole split)."""
        if self.batch_size is None:
            yield from (None for _ in range(self.steps))
            return
        gen = torch.Generator().manual_seed((self.seed * 1_000_003 + epoch) * 65_537 + self.rank)
        n = len(self.split_index)
        for _ in range(self.steps):
            yield self.split_index[torch.randint(n, (self.batch_size,), generator=gen)]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        n = len(self.split_index)
        self.pass_epoch = epoch = self.epoch_fn()
        skip = self.resume_at[1] if self.resume_at is not None and self.resume_at[0] == epoch else 0
        self.resume_at, self.pass_start = None, self.step_fn() - skip
        if self.batch_size is not None and not self.shuffle:
            for start in range(0, n, self.batch_size):
                yield {"index": self.split_index[start : start + self.batch_size]}
            return
        draws = self.draws(epoch)  # skipped draws still advance the generator
        if self.group == 1:
            for step, index in enumerate(draws):
                if step >= skip:
                    yield {"index": index}
            return
        for _ in range(skip):
            next(draws)
        for start, stop in group_bounds(self.steps, self.group, skip):
            indices = [next(draws) for _ in range(start, stop)]
            # (n, batch_size): one transfer to the device per group
            yield {"steps": stop - start, "index": None if self.batch_size is None else torch.stack(indices)}


class BatchGroup:
    """The n consecutive training batches of one group on the device; ``group[j]`` gathers step j's batch
    (``GridDataModule.gather``) when the task reaches it, so a group holds no more than one batch at a time.

    Example:
        >>> from inr.data import SignalDataModule
        >>> dm = SignalDataModule(generator="sinusoids", length=256, batch_size=2)
        >>> group = BatchGroup(dm, torch.tensor([[0, 1], [2, 3]]), 2, torch.device("cpu"))
        >>> len(group), group[1]["coords"].shape
        (2, torch.Size([2, 1]))
    """

    def __init__(self, data: GridDataModule, index: Optional[Tensor], steps: int, device: torch.device) -> None:
        self.data, self.index, self.steps, self.device = data, index, steps, device

    def __len__(self) -> int:
        return self.steps

    def __getitem__(self, j: int) -> dict[str, Any]:
        if not 0 <= j < self.steps:
            raise IndexError(f"step {j} of a group of {self.steps}")
        return self.data.gather(None if self.index is None else self.index[j], self.device)


class ResumableLoader(DataLoader):
    """The training loader, resumable mid-epoch (Lightning's ``state_dict``/``load_state_dict`` protocol): its
    state is the epoch of the latest pass and how many of its steps were trained (``batches_done()``); a
    resumed run continues that epoch's batches where it stopped, as drawn in an uninterrupted run, and starts
    the next epoch afresh when the pass had been completed. ``pin_memory``: the descriptions are pinned, so
    their transfer to a CUDA device does not wait for the device."""

    def __init__(self, batches: IndexBatches, batches_done: Callable[[], int], pin_memory: bool = False) -> None:
        super().__init__(batches, batch_size=None, pin_memory=pin_memory)
        self.batches_done = batches_done

    def state_dict(self) -> dict[str, Optional[int]]:
        return {"epoch": self.dataset.pass_epoch, "batches_done": int(self.batches_done())}

    def load_state_dict(self, state: dict[str, Optional[int]]) -> None:
        if state.get("epoch") is not None:
            self.dataset.resume_at = (int(state["epoch"]), int(state.get("batches_done", 0)))


class GridDataModule(L.LightningDataModule):
    """Base DataModule of every grid task. Subclasses implement ``load_values() -> (*shape, C)`` only.

    Args:
        split: ``all`` (train = test = whole grid) or ``every_other`` (train [::2,...], test [1::2,...]).
        batch_size: coordinates per training step; ``None`` trains on the whole training split each step
            (under N > 1 ranks: each rank its 1/N share, weighted so the gradient is the full batch's).
        steps_per_epoch: training steps per epoch; default one pass over the training split for random
            batches, and ``FULL_BATCH_STEPS_PER_EPOCH`` for full batches.
        eval_chunk: coordinates per evaluation batch (bounds the memory of validation).
        seed: seed of the random batch draws.
    """

    def __init__(
        self,
        split: str = "all",
        batch_size: Optional[int] = None,
        steps_per_epoch: Optional[int] = None,
        eval_chunk: int = 65536,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if split not in SPLITS:
            raise InputError(f"data.split: unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        if batch_size is not None and batch_size < 1:
            raise InputError(f"data.batch_size must be ≥ 1 or null (full batch), got {batch_size}")
        if eval_chunk < 1:
            raise InputError(f"data.eval_chunk must be ≥ 1 coordinates, got {eval_chunk}")
        self.split, self.batch_size, self.steps_per_epoch_arg = split, batch_size, steps_per_epoch
        self.eval_chunk, self.seed = eval_chunk, seed
        self._values: Optional[Tensor] = None
        # targets T on one grid, one per member of a stacked model: ``values`` holds target k in columns k·C..(k+1)·C
        self.targets = 1
        self.predict_shape: Optional[tuple[int, ...]] = None  # the grid `predict` renders (None: the data's)
        self._device_cache: dict[tuple[str, str], Tensor] = {}
        # optimizer steps per training batch, set by the task (``INRModule.inner_steps``): K > 1 groups the steps
        self.inner_steps = 1

    # --- what a subclass provides -------------------------------------------------------------------
    def load_values(self) -> Tensor:
        """The target on its grid, float32 (*shape, C)."""
        raise NotImplementedError(f"{type(self).__name__} must implement load_values")

    def describe(self) -> str:
        """A short name of the source for messages and summaries."""
        return type(self).__name__

    # --- loading ------------------------------------------------------------------------------------
    def _ensure_loaded(self) -> None:
        if self._values is not None:
            return
        values = self.load_values()
        if values.ndim < 2:
            raise InputError(f"{self.describe()}: expected values shaped (*grid, channels), got {tuple(values.shape)}")
        if not torch.isfinite(values).all():
            raise InputError(f"{self.describe()}: the data contains NaN or infinite values")
        shape = tuple(values.shape[:-1])
        self._grid = Grid(shape)
        self._splits = split_indices(shape, self.split)
        self._values = values.reshape(self._grid.numel, values.shape[-1]).to(torch.float32).contiguous()  # (N, C)

    @property
    def grid(self) -> Grid:
        self._ensure_loaded()
        return self._grid

    @property
    def train_index(self) -> Tensor:
        """Linear grid indices of the training split."""
        self._ensure_loaded()
        return self._splits["train"][0]

    @property
    def train_shape(self) -> tuple[int, ...]:
        """Shape of the regular grid the training split forms."""
        self._ensure_loaded()
        return self._splits["train"][1]

    @property
    def test_index(self) -> Tensor:
        """Linear grid indices of the held-out split (the whole grid for ``split="all"``)."""
        self._ensure_loaded()
        return self._splits["test"][0]

    @property
    def test_shape(self) -> tuple[int, ...]:
        self._ensure_loaded()
        return self._splits["test"][1]

    @property
    def values(self) -> Tensor:
        """The target, flattened row-major: (N, C); T targets side by side: (N, T·C)."""
        self._ensure_loaded()
        return self._values

    @property
    def out_channels(self) -> int:
        """C, the channels of one target."""
        return self.values.shape[1] // self.targets

    def member_data(self, k: int) -> GridDataModule:
        """This data with target k alone (T = 1): the data of member k's single model. Same grid and splits."""
        if not 0 <= k < self.targets:
            raise InputError(f"{self.describe()}: no target {k}; the data holds targets 0..{self.targets - 1}")
        if self.targets == 1:
            return self
        view = copy.copy(self)
        view.keep_target(k)
        return view

    def keep_target(self, k: int) -> None:
        """Hold target k alone from now on (used on a copy by ``member_data``): (N, T·C) -> (N, C) values."""
        channels = self.out_channels
        self._values = self.values[:, k * channels : (k + 1) * channels].contiguous()
        self.targets, self._device_cache = 1, {}

    @property
    def shape(self) -> tuple[int, ...]:
        self._ensure_loaded()
        return self.grid.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def values_grid(self, index: Optional[Tensor] = None, shape: Optional[tuple[int, ...]] = None) -> Tensor:
        """The target as a channel-first grid (C, *shape); with ``index``/``shape``, that sub-grid."""
        values = self.values if index is None else self.values[index]
        shape = self.shape if shape is None else shape
        return values.T.reshape(values.shape[1], *shape)

    @staticmethod
    def estimate_bytes(numel: int, channels: int, ndim: int) -> int:
        """Memory a grid of ``numel`` points needs here: values (host + device copy), split indices and one
        full rendered prediction, in bytes."""
        return numel * (3 * 4 * channels + 2 * 8 + 4 * ndim)

    def check_size(self, numel: int, channels: int, ndim: int) -> None:
        check_memory(f"{self.describe()} at {numel:,} grid points", self.estimate_bytes(numel, channels, ndim))

    def setup(self, stage: str) -> None:
        self._ensure_loaded()

    # --- ranks --------------------------------------------------------------------------------------
    @property
    def rank_and_world_size(self) -> tuple[int, int]:
        """(global rank, number of ranks) of the attached Trainer; (0, 1) without one, and for stacked members
        sharded over the ranks, which each see all of the data (``inr.tasks.members``)."""
        trainer = self.trainer
        if trainer is None:
            return (0, 1)
        stack = getattr(getattr(trainer, "lightning_module", None), "stack", None)
        if getattr(stack, "shard", None) is not None:
            return (0, 1)
        return (trainer.global_rank, trainer.world_size)

    def points_per_step(self, world_size: int = 1) -> int:
        """Training points one rank handles per step: ``batch_size``, or its share ⌈n/N⌉ of a full batch."""
        return self.batch_size or math.ceil(len(self.train_index) / world_size)

    def check_shardable(self, world_size: int) -> None:
        """Refuse a full batch that cannot give every rank a point (an empty share has no mean loss)."""
        n = len(self.train_index)
        if self.batch_size is None and n < world_size:
            raise InputError(
                f"data.batch_size null: the training split has {n} points, fewer than the {world_size} ranks sharing it; use fewer devices"
            )

    # --- batches ------------------------------------------------------------------------------------
    @property
    def steps_per_epoch(self) -> int:
        if self.steps_per_epoch_arg is not None:
            return self.steps_per_epoch_arg
        if self.batch_size is None:
            return FULL_BATCH_STEPS_PER_EPOCH
        return max(1, math.ceil(len(self.train_index) / self.batch_size))

    def train_dataloader(self) -> DataLoader:
        self._ensure_loaded()
        self.check_shardable(self.rank_and_world_size[1])
        trainer = self.trainer
        batches = IndexBatches(
            self.train_index,
            self.batch_size,
            self.steps_per_epoch,
            self.seed,
            epoch_fn=(lambda: trainer.current_epoch) if trainer is not None else (lambda: 0),
            rank=self.rank_and_world_size[0],
            group=self.inner_steps,
            step_fn=lambda: getattr(trainer, "global_step", 0),  # 0 without a Trainer (or a stand-in without one)
        )
        if trainer is None:
            done = lambda: 0
        elif self.inner_steps == 1:
            # `processed`, not `completed`: a checkpoint saved in on_train_batch_end (ModelCheckpoint's
            # every_n_train_steps) comes after the batch's optimizer step but before Lightning counts it completed
            done = lambda: trainer.fit_loop.epoch_loop.batch_progress.current.processed
        else:
            # optimizer steps of this epoch: the global step counts every step of a group as it is taken, so a
            # checkpoint saved between the steps of a group (before Lightning counts the group) is exact too
            done = lambda: trainer.global_step - batches.pass_start
        module = getattr(trainer, "lightning_module", None)
        device = module.device if module is not None else None
        return ResumableLoader(batches, done, pin_memory=device is not None and device.type == "cuda")

    def val_dataloader(self) -> DataLoader:
        # each rank evaluates its share of the held-out split; torchmetrics reduces the states over the ranks
        self._ensure_loaded()
        rank, world_size = self.rank_and_world_size
        return DataLoader(
            IndexBatches(shard(self.test_index, rank, world_size), self.eval_chunk, 0, shuffle=False), batch_size=None
        )

    def test_dataloader(self) -> DataLoader:
        """The held-out split, as for validation (``test`` logs the same measurements as ``test/...``)."""
        return self.val_dataloader()

    def predict_dataloader(self) -> DataLoader:
        """One render request: the grid of ``predict_shape`` (set by ``predict``; default the data's grid)."""
        # batches of one request (not batch_size=None), so the prediction writer knows each batch's index
        return DataLoader([{"shape": list(self.predict_shape or self.shape)}], batch_size=1, collate_fn=_only_item)

    def _on_device(self, name: str, make, device: torch.device) -> Tensor:
        """A tensor built by ``make()`` and copied to ``device`` once, then reused every step."""
        key = (name, str(device))
        if key not in self._device_cache:
            self._device_cache[key] = make().to(device)
        return self._device_cache[key]

    def gather(self, index: Optional[Tensor], device: torch.device) -> dict[str, Any]:
        """Coordinates and values of grid indices on ``device``. ``None`` = the whole training split, or under
        N > 1 ranks this rank's share of it with its loss weight ``shard_weight`` (see ``shard_weight``)."""
        if index is None:
            rank, world_size = self.rank_and_world_size
            part = self.train_index if world_size == 1 else shard(self.train_index, rank, world_size)
            key = "" if world_size == 1 else f"@{rank}/{world_size}"
            batch = {
                "index": self._on_device("train_index" + key, lambda: part, device),
                "coords": self._on_device("train_coords" + key, lambda: self.grid.coords(part), device),
                "values": self._on_device("train_values" + key, lambda: self.values[part], device),
                "full_batch": True,
            }
            if world_size > 1:
                batch["shard_weight"] = shard_weight(len(part), len(self.train_index), world_size)
            return batch
        values = self._on_device("values", lambda: self.values, device)
        index = index.to(device)
        return {"index": index, "coords": self.grid.coords(index), "values": values[index], "full_batch": False}

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        if "shape" in batch:  # a render request of `predict`
            return batch
        device = self.trainer.lightning_module.device if self.trainer is not None else torch.device("cpu")
        if "steps" in batch:  # the steps of one group (inner_steps K > 1)
            group = {"group": BatchGroup(self, batch["index"], int(batch["steps"]), device)}
            if batch["index"] is None and self.rank_and_world_size[1] > 1:  # a share of the full batch
                group["shard_weight"] = self.gather(None, device)["shard_weight"]
            return group
        return self.gather(batch["index"], device)
