"""Fixtures shared by the test modules (under ``--import-mode=importlib`` a conftest is not importable, so the
shared pieces are fixtures): the one quiet Trainer every test builds (the experiments' own), a fit of a few
steps and a tiny TensorBoard-logged trainer made of it, the command line of a tiny image run; and a suite-wide
guard: tests write under their tmp_path, never into the repository root or the working directory. Under
pytest-xdist, each worker takes its share of the cores and the tests marked ``slow`` run first."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lightning as L
import pytest
import torch
from lightning.pytorch.loggers import TensorBoardLogger

from inr.methods import training

ROOT = Path(__file__).resolve().parents[1]
# written by Python and pytest themselves, not by the code under test
TOOL_FILES = {"__pycache__", ".pytest_cache"}

# resolution 16, width 16, 5 steps per epoch, no image/spectral callbacks: a run of 10 steps takes about a second
TINY_IMAGE_RUN = [
    "--config",
    "image.yaml",
    "--data.init_args.resolution",
    "16",
    "--data.init_args.steps_per_epoch",
    "5",
    "--model.init_args.network.init_args.width",
    "16",
    "--model.init_args.encoder.init_args.num_features",
    "16",
    "--trainer.max_steps",
    "10",
    "--trainer.num_sanity_val_steps",
    "0",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.callbacks",
    "null",
]

# nerf.yaml at 8², 4 views (2 held out), width 16, 8 samples a ray, 2 steps: a radiance field's run in seconds
TINY_NERF_RUN = [
    "--config",
    "nerf.yaml",
    "--data.init_args.resolution",
    "8",
    "--data.init_args.views",
    "4",
    "--data.init_args.heldout_views",
    "2",
    "--data.init_args.batch_size",
    "64",
    "--data.init_args.steps_per_epoch",
    "2",
    "--model.init_args.network.init_args.width",
    "16",
    "--model.init_args.encoder.init_args.num_features",
    "16",
    "--model.init_args.samples",
    "8",
    "--model.init_args.eval_train_views",
    "1",
    "--trainer.max_steps",
    "2",
    "--trainer.num_sanity_val_steps",
    "0",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.callbacks",
    "null",
]


def _threads_per_worker() -> int | None:
    """cores // workers under pytest-xdist (at least 1); None outside it."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // workers) if workers > 1 else None


def pytest_configure(config: pytest.Config) -> None:
    # torch starts one thread per core in every process: two workers on two cores would run four, and OpenMP
    # threads that spin while they wait take the core from the other worker. The variable carries the share
    # to the processes the tests start (train.py, DDP ranks); a value set by the user is kept.
    threads = _threads_per_worker()
    if threads is not None and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        torch.set_num_threads(threads)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules holding a test marked ``slow`` first, their slow tests first: with pytest-xdist, a long test
    drawn last keeps one worker busy while the other has nothing left to do. A module's tests stay together,
    so its module-scoped fixtures are built once per worker."""
    slow_modules: dict[Path, int] = {}  # module -> its rank among the slow modules, in collection order
    for item in items:
        if item.get_closest_marker("slow") is not None:
            slow_modules.setdefault(item.path, len(slow_modules))

    def key(indexed: tuple[int, pytest.Item]) -> tuple[int, int, int, int]:
        index, item = indexed
        if item.path not in slow_modules:
            return (1, 0, 0, index)
        return (0, slow_modules[item.path], item.get_closest_marker("slow") is None, index)

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


@pytest.fixture(scope="session")
def tiny_nerf_args() -> Callable[..., list[str]]:
    """``tiny_nerf_args(save_dir, *extra)``: train.py arguments of a 2-step 8² radiance-field run under ``save_dir``."""

    def args(save_dir, *extra: str) -> list[str]:
        return [*TINY_NERF_RUN, "--trainer.logger.init_args.save_dir", str(save_dir), *extra]

    return args


@pytest.fixture(scope="session")
def tiny_run_args() -> Callable[..., list[str]]:
    """``tiny_run_args(save_dir, *extra)``: train.py arguments of a 10-step 16² image run logged under ``save_dir``."""

    def args(save_dir, *extra: str) -> list[str]:
        return [*TINY_IMAGE_RUN, "--trainer.logger.init_args.save_dir", str(save_dir), *extra]

    return args


@pytest.fixture(scope="session")
def diverging_at() -> Callable[..., L.LightningModule]:
    """``diverging_at(step, **image_fitting_kwargs)``: an ImageFitting whose loss is NaN at global step ``step``."""
    from inr.tasks import ImageFitting

    class DivergesAtStep(ImageFitting):
        def __init__(self, bad_step: int, **kw):
            super().__init__(**kw)
            self.bad_step = bad_step

        def loss(self, raw, target):
            loss = super().loss(raw, target)
            return loss * float("nan") if self.global_step == self.bad_step else loss

    return DivergesAtStep


@pytest.fixture(scope="session")
def quiet_trainer() -> Callable[..., L.Trainer]:
    """``quiet_trainer(steps=-1, logger=False, callbacks=(), **overrides)``: the experiments' quiet Trainer
    (``inr.methods.training.quiet_trainer``): no progress bar, model summary, checkpoints, validation or
    sanity pass, no logger unless given, one device. ``steps`` is ``max_steps`` (-1: bounded by ``max_epochs``
    instead); any Trainer argument overrides, e.g. ``enable_checkpointing=True``, or ``limit_val_batches=1.0``
    (with ``num_sanity_val_steps=2``, Lightning's own sanity pass) to validate."""

    def make(steps: int = -1, logger: Any = False, callbacks: Sequence[L.Callback] = (), **overrides: Any) -> L.Trainer:
        return training.quiet_trainer(steps, logger=logger, callbacks=callbacks, **overrides)

    return make


@pytest.fixture(scope="session")
def fit_steps(quiet_trainer) -> Callable[..., L.Trainer]:
    """``fit_steps(model, datamodule, steps)``: ``steps`` optimisation steps of a ``quiet_trainer``; returns
    the trainer."""

    def fit(model: L.LightningModule, datamodule: L.LightningDataModule, steps: int) -> L.Trainer:
        trainer = quiet_trainer(steps)
        trainer.fit(model, datamodule=datamodule)
        return trainer

    return fit


@pytest.fixture(scope="session")
def tiny_trainer(quiet_trainer) -> Callable[..., L.Trainer]:
    """``tiny_trainer(tmp_path, callbacks, max_epochs, name="run", **overrides)``: a ``quiet_trainer`` of
    ``max_epochs`` epochs logged to TensorBoard under ``tmp_path/name``."""

    def trainer(tmp_path, callbacks, max_epochs: int, name: str = "run", **overrides) -> L.Trainer:
        logger = TensorBoardLogger(str(tmp_path), name=name)
        return quiet_trainer(max_epochs=max_epochs, logger=logger, callbacks=callbacks, **overrides)

    return trainer


def _listing(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()} - TOOL_FILES


@pytest.fixture(scope="session", autouse=True)
def nothing_written_into_the_repository_or_cwd():
    directories = {ROOT, Path(os.getcwd()).resolve()}
    before = {d: _listing(d) for d in directories}
    yield
    stray = sorted(str(d / name) for d in directories for name in _listing(d) - before[d])
    assert not stray, f"tests left files outside their tmp_path: {stray}"
