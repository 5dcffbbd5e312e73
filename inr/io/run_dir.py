"""Where a trainer's run writes: its logger's run directory and the folder holding that logger's runs.

One directory per run, whatever the logger: a logger with a directory of its own (TensorBoard, CSV) gives its
``log_dir``; one that keeps its files elsewhere or on a server (W&B, MLflow, Comet) gets the directory
Lightning's ``ModelCheckpoint`` already puts its checkpoints in, ``save_dir/name/version`` (W&B: the project and
the run id; MLflow: the experiment and run ids), so the run's config, checkpoints, media and spectral history
lie together and a new run (a new id) never writes into an old one's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L


def _version_text(version: Any) -> str:
    return version if isinstance(version, str) else f"version_{version}"


def logger_root(trainer: L.Trainer) -> Path:
    """The folder holding this logger's run directories (``save_dir/name``), or the trainer's root without a logger."""
    logger = trainer.logger
    if logger is None:
        return Path(trainer.default_root_dir)
    if getattr(logger, "root_dir", None):
        return Path(logger.root_dir)
    name = getattr(logger, "name", None)
    return (
        Path(getattr(logger, "save_dir", None) or trainer.default_root_dir) / str(name)
        if name
        else Path(trainer.default_root_dir)
    )


def run_dir(trainer: L.Trainer) -> Path:
    """The run's directory, read from this process's logger (no collective; ``shared_run_dir`` for every rank)."""
    logger = trainer.logger
    if logger is None:
        return Path(trainer.default_root_dir)
    if getattr(logger, "log_dir", None):
        return Path(logger.log_dir)
    if getattr(logger, "version", None) is None and trainer.is_global_zero and hasattr(logger, "experiment"):
        _ = logger.experiment  # a W&B or MLflow run gets its id when it starts
    name, version = getattr(logger, "name", None), getattr(logger, "version", None)
    if name is None or version is None:
        return Path(trainer.default_root_dir)
    return Path(getattr(logger, "save_dir", None) or trainer.default_root_dir) / str(name) / _version_text(version)


def shared_run_dir(trainer: L.Trainer) -> Path:
    """Rank 0's run directory on every rank (a broadcast: call it on all ranks, never in rank-0-only code)."""
    return Path(trainer.strategy.broadcast(str(run_dir(trainer))))
