"""Where a trainer's run writes: its logger's run directory and the folder holding that logger's runs."""

from __future__ import annotations

from pathlib import Path

import lightning as L


def logger_root(trainer: L.Trainer) -> Path:
    """The folder holding this logger's run directories (``save_dir/name``), or the trainer's root without a logger."""
    logger = trainer.logger
    if logger is not None and getattr(logger, "root_dir", None):
        return Path(logger.root_dir)
    return Path(trainer.default_root_dir)


def run_dir(trainer: L.Trainer) -> Path:
    """The run's directory, read from the logger (``Trainer.log_dir`` broadcasts: not for rank 0 alone)."""
    logger = trainer.logger
    if logger is not None and getattr(logger, "log_dir", None):
        return Path(logger.log_dir)
    return Path(trainer.default_root_dir)
