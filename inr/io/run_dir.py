"""Where a trainer's run writes: its logger's run directory and the folder holding that logger's runs.

One directory per run, whatever the logger: a logger with a directory of its own (TensorBoard, CSV) gives its
``log_dir``; one that keeps its files elsewhere or on a server (W&B, MLflow, Comet) gets the directory
Lightning's ``ModelCheckpoint`` already puts its checkpoints in, ``save_dir/name/version`` (W&B: the project and
the run id; MLflow's file store: the experiment and run ids), so the run's config, checkpoints, media and spectral
history lie together and a new run (a new id) never writes into an old one's. MLflow with a database (sqlite) or
a server as its store has no ``save_dir``: its run's own artifact directory is the run directory where that is a
local folder (``tracker_artifact_dir``), so everything the run writes is an artifact of its MLflow run, under the
experiment's ``artifact_location`` (not ``./<experiment id>/`` of the working directory).
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Optional

import lightning as L


def _version_text(version: Any) -> str:
    return version if isinstance(version, str) else f"version_{version}"


def local_path(uri: str) -> Optional[Path]:
    """A ``file:`` URI or a plain path as a local path; None for any other scheme (s3:, mlflow-artifacts:, ...).

    Example:
        >>> local_path("file:///tmp/a%20b/artifacts").as_posix(), local_path("/tmp/x").as_posix(), local_path("s3://b/k")
        ('/tmp/a b/artifacts', '/tmp/x', None)
    """
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme == "file":
        return Path(urllib.request.url2pathname(parsed.path))
    return Path(uri) if parsed.scheme == "" else None


# run id -> its local artifact directory (or None): read once per run, since every image and file asks for it
_ARTIFACT_DIRS: dict[str, Optional[Path]] = {}


def tracker_artifact_dir(logger: Any) -> Optional[Path]:
    """The local artifact directory of an MLflow run whose store is a database or a server (no ``save_dir``), else
    None. Read once per run from the tracking store (``artifact_uri`` of the run)."""
    if logger is None or getattr(logger, "save_dir", None) is not None or not hasattr(logger, "run_id"):
        return None
    get_run = getattr(logger.experiment, "get_run", None)  # starts the run; rank > 0 holds a dummy without get_run
    run_id = logger.run_id
    if get_run is None or not isinstance(run_id, str) or not run_id:
        return None
    if run_id not in _ARTIFACT_DIRS:
        _ARTIFACT_DIRS[run_id] = local_path(get_run(run_id).info.artifact_uri)
    return _ARTIFACT_DIRS[run_id]


def logger_root(trainer: L.Trainer) -> Path:
    """The folder holding this logger's run directories (``save_dir/name``; for an MLflow run in its artifact
    directory, the experiment's artifact location), or the trainer's root without a logger."""
    logger = trainer.logger
    if logger is None:
        return Path(trainer.default_root_dir)
    artifacts = tracker_artifact_dir(logger)
    if artifacts is not None:
        return artifacts.parent.parent  # <artifact location>/<run id>/artifacts
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
    artifacts = tracker_artifact_dir(logger) if trainer.is_global_zero else None
    if artifacts is not None:
        return artifacts
    name, version = getattr(logger, "name", None), getattr(logger, "version", None)
    if name is None or version is None:
        return Path(trainer.default_root_dir)
    return Path(getattr(logger, "save_dir", None) or trainer.default_root_dir) / str(name) / _version_text(version)


def shared_run_dir(trainer: L.Trainer) -> Path:
    """Rank 0's run directory on every rank (a broadcast: call it on all ranks, never in rank-0-only code)."""
    return Path(trainer.strategy.broadcast(str(run_dir(trainer))))
