"""Checks made after the config is instantiated and before anything is written or trained.

Each refuses, with one ``InputError`` line naming the key, what would otherwise fail later with a
traceback (or silently write somewhere unexpected): an output location that cannot be written, a log
directory or callback file outside the run, two callbacks with the same state, an optimizer that
rejects its arguments, a training batch that would not fit in memory, and what a callback refuses through its
``check_before_fit(model, datamodule)``.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint

from inr.callbacks.budget import MonitoringBudget
from inr.errors import InputError
from inr.io.run_dir import run_dir
from inr.tasks.memory import check_batch_memory


def check_output_location(trainer: L.Trainer) -> None:
    """The logger's ``save_dir`` (or the trainer's root) must be a directory this process can write, or be
    creatable in one; probed by creating and removing a temporary file, since permission bits do not tell
    about read-only file systems or root."""
    logger = trainer.logger
    target = (
        Path(getattr(logger, "save_dir", None) or trainer.default_root_dir)
        if logger is not None
        else Path(trainer.default_root_dir)
    )
    check_writable(target, "output location")


def check_writable(target: Path, what: str) -> None:
    """``target`` is a directory this process can write in, or can be created in one (``what`` names it)."""
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{what} {target}: {existing} is a file, not a directory")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise InputError(f"{what} {target}: cannot write in {existing} ({exc.strerror or exc})") from None


def _leaves(value: str) -> bool:
    """A name that leaves the folder it is joined to (``..`` among its parts, or absolute)."""
    return ".." in Path(value).parts or Path(value).is_absolute() or "\\" in value


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


# what W&B refuses in a project name and a run id (wandb.sdk.wandb_settings: validate_project, validate_run_id), when
# its run starts: after the run directory exists, with a traceback
WANDB_PROJECT_CHARACTERS, WANDB_PROJECT_LENGTH = "/\\#?%:", 128
WANDB_ID_CHARACTERS = ":;,#?/'"


def _logger_key(trainer: L.Trainer, i: int) -> str:
    return "trainer.logger" + (f"[{i}]" if len(trainer.loggers) > 1 else "")


def check_logger_names(trainer: L.Trainer) -> None:
    """Names a logger takes that would end in a traceback or in another run's directory: a ``version`` that names
    no folder of its own ("" or "."; the run directory would be the name folder, holding every other version), a
    W&B project or run id that W&B refuses once its run has started. Checked before any logger starts."""
    for i, logger in enumerate(trainer.loggers):
        key = _logger_key(trainer, i)
        version = getattr(logger, "_version", None)
        if isinstance(version, str) and version.strip() in ("", "."):
            raise InputError(
                f"{key}.init_args.version {version!r}: must name a run directory of its own (or null: the next version_N)"
            )
        if type(logger).__name__ != "WandbLogger":
            continue
        init = getattr(logger, "_wandb_init", {}) or {}
        project, run_id = init.get("project"), init.get("id")
        if isinstance(project, str):
            found = " ".join(sorted({c for c in project if c in WANDB_PROJECT_CHARACTERS}))
            if found or len(project) > WANDB_PROJECT_LENGTH:
                raise InputError(
                    f"{key}.init_args.project {project!r}: a W&B project name has at most {WANDB_PROJECT_LENGTH} characters "
                    f"and cannot contain {' '.join(WANDB_PROJECT_CHARACTERS)}" + (f" (found {found})" if found else "")
                )
        if isinstance(run_id, str):
            found = " ".join(sorted({c for c in run_id if c in WANDB_ID_CHARACTERS}))
            if found or not run_id.strip() or run_id != run_id.strip():
                raise InputError(
                    f"{key}.init_args.id {run_id!r}: a W&B run id is not empty, has no surrounding spaces and cannot "
                    f"contain {' '.join(WANDB_ID_CHARACTERS)}" + (f" (found {found})" if found else "")
                )


def check_paths_inside_run(trainer: L.Trainer) -> None:
    """Every write of the run stays inside its run directory: each logger's directory inside its ``save_dir``
    (a name, version or sub_dir with ``..`` or an absolute path would leave it), ModelCheckpoint's ``dirpath``
    inside the run directory and its ``filename`` without ``..``, and every callback that writes (a
    ``filename``, ``dirpath``, ``save_dir`` or ``log_dir`` of its own) likewise. The loggers' names are checked
    first (``check_logger_names``): finding the run directory starts a W&B run."""
    check_logger_names(trainer)
    run = run_dir(trainer)
    for i, logger in enumerate(trainer.loggers):
        key = _logger_key(trainer, i)
        for name in ("name", "version", "sub_dir"):
            value = getattr(logger, name, None) if name == "name" else getattr(logger, f"_{name}", None)
            if isinstance(value, str) and _leaves(value):
                raise InputError(
                    f"{key}.init_args.{name} {value!r}: must not leave the log directory (no '..' or absolute paths)"
                )
        save_dir, log_dir = getattr(logger, "save_dir", None), getattr(logger, "log_dir", None)
        if save_dir and log_dir and not _inside(Path(log_dir), Path(save_dir)):
            raise InputError(
                f"{key}: the run directory {Path(log_dir).resolve()} lies outside save_dir {Path(save_dir).resolve()}"
            )
    for cb in trainer.callbacks:
        name = type(cb).__name__
        if isinstance(cb, ModelCheckpoint):
            dirpath, filename = cb.dirpath, cb.filename
            if isinstance(filename, str) and (_leaves(filename) or filename.strip(". /") == ""):
                raise InputError(
                    f"checkpoint.filename {filename!r}: must stay inside the checkpoint folder (no '..' or absolute paths)"
                )
            if dirpath is not None and "://" not in str(dirpath) and not _inside(Path(dirpath), run):
                raise InputError(f"checkpoint.dirpath {dirpath!r}: must lie inside the run directory {run}")
            continue
        if getattr(cb, "run_dir_exempt", False):  # writes where the command was told to (predict --out)
            continue
        filename = getattr(cb, "filename", None)
        if isinstance(filename, str) and hasattr(cb, "run_dir"):  # a callback writing a file into the run directory
            if filename in ("", ".", "..") or os.path.basename(filename) != filename or "\\" in filename:
                raise InputError(f"{name}.filename {filename!r}: must be a plain file name (it is written in the run directory)")
        elif isinstance(filename, str) and (_leaves(filename) or filename in ("", ".")):
            raise InputError(f"{name}.filename {filename!r}: must stay inside the run directory (no '..' or absolute paths)")
        for attr in ("dirpath", "save_dir", "log_dir", "output_dir"):
            value = getattr(cb, attr, None)
            if isinstance(value, (str, os.PathLike)) and "://" not in str(value) and not _inside(Path(value), run):
                raise InputError(f"{name}.{attr} {str(value)!r}: must lie inside the run directory {run}")


def check_unique_callbacks(callbacks: Iterable[L.Callback]) -> None:
    """Two callbacks with the same ``state_key`` would share one slot of the checkpoint (Lightning refuses
    them with a traceback when it builds the Trainer) and, for file-writing callbacks, the same file; a second
    ``MonitoringBudget`` would be ignored."""
    counts = Counter(cb.state_key for cb in callbacks if type(cb).state_dict is not L.Callback.state_dict)
    duplicates = [key for key, n in counts.items() if n > 1]
    if duplicates:
        raise InputError(f"trainer.callbacks: {duplicates[0]} is given twice with the same settings; keep one")
    budgets = sum(isinstance(cb, MonitoringBudget) for cb in callbacks)
    if budgets > 1:  # the observers consult the first (inr.callbacks.budget.budget_of): another would be ignored
        raise InputError(
            f"trainer.callbacks: MonitoringBudget is given {budgets} times; a run has one monitoring budget "
            "(only the first would count), keep one"
        )


def check_optimizer(model: L.LightningModule) -> None:
    """Build the configured optimizer once on the model's parameters (it rejects e.g. lr < 0 in its constructor)."""
    factory = getattr(model, "optimizer_factory", None)
    if factory is None:
        return
    try:
        factory(model.parameters())
    except (ValueError, TypeError) as exc:
        raise InputError(f"model.init_args.optimizer: {exc}") from None


# The task's data, encoders and metrics compute in float32: a Trainer that casts the module to another dtype
# ("64-true", "bf16-true", "16-true") breaks the first matmul; mixed precision keeps float32 weights and works.
SUPPORTED_PRECISION = ("32-true", "16-mixed", "bf16-mixed")


def check_trainer_settings(trainer: L.Trainer) -> None:
    """Trainer settings Lightning accepts but that fail later with a traceback: a precision that casts the
    weights away from float32, ``check_val_every_n_epoch`` or ``accumulate_grad_batches`` below 1."""
    precision = str(getattr(trainer, "precision", "32-true"))
    if precision not in SUPPORTED_PRECISION:
        raise InputError(
            f"trainer.precision {precision}: the tasks compute in float32; choose one of {', '.join(SUPPORTED_PRECISION)}"
        )
    every = trainer.check_val_every_n_epoch
    if every is not None and every < 1:
        raise InputError(f"trainer.check_val_every_n_epoch must be ≥ 1 (or null: validate by val_check_interval), got {every}")
    if trainer.accumulate_grad_batches < 1:
        raise InputError(f"trainer.accumulate_grad_batches must be ≥ 1, got {trainer.accumulate_grad_batches}")


def preflight(trainer: L.Trainer, model: L.LightningModule, datamodule: Any, writes: bool = True) -> None:
    """Every check before ``fit``; ``writes``: this process writes the run (rank 0 under a launcher: the others'
    output locations are not used, ``inr.run.cluster``)."""
    check_trainer_settings(trainer)
    if writes:
        check_output_location(trainer)
    check_paths_inside_run(trainer)
    check_optimizer(model)
    if hasattr(datamodule, "check_shardable"):
        datamodule.check_shardable(trainer.world_size)
    check_batch_memory(trainer, model, datamodule)
    for callback in trainer.callbacks:  # a callback's own refusal of the run (e.g. a grid it cannot measure)
        check = getattr(callback, "check_before_fit", None)
        if callable(check):
            check(model, datamodule)
