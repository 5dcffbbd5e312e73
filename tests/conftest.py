"""Fixtures shared by the test modules (under ``--import-mode=importlib`` a conftest is not importable, so the
shared pieces are fixtures): the one quiet Trainer every test builds (the experiments' own), a fit of a few
steps and a tiny TensorBoard-logged trainer made of it; the command lines of tiny runs (an image, a radiance field,
the built-in sphere, and ``tiny_flags`` for the tests that tune their own), ``cli_main`` in process with its exit
code, a refusal's one ``error:`` line, the files under a directory, two checkpoints compared bit for bit, a DICOM
file written; and a suite-wide guard: tests write under their tmp_path, never into the repository root or the
working directory. Under pytest-xdist, each worker takes its share of the cores and the tests marked ``slow`` run
first."""

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


# the settings _flags takes by name, in the order it writes them
NAMED_FLAGS = {
    "width": "--model.init_args.network.init_args.width",
    "features": "--model.init_args.encoder.init_args.num_features",
    "steps": "--trainer.max_steps",
    "sanity": "--trainer.num_sanity_val_steps",
    "bar": "--trainer.enable_progress_bar",
    "callbacks": "--trainer.callbacks",
    "save_dir": "--trainer.logger.init_args.save_dir",
}


def _flags(config: str | Sequence[str] | None, resolution: Any, *settings: Any, **named: Any) -> list[str]:
    """The command line of a tiny run: ``--config`` for each of ``config`` (a name, several, or None), the data at
    ``resolution`` (None: the config's), ``settings`` (flags and their values, in order), then, where given,
    ``width`` (the network's), ``features`` (the encoder's), ``steps`` (max_steps), ``sanity`` (sanity-check steps),
    ``bar`` (the progress bar), ``callbacks`` and ``save_dir`` (the logger's); ``quiet=True`` is no sanity pass,
    no progress bar and no callbacks (``sanity=0, bar=False, callbacks="null"``)."""
    if named.pop("quiet", False):
        named = {"sanity": 0, "bar": False, "callbacks": "null", **named}
    configs = [config] if isinstance(config, (str, os.PathLike)) else list(config or ())
    flags = [part for name in configs for part in ("--config", str(name))]
    if resolution is not None:
        flags += ["--data.init_args.resolution", str(resolution)]
    flags += [str(setting) for setting in settings]
    for key, flag in NAMED_FLAGS.items():
        value = named.pop(key, None)
        if value is not None:
            flags += [flag, str(value).lower() if isinstance(value, bool) else str(value)]
    assert not named, f"unknown settings of a tiny run: {sorted(named)}"
    return flags


# resolution 16, width 16, 5 steps per epoch, no image/spectral callbacks: a run of 10 steps takes about a second
TINY_IMAGE_RUN = _flags("image.yaml", 16, "--data.init_args.steps_per_epoch", 5, width=16, features=16, steps=10, quiet=True)

# nerf.yaml at 8², 4 views (2 held out), width 16, 8 samples a ray, 2 steps: a radiance field's run in seconds
TINY_NERF_RUN = _flags(
    "nerf.yaml",
    8,
    *("--data.init_args.views", 4, "--data.init_args.heldout_views", 2, "--data.init_args.batch_size", 64),
    *("--data.init_args.steps_per_epoch", 2, "--model.init_args.samples", 8, "--model.init_args.eval_train_views", 1),
    width=16,
    features=16,
    steps=2,
    quiet=True,
)

# volume.yaml's built-in sphere at 16³, a 64-wide network of depth 2 on 32 features, 60 steps: a mesh of the sphere
TINY_SPHERE_RUN = _flags(
    "volume.yaml",
    16,
    *("--data.init_args.builtin", "sphere", "--data.init_args.batch_size", 1024, "--data.init_args.steps_per_epoch", 10),
    *("--model.init_args.encoder.init_args.sigma", 1, "--model.init_args.network.init_args.depth", 2),
    *("--model.init_args.optimizer.init_args.lr", 0.01),
    width=64,
    features=32,
    steps=60,
    bar=False,
)


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
def tiny_flags() -> Callable[..., list[str]]:
    """``tiny_flags(config, resolution, *settings, width=, features=, steps=, sanity=, bar=, callbacks=, save_dir=,
    quiet=)``: the command line of a tiny run (``_flags`` above), for the tests that tune their own."""
    return _flags


@pytest.fixture(scope="session")
def tiny_sphere_args() -> Callable[..., list[str]]:
    """``tiny_sphere_args(save_dir, *extra)``: train.py arguments of a 60-step 16³ occupancy run of the built-in
    sphere logged under ``save_dir``."""

    def args(save_dir, *extra: str) -> list[str]:
        return [*TINY_SPHERE_RUN, "--trainer.logger.init_args.save_dir", str(save_dir), *extra]

    return args


@pytest.fixture(scope="session")
def cli_run() -> Callable[..., tuple[Any, Any]]:
    """``cli_run(args)``: train.py's ``cli_main`` in this process -> (exit code, the CLI or None)."""
    from inr.run.cli import cli_main

    def run(args: Sequence[str]) -> tuple[Any, Any]:
        try:
            return 0, cli_main(list(args))
        except SystemExit as exc:
            return exc.code, None

    return run


@pytest.fixture
def refusal(capsys) -> Callable[..., str]:
    """``refusal(call, *args)``: ``call(*args)`` exits with code 2 and one ``error:`` line on stderr; -> that line."""

    def refused(call: Callable[..., Any], *args: Any) -> str:
        with pytest.raises(SystemExit) as exc:
            call(*args)
        assert exc.value.code == 2
        errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, errors
        return errors[0]

    return refused


@pytest.fixture(scope="session")
def files_under() -> Callable[[Path], list[Path]]:
    """``files_under(path)``: the files below ``path``, sorted (none where it does not exist)."""

    def files(path: Path) -> list[Path]:
        return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []

    return files


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
def assert_same_training_state() -> Callable[[dict, dict], None]:
    """``assert_same_training_state(a, b)``: two loaded checkpoints bit for bit: the step, every entry of the
    state dict and Adam's moments."""

    def check(a: dict, b: dict) -> None:
        assert a["global_step"] == b["global_step"]
        assert a["state_dict"].keys() == b["state_dict"].keys()
        for key, value in a["state_dict"].items():
            assert torch.equal(value, b["state_dict"][key]), key
        moments = lambda c: [s[m] for s in c["optimizer_states"][0]["state"].values() for m in ("exp_avg", "exp_avg_sq")]
        assert all(torch.equal(x, y) for x, y in zip(moments(a), moments(b), strict=True))

    return check


@pytest.fixture(scope="session")
def write_dicom() -> Callable[..., None]:
    """``write_dicom(path, rows, columns, frames=None, pixels=b"", instance=None, series="1.2.3", **attributes)``: one
    CT DICOM file of int16 values (MONOCHROME2); ``pixels`` its PixelData (empty: zeros for every frame), ``frames``
    its NumberOfFrames (None: not set), ``attributes`` any further elements (``Modality="CT"``, ...)."""

    def write(path, rows, columns, frames=None, pixels=b"", instance=None, series="1.2.3", **attributes) -> None:
        from pydicom.dataset import Dataset, FileMetaDataset
        from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid

        meta = FileMetaDataset()
        meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID = CTImageStorage, generate_uid()
        meta.TransferSyntaxUID = ExplicitVRLittleEndian
        ds = Dataset()
        ds.file_meta = meta
        ds.SOPClassUID, ds.SOPInstanceUID, ds.SeriesInstanceUID = CTImageStorage, meta.MediaStorageSOPInstanceUID, series
        ds.Rows, ds.Columns, ds.SamplesPerPixel, ds.PhotometricInterpretation = rows, columns, 1, "MONOCHROME2"
        ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 1
        for name, value in attributes.items():
            setattr(ds, name, value)
        if instance is not None:
            ds.InstanceNumber = instance
        if frames is not None:
            ds.NumberOfFrames = frames
        ds.PixelData = pixels or bytes(2 * rows * columns * (frames or 1))
        ds.save_as(path, enforce_file_format=True)

    return write


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
