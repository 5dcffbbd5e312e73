"""``SignalSet``: a class of signals on one grid — S training and M test signals, disjoint — served to meta-learning
(``inr.tasks.meta.MetaLearning``) as batches of K signals; ``signal_data`` gives one of them as the data of an
ordinary fit (``HeldSignal``, ``HeldMeasurements``).

The classes and where their signals come from: ``inr.data.signal_classes``. The training signals are the grid's
values with S targets side by side, (N, S·C) as a stacked model's targets are (``GridDataModule.targets``); the
test signals are held apart (``test_values``). Each signal is split as a single fit splits it: images and shapes
``every_other`` (adapted on the [::2] points, scored on the [1::2] points), CT ``all`` (adapted through its
projections, scored on the whole grid against its phantom).

A training batch is K signals drawn with replacement by a generator seeded by (seed, epoch) — the same draw on
every rank, each rank adapting its 1/N share (K must be a multiple of the ranks) — so a resumed run draws what
the uninterrupted one drew, and N ranks meta-train on the draws of one process. On the device it becomes::

    {"signals": (K_r,), "coords": (n, d), "targets": (K_r, n, C) or measurements (K_r, C, *measurement_shape),
     "eval_coords": (m, d), "eval_targets": (K_r, m, C), "full_batch": True}

Validation and test batches are the same for the test signals (each rank its share, K at a time).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, Optional

import torch
from torch import Tensor
from torch.utils.data import DataLoader

import inr.data.signal_classes as classes
from inr.data.measurements import MeasurementDataModule
from inr.data.module import GridDataModule, IndexBatches, ResumableLoader, shard
from inr.errors import InputError
from inr.operators.base import Operator
from inr.operators.sampling import AdditiveNoise, PixelMask
from inr.operators.tomography import ParallelBeamProjection, even_angles


class SignalSet(GridDataModule):
    """S training and M test signals of one class (``inr.data.signal_classes``) on an R^d grid.

    Args:
        kind: ``natural`` (photograph crops), ``text``, ``ct`` (phantoms seen through ``angles`` projections) or
            ``shape`` (occupancy on R³).
        train, test: directories of your own signals for either side (``signal_classes.read_directory``);
            None: the class's generated or bundled signals.
        train_signals, test_signals: S and M of a generated side (and the number of crops from a directory of
            photographs); a directory of other signals gives all its files.
        resolution: R (default 64, shapes 32).
        signals_per_step: K, the signals of one meta-training step (a multiple of the ranks).
        angles: CT projection angles, evenly in [0, π) (the paper's 20).
        noise_std: σ of Gaussian noise on simulated CT projections.
        phantom: ``ellipses`` (learnit's class) or ``shepp_logan`` (the paper's perturbed phantoms).
        signal_seed: which signals: training signal i is drawn from seed ``signal_seed + i``, test signal i from
            ``TEST_SEEDS + signal_seed + i``.
        split: a signal's split (default ``all`` for CT, ``every_other`` otherwise).
        steps_per_epoch: meta-training steps per epoch (default 10, as full-batch training).
        seed: seed of the draws of K signals per step.

    Example:
        >>> dm = SignalSet(kind="ct", train_signals=4, test_signals=2, resolution=16, signals_per_step=2)
        >>> dm.setup("fit")
        >>> dm.shape, dm.out_channels, dm.targets, tuple(dm.test_measurements.shape[:2])
        ((16, 16), 1, 4, (2, 1))
    """

    def __init__(
        self,
        kind: Literal["natural", "text", "ct", "shape"] = "natural",
        train: Optional[str] = None,
        test: Optional[str] = None,
        train_signals: int = 128,
        test_signals: int = 8,
        resolution: Optional[int] = None,
        signals_per_step: int = 4,
        angles: int = 20,
        noise_std: float = 0.0,
        phantom: Literal["ellipses", "shepp_logan"] = "ellipses",
        signal_seed: int = 0,
        split: Optional[str] = None,
        steps_per_epoch: Optional[int] = None,
        eval_chunk: int = 65536,
        seed: int = 0,
    ) -> None:
        if kind not in classes.KINDS:
            raise InputError(f"data.kind: unknown class {kind!r}; choose one of {', '.join(classes.KINDS)}")
        super().__init__(
            split=split or ("all" if kind == "ct" else "every_other"),
            batch_size=None,
            steps_per_epoch=steps_per_epoch,
            eval_chunk=eval_chunk,
            seed=seed,
        )
        if isinstance(signals_per_step, bool) or not isinstance(signals_per_step, int) or signals_per_step < 1:
            raise InputError(f"data.signals_per_step must be an int ≥ 1 (signals per meta-training step), got {signals_per_step}")
        if angles < 1:
            raise InputError(f"data.angles must be ≥ 1, got {angles}")
        if not noise_std >= 0:
            raise InputError(f"data.noise_std must be ≥ 0, got {noise_std}")
        if phantom not in ("ellipses", "shepp_logan"):
            raise InputError(f"data.phantom: unknown phantom {phantom!r}; choose ellipses or shepp_logan")
        if train is not None and test is not None and Path(train).resolve() == Path(test).resolve():
            raise InputError(f"data.test {test} is data.train: train and test signals must be disjoint; give two directories")
        self.kind, self.train_dir, self.test_dir = kind, train, test
        self.train_count = classes.signal_count(train_signals, "train_signals")
        self.test_count = classes.signal_count(test_signals, "test_signals")
        self.side = classes.grid_side(kind, resolution)
        self.signals_per_step, self.angles, self.noise_std, self.phantom = signals_per_step, angles, noise_std, phantom
        self.signal_seed = signal_seed
        self.mode = "occupancy" if kind == "shape" else None  # a volume task's mode (linked to the model)
        self.train_names: list[str] = []
        self.test_names: list[str] = []
        self._test_values: Optional[Tensor] = None
        self._operator: Optional[Operator] = None
        self._measurements: dict[str, Tensor] = {}

    def describe(self) -> str:
        sides = "×".join([str(self.side)] * classes.ndim_of(self.kind))
        return f"{self.kind} signals at {sides} ({self.train_dir or 'generated'} / {self.test_dir or 'generated'})"

    # --- the signals ------------------------------------------------------------------------------------
    def side_signals(self, which: str) -> tuple[Tensor, list[str]]:
        """The training or test signals (S, *shape, C) and their names."""
        directory, count = (self.train_dir, self.train_count) if which == "train" else (self.test_dir, self.test_count)
        first = self.signal_seed + (0 if which == "train" else classes.TEST_SEEDS)
        seeds = list(range(first, first + count))
        if directory is not None:
            signals, names = classes.read_directory(directory, self.kind, self.side, which)
            if self.kind == "natural":  # photographs: the side's crops are drawn from them
                crops = classes.random_crops(signals, count, self.side, first)
                return crops, [f"crop {i} of {directory}" for i in range(count)]
            return torch.stack(signals), names
        if self.kind == "natural":
            photos = classes.natural_photographs(classes.NATURAL_TRAIN if which == "train" else classes.NATURAL_TEST)
            return classes.random_crops(photos, count, self.side, first), [f"crop {seed}" for seed in seeds]
        if self.kind == "text":
            return classes.text_images(seeds, self.side), [f"text {seed}" for seed in seeds]
        if self.kind == "ct":
            return classes.phantoms(seeds, self.side, self.phantom), [f"phantom {seed}" for seed in seeds]
        return classes.shapes(seeds, self.side), [f"shape {seed}" for seed in seeds]

    def load_values(self) -> Tensor:
        side = self.side
        channels, points = classes.channels_of(self.kind), classes.points_of(self.kind, side)
        self.check_size(points, channels * (self.train_count + self.test_count), classes.ndim_of(self.kind))
        if self.kind == "natural" and self.train_dir is not None and self.test_dir is not None:
            photos = [
                classes.read_directory(d, "natural", side, key)[0]
                for d, key in ((self.train_dir, "train"), (self.test_dir, "test"))
            ]
            names = [
                classes.directory_files(d, "natural", key) for d, key in ((self.train_dir, "train"), (self.test_dir, "test"))
            ]
            classes.check_disjoint(photos[0], photos[1], [p.name for p in names[0]], [p.name for p in names[1]])
        train, self.train_names = self.side_signals("train")
        test, self.test_names = self.side_signals("test")
        if train.shape[1:] != test.shape[1:]:
            raise InputError(
                f"data.test: signals of shape {tuple(test.shape[1:])}, the training signals {tuple(train.shape[1:])}"
            )
        classes.check_disjoint(list(train), list(test), self.train_names, self.test_names)
        self.targets, self.train_count, self.test_count = len(train), len(train), len(test)  # a directory: its files
        self._test_values = stacked_columns(test)
        shape = train.shape[1:-1]
        return stacked_columns(train).reshape(*shape, -1)  # (N, S·C) -> (*shape, S·C)

    @property
    def out_channels(self) -> int:
        """C of one signal, known before the signals are read (the command line links it to the model)."""
        return classes.channels_of(self.kind)

    @property
    def test_values(self) -> Tensor:
        """The test signals side by side, (N, M·C)."""
        self._ensure_loaded()
        return self._test_values

    def signal_values(self, k: int, which: str = "test") -> Tensor:
        """Signal k of a side as a grid (*shape, C)."""
        values, count = (self.values, self.targets) if which == "train" else (self.test_values, self.test_count)
        if not 0 <= k < count:
            raise InputError(f"{self.describe()}: no {which} signal {k}; it holds 0..{count - 1}")
        channels = self.out_channels
        return values[:, k * channels : (k + 1) * channels].reshape(*self.shape, channels)

    # --- CT: the operator and each signal's projections --------------------------------------------------
    @property
    def operator(self) -> Operator:
        """A of the class (CT: the parallel-beam projection at ``angles`` angles); refused for other classes."""
        if self.kind != "ct":
            raise AttributeError(f"{self.kind} signals are sampled directly; they have no measurement operator")
        if self._operator is None:
            self._operator = ParallelBeamProjection(even_angles(self.angles), self.shape)
        return self._operator

    def measurements(self, which: str) -> Tensor:
        """y_k = A x_k + σε of every signal of a side, (S, C, *measurement_shape), simulated once."""
        if which not in self._measurements:
            count = self.targets if which == "train" else self.test_count
            grids = torch.stack([self.signal_values(k, which).movedim(-1, 0) for k in range(count)])  # (S, C, *shape)
            with torch.no_grad():
                clean = torch.cat([self.operator(chunk.flatten(0, 1)) for chunk in grids.split(64)])  # channels: S·C
            noise = AdditiveNoise(self.noise_std, self.signal_seed + (0 if which == "train" else classes.TEST_SEEDS))
            self._measurements[which] = noise(clean).view(count, self.out_channels, *clean.shape[1:])
        return self._measurements[which]

    @property
    def test_measurements(self) -> Tensor:
        return self.measurements("test")

    def setup(self, stage: str) -> None:
        super().setup(stage)
        if self.kind == "ct":
            self.measurements("train"), self.measurements("test")

    # --- batches ------------------------------------------------------------------------------------------
    def _on_device(self, name: str, make, device: torch.device) -> Tensor:
        with torch.inference_mode(False):  # built during validation, the tensors still serve training steps
            return super()._on_device(name, make, device)

    def batch(self, signals: Tensor, which: str, device: torch.device) -> dict[str, Any]:
        """The adaptation batch of signals (K,) of a side (module docstring)."""
        with torch.inference_mode(False):
            channels = self.out_channels
            values = self._on_device(f"{which}_values", lambda: self.values if which == "train" else self.test_values, device)
            idx = signals.to(device)
            per_signal = lambda index: values[index].view(len(index), -1, channels).index_select(1, idx).transpose(0, 1)
            train_index = self._on_device("train_index", lambda: self.train_index, device)
            test_index = self._on_device("test_index", lambda: self.test_index, device)
            if self.kind == "ct":
                measured = self._on_device(f"{which}_measurements", lambda: self.measurements(which), device)
                targets = measured.index_select(0, idx)  # (K, C, *measurement_shape)
            else:
                targets = per_signal(train_index)  # (n, T·C) -> (n, T, C) -> (n, K, C) -> (K, n, C)
            return {
                "signals": idx,
                "coords": self._on_device("train_coords", lambda: self.grid.coords(self.train_index), device),
                "targets": targets,
                "eval_coords": self._on_device("test_coords", lambda: self.grid.coords(self.test_index), device),
                "eval_targets": per_signal(test_index),
                "full_batch": True,
            }

    def points_per_step(self, world_size: int = 1) -> int:
        return len(self.train_index) * max(1, self.signals_per_step // world_size)

    def check_shardable(self, world_size: int) -> None:
        if self.signals_per_step % world_size:
            raise InputError(
                f"data.signals_per_step {self.signals_per_step} does not split evenly over {world_size} ranks; give a multiple of {world_size}"
            )

    def train_dataloader(self) -> DataLoader:
        self._ensure_loaded()
        rank, world_size = self.rank_and_world_size
        self.check_shardable(world_size)
        trainer = self.trainer
        batches = IndexBatches(
            torch.arange(self.targets),
            self.signals_per_step,
            self.steps_per_epoch,
            self.seed,
            epoch_fn=(lambda: trainer.current_epoch) if trainer is not None else (lambda: 0),
            rank=0,  # every rank draws the step's K signals and adapts its share of them
        )
        done = (lambda: trainer.fit_loop.epoch_loop.batch_progress.current.processed) if trainer is not None else (lambda: 0)
        return ResumableLoader(batches, done)

    def val_dataloader(self) -> DataLoader:
        self._ensure_loaded()
        rank, world_size = self.rank_and_world_size
        mine = shard(torch.arange(self.test_count), rank, world_size)
        return DataLoader(IndexBatches(mine, self.signals_per_step, 0, shuffle=False), batch_size=None)

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        if "shape" in batch:  # a render request of `predict`
            return batch
        trainer = self.trainer
        device = trainer.lightning_module.device if trainer is not None else torch.device("cpu")
        training = trainer is not None and trainer.training
        index = batch["index"]
        if training:
            rank, world_size = self.rank_and_world_size
            index = shard(index, rank, world_size)
        return self.batch(index, "train" if training else "test", device)

    # --- one signal as the data of an ordinary fit --------------------------------------------------------
    def signal_data(
        self, k: int, which: str = "test", angles: Optional[int] = None, keep: Optional[float] = None
    ) -> GridDataModule:
        """Signal k of a side as a fit's data: its values on the grid with the set's split (``HeldSignal``); for CT
        its phantom with its projections at ``angles`` (default the set's) angles; with ``keep`` (images, shapes) the
        signal seen through a random fraction ``keep`` of its grid points, inpainting (``PixelMask``; the mask is
        drawn with the signal's own seed, so every row and run sees the same points). The last two are
        ``HeldMeasurements``: the fit sees A f, scored against the whole signal."""
        self._ensure_loaded()
        names = self.train_names if which == "train" else self.test_names
        values = self.signal_values(k, which)
        seed = self.signal_seed + (0 if which == "train" else classes.TEST_SEEDS) + k
        if keep is not None:
            if self.kind == "ct":
                raise InputError("keep: CT signals are seen through their projections, not a pixel mask")
            if not 0 < keep <= 1:
                raise InputError(f"keep must lie in (0, 1], got {keep}")
            mask = PixelMask(torch.rand(self.shape, generator=torch.Generator().manual_seed(seed)) < keep)
            with torch.no_grad():
                observed = mask(values.movedim(-1, 0))
            return HeldMeasurements(values, mask, observed, name=names[k])
        if self.kind != "ct":
            return HeldSignal(values, split=self.split, name=names[k])
        operator = ParallelBeamProjection(even_angles(angles or self.angles), self.shape)
        with torch.no_grad():
            clean = operator(values.movedim(-1, 0))
        return HeldMeasurements(values, operator, AdditiveNoise(self.noise_std, seed)(clean), name=names[k])


def stacked_columns(signals: Tensor) -> Tensor:
    """Signals (S, *shape, C) side by side as one grid's values, (N, S·C): signal k in columns k·C..(k+1)·C.

    Example:
        >>> stacked_columns(torch.arange(8.0).view(2, 2, 2, 1)).tolist()
        [[0.0, 4.0], [1.0, 5.0], [2.0, 6.0], [3.0, 7.0]]
    """
    count, channels = signals.shape[0], signals.shape[-1]
    points = math.prod(signals.shape[1:-1])
    return signals.reshape(count, points, channels).transpose(0, 1).reshape(points, count * channels).contiguous()


class HeldSignal(GridDataModule):
    """One signal given as its values (*shape, C) on the grid, split as ``split``: the data of an ordinary fit."""

    def __init__(self, values: Tensor, split: str = "every_other", name: str = "signal", **kwargs: Any) -> None:
        super().__init__(split=split, **kwargs)
        self.given, self.name = values, name

    def describe(self) -> str:
        return self.name

    def load_values(self) -> Tensor:
        return self.given


class HeldMeasurements(MeasurementDataModule):
    """One phantom (*shape, C) and its measurements y through ``operator``: the data of an ordinary inverse fit."""

    def __init__(self, truth: Tensor, operator: Operator, measured: Tensor, name: str = "signal", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.truth, self.given_operator, self.measured, self.name = truth, operator, measured, name

    def describe(self) -> str:
        return self.name

    def load_values(self) -> Tensor:
        return self.truth

    def build_operator(self) -> Operator:
        return self.given_operator

    def load_measurements(self) -> Optional[Tensor]:
        return self.measured
