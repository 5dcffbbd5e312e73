"""Checks made after the config is instantiated and before anything is written or trained.

Each refuses, with one ``InputError`` line naming the key, what would otherwise fail later with a
traceback (or silently write somewhere unexpected): an output location that cannot be written, a log
directory or callback file outside the run, two callbacks with the same state, an optimizer that
rejects its arguments, a training batch that would not fit in memory.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import lightning as L

from inr.errors import InputError
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


def check_paths_inside_run(trainer: L.Trainer) -> None:
    """The log directory must lie inside the logger's ``save_dir`` (a name or version with ``..`` or ``/``
    would leave it), and a callback's ``filename`` must be a plain file name inside the run directory."""
    logger = trainer.logger
    if logger is not None and getattr(logger, "save_dir", None) and getattr(logger, "log_dir", None):
        for key in ("name", "version", "sub_dir"):
            value = getattr(logger, f"_{key}", None) if key != "name" else getattr(logger, "name", None)
            if isinstance(value, str) and (".." in Path(value).parts or Path(value).is_absolute()):
                raise InputError(
                    f"trainer.logger.init_args.{key} {value!r}: must not leave the log directory (no '..' or absolute paths)"
                )
        save_dir, log_dir = Path(logger.save_dir).resolve(), Path(logger.log_dir).resolve()
        if save_dir != log_dir and save_dir not in log_dir.parents:
            raise InputError(f"trainer.logger: the run directory {log_dir} lies outside save_dir {save_dir}")
    for cb in trainer.callbacks:
        filename = getattr(cb, "filename", None)
        if isinstance(filename, str) and hasattr(cb, "run_dir"):  # a callback writing a file into the run directory
            if filename in ("", ".", "..") or os.path.basename(filename) != filename or "\\" in filename:
                raise InputError(
                    f"{type(cb).__name__}.filename {filename!r}: must be a plain file name (it is written in the run directory)"
                )


def check_unique_callbacks(callbacks: Iterable[L.Callback]) -> None:
    """Two callbacks with the same ``state_key`` would share one slot of the checkpoint (Lightning refuses
    them with a traceback when it builds the Trainer) and, for file-writing callbacks, the same file."""
    counts = Counter(cb.state_key for cb in callbacks if type(cb).state_dict is not L.Callback.state_dict)
    duplicates = [key for key, n in counts.items() if n > 1]
    if duplicates:
        raise InputError(f"trainer.callbacks: {duplicates[0]} is given twice with the same settings; keep one")


def check_optimizer(model: L.LightningModule) -> None:
    """Build the configured optimizer once on the model's parameters (it rejects e.g. lr < 0 in its constructor)."""
    factory = getattr(model, "optimizer_factory", None)
    if factory is None:
        return
    try:
        factory(model.parameters())
    except (ValueError, TypeError) as exc:
        raise InputError(f"model.init_args.optimizer: {exc}") from None


def preflight(trainer: L.Trainer, model: L.LightningModule, datamodule: Any) -> None:
    check_output_location(trainer)
    check_paths_inside_run(trainer)
    check_optimizer(model)
    if hasattr(datamodule, "check_shardable"):
        datamodule.check_shardable(trainer.world_size)
    check_batch_memory(trainer, model, datamodule)
