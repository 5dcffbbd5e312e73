"""Where a run writes and what it resumes from: the checkpoint chosen (with a fallback past unreadable files),
the run directory continued or created, and the configs recorded there.

A run directory keeps the ``config.yaml`` of the command that created it. A resume that continues it
records its own command's config as ``config.resume-N.yaml`` once the checkpoint has loaded; a resume that
fails writes nothing there.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import lightning as L
import yaml
from lightning.pytorch.cli import SaveConfigCallback
from lightning.pytorch.loggers import Logger

from inr.errors import InputError
from inr.io.files import atomic_write
from inr.io.run_dir import logger_root, run_dir, shared_run_dir
from inr.run.checkpoints import (
    MODEL_CONFIG_KEY,
    CheckpointError,
    check_finite,
    check_matches_model,
    check_same_model_config,
    check_training_state,
    checkpoint_step,
    first_difference,
    newest_first,
    read_checkpoint,
)

CONFIG_NAME = "config.yaml"
RESUME_CONFIG = re.compile(r"config\.resume-(\d+)\.yaml")
DATA_CONFIG_KEY = "inr_data_config"  # the data section of the config that wrote the checkpoint
# data init args that change how the signal is batched or split, not which signal it is (or where its cameras are)
NOT_THE_SIGNAL = ("batch_size", "steps_per_epoch", "eval_chunk", "seed", "num_workers", "split")


@dataclass
class ResumePlan:
    """``checkpoint``: the file to resume from (None: a new run); ``in_place``: the run directory of that
    checkpoint is continued; ``notes``: one line each, printed before training (e.g. a fallback)."""

    checkpoint: Optional[str] = None
    in_place: bool = False
    step: int = 0
    notes: list[str] = field(default_factory=list)


def holds_a_run(directory: Path) -> bool:
    return (directory / CONFIG_NAME).is_file() or any((directory / "checkpoints").glob("*.ckpt"))


# A logger of the run's configuration with a given version (loggers take their version when they are built).
LoggerFactory = Callable[[Union[int, str]], Logger]


def continue_in(trainer: L.Trainer, directory: Path, make_logger: Optional[LoggerFactory]) -> bool:
    """Continue in an existing run directory under the logger's root: the trainer's logger is replaced by
    ``make_logger(version)`` of that directory (Trainer.logger's setter). False when the directory is not one
    of this logger's runs, or the logger cannot be rebuilt (none given, several loggers): a new run then."""
    logger = trainer.logger
    root = logger_root(trainer)
    if logger is None:
        return directory.resolve() == root.resolve()
    if directory.parent.resolve() != root.resolve() or make_logger is None or len(trainer.loggers) != 1:
        return False
    match = re.fullmatch(r"version_(\d+)", directory.name)
    trainer.logger = make_logger(int(match.group(1)) if match else directory.name)
    return True


def logger_factory(logger_config: Any, logger: Optional[Logger]) -> Optional[LoggerFactory]:
    """Rebuilds the run's logger with another version: from its config (``class_path`` + ``init_args``), or,
    for the Trainer's default logger (``logger: true``), from its class, ``save_dir`` and ``name``."""
    if logger is None:
        return None
    if hasattr(logger_config, "as_dict"):  # the CLI's jsonargparse Namespace
        logger_config = logger_config.as_dict()
    if isinstance(logger_config, Mapping) and logger_config.get("class_path"):
        module, _, name = logger_config["class_path"].rpartition(".")
        cls, init_args = getattr(importlib.import_module(module), name), dict(logger_config.get("init_args") or {})
        return lambda version: cls(**{**init_args, "version": version})
    if logger_config in (True, None) and "version" in inspect.signature(type(logger)).parameters:
        return lambda version: type(logger)(save_dir=logger.save_dir, name=logger.name, version=version)
    return None


def verify(
    checkpoint: dict[str, Any], model: L.LightningModule, path: Union[str, Path], model_config: Optional[dict], resume: bool
) -> None:
    """Everything a checkpoint must pass before it is used: its tensors fit ``model``, its recorded model
    configuration is ``model_config``, its weights are finite and, for a resume, its training state is whole."""
    check_matches_model(checkpoint, model, path)
    check_same_model_config(checkpoint, model_config, path, resume=resume)
    check_finite(checkpoint, path)
    if resume:
        check_training_state(checkpoint, path)


def model_section(parser: Any, config: Any, section: str = "model") -> Optional[dict[str, Any]]:
    """The ``model`` (or another) section of a parsed config as plain data (class paths and init args), as saved."""
    try:
        model = (yaml.safe_load(parser.dump(config, skip_none=False)) or {}).get(section)
    except Exception:  # a config jsonargparse cannot dump is recorded as nothing, as before
        return None
    return model if isinstance(model, dict) else None


def recorded_data_config(checkpoint: dict[str, Any], path: Union[str, Path]) -> Optional[dict[str, Any]]:
    """The data section of the config that trained the checkpoint: recorded in it, or else its run's ``config.yaml``
    (two folders up), read as data; None when neither is there."""
    recorded = checkpoint.get(DATA_CONFIG_KEY)
    if isinstance(recorded, dict):
        return recorded
    run_config = Path(path).resolve().parent.parent / CONFIG_NAME
    try:
        data = (yaml.safe_load(run_config.read_text()) or {}).get("data") if run_config.is_file() else None
    except (yaml.YAMLError, UnicodeDecodeError, OSError, AttributeError):
        return None
    return data if isinstance(data, dict) else None


def _the_signal(section: dict[str, Any]) -> dict[str, Any]:
    """A data section without the init args that only batch or split its signal (``NOT_THE_SIGNAL``)."""
    init = section.get("init_args") if isinstance(section.get("init_args"), dict) else {}
    return {"class_path": section.get("class_path"), "init_args": {k: v for k, v in init.items() if k not in NOT_THE_SIGNAL}}


def describe_data(section: Optional[dict[str, Any]]) -> str:
    """``RaysDataModule(scene='blocks', views=100, resolution=64)``: a data section's class and the settings that
    name its signal (null ones left out), for the line that says what a checkpoint was trained on.

    Example:
        >>> describe_data({"class_path": "inr.data.ImageDataModule", "init_args": {"path": "a.png", "batch_size": 8}})
        "ImageDataModule(path='a.png')"
    """
    if not section:
        return "data not recorded"
    signal = _the_signal(section)
    settings = [f"{k}={v!r}" for k, v in signal["init_args"].items() if v is not None]
    text = ", ".join(settings[:5]) + (", …" if len(settings) > 5 else "")
    return f"{str(signal['class_path']).rpartition('.')[2]}({text})"


def check_same_data(
    checkpoint: dict[str, Any], data_config: Optional[dict[str, Any]], path: Union[str, Path], command: str
) -> str:
    """The line naming the checkpoint's run and its data; refuses (one line) a command whose data section names
    another signal than the one the checkpoint was trained on: its renders and scores would be of that signal's grid,
    cameras or measurements, silently."""
    run = Path(path).resolve().parent.parent if Path(path).parent.name == "checkpoints" else Path(path).parent
    saved = recorded_data_config(checkpoint, path)
    line = f"{command} reads {path} (step {checkpoint_step(checkpoint)}) of the run {run}, trained on {describe_data(saved)}"
    if saved is None or data_config is None:
        return line
    difference = first_difference(_the_signal(saved), _the_signal(data_config), "data")
    if difference is not None:
        given = run / CONFIG_NAME
        raise InputError(
            f"{path} was trained on other data than this config's: {difference}; give its run's config "
            f"(--config {given if given.is_file() else '<its run>/config.yaml'}) or a checkpoint of this data"
        )
    return line


def checkpoints_under(root: Path) -> list[Path]:
    """Checkpoint files of every run under a logger root (``root/*/checkpoints``; an MLflow artifact location's
    ``root/<run id>/artifacts/checkpoints``) or of one run (``root/checkpoints``)."""
    return [*root.glob("*/checkpoints/*.ckpt"), *root.glob("*/artifacts/checkpoints/*.ckpt"), *root.glob("checkpoints/*.ckpt")]


def plan_resume(
    trainer: L.Trainer,
    model: L.LightningModule,
    ckpt_path: Optional[str],
    make_logger: Optional[LoggerFactory] = None,
    model_config: Optional[dict[str, Any]] = None,
) -> ResumePlan:
    """Choose and verify the checkpoint of ``--ckpt_path`` and the run directory the run writes into.

    - None: a new run; its directory must not already hold one (a fixed logger version).
    - ``last``: the newest checkpoint under the logger's root that reads back; unreadable newer ones
      (truncated, corrupt) are passed over with a note. The run continues in that checkpoint's directory.
    - a path: that checkpoint, which must read back. The run continues in its directory when that is one
      of this logger's runs and the checkpoint is the newest there; otherwise it starts a new run directory
      (so resuming an older checkpoint never overwrites the newer ones of its run).
    A readable checkpoint of another model (other tensors, or another recorded configuration than
    ``model_config``) is refused, whichever way it was chosen.
    """
    if ckpt_path is None:
        directory = run_dir(trainer)
        if holds_a_run(directory):
            raise InputError(
                f"{directory} already holds a run; resume it with --ckpt_path last, or choose another trainer.logger version"
            )
        return ResumePlan()
    if ckpt_path == "last":
        return _plan_last(trainer, model, make_logger, model_config)
    path = Path(ckpt_path)
    checkpoint = read_checkpoint(path)
    verify(checkpoint, model, path, model_config, resume=True)
    plan = ResumePlan(str(path), step=checkpoint_step(checkpoint))
    directory = path.parent.parent if path.parent.name == "checkpoints" else None
    if directory is not None and (directory / CONFIG_NAME).is_file():
        siblings = [p for p in newest_first(path.parent.glob("*.ckpt")) if p.resolve() != path.resolve()]
        newest = not siblings or path.stat().st_mtime_ns >= siblings[0].stat().st_mtime_ns
        plan.in_place = newest and continue_in(trainer, directory, make_logger)
    if not plan.in_place and holds_a_run(run_dir(trainer)):
        raise InputError(f"{run_dir(trainer)} already holds a run; choose another trainer.logger version")
    return plan


def _newest_readable(
    trainer: L.Trainer,
    model: L.LightningModule,
    verb: str,
    model_config: Optional[dict[str, Any]],
    resume: bool,
    data_config: Optional[dict[str, Any]] = None,
    command: Optional[str] = None,
) -> ResumePlan:
    """The newest checkpoint under the logger's root that reads back and fits ``model``; a note names the
    unreadable newer ones passed over (``verb``: what is done with the one chosen). For an evaluation (``command``),
    a note names the checkpoint's run and data, which must be ``data_config``'s (``check_same_data``)."""
    root = logger_root(trainer)
    candidates = newest_first(checkpoints_under(root))
    if not candidates:
        raise InputError(
            f"ckpt_path last: no checkpoint under {root} (a run writes checkpoints/last.ckpt every few minutes and when training ends)"
        )
    skipped: list[str] = []
    for path in candidates:
        try:
            checkpoint = read_checkpoint(path)
        except CheckpointError as exc:
            skipped.append(str(exc))
            continue
        verify(checkpoint, model, path, model_config, resume)
        plan = ResumePlan(str(path), step=checkpoint_step(checkpoint))
        if command is not None:
            plan.notes.append(check_same_data(checkpoint, data_config, path, command))
        if skipped:
            more = f" (and {len(skipped) - 1} more unreadable)" if len(skipped) > 1 else ""
            plan.notes.append(f"{skipped[0]}{more}; {verb} {path} (step {plan.step}), the newest readable checkpoint")
        return plan
    raise CheckpointError(f"ckpt_path last: no readable checkpoint under {root}; the newest: {skipped[0]}")


def _plan_last(
    trainer: L.Trainer, model: L.LightningModule, make_logger: Optional[LoggerFactory], model_config: Optional[dict[str, Any]]
) -> ResumePlan:
    plan = _newest_readable(trainer, model, "resuming from", model_config, resume=True)
    plan.in_place = continue_in(trainer, Path(plan.checkpoint).parent.parent, make_logger)
    return plan


def plan_evaluation(
    trainer: L.Trainer,
    model: L.LightningModule,
    ckpt_path: Optional[str],
    command: str,
    model_config: Optional[dict[str, Any]] = None,
    data_config: Optional[dict[str, Any]] = None,
) -> ResumePlan:
    """The checkpoint ``validate``/``test``/``predict`` read: ``last`` (the newest readable one under the
    logger's root, as for a resume) or a path, which must read back and fit ``model`` and have been trained on the
    signal of ``data_config`` (the command's data section); a note names its run and data. The command writes
    into a new run directory of the logger, like a new run, never into the checkpoint's."""
    if ckpt_path is None:
        raise InputError(f"{command} needs --ckpt_path: a checkpoint file, or 'last' for the newest under {logger_root(trainer)}")
    if ckpt_path == "last":
        plan = _newest_readable(trainer, model, f"{command} reads", model_config, False, data_config, command)
    else:
        checkpoint = read_checkpoint(ckpt_path)
        verify(checkpoint, model, ckpt_path, model_config, resume=False)
        plan = ResumePlan(str(ckpt_path), step=checkpoint_step(checkpoint))
        plan.notes.append(check_same_data(checkpoint, data_config, ckpt_path, command))
    if holds_a_run(run_dir(trainer)):
        raise InputError(f"{run_dir(trainer)} already holds a run; choose another trainer.logger version")
    return plan


def next_resume_config(directory: Path) -> Path:
    """``config.resume-N.yaml`` with N one above the highest already there."""
    taken = [int(m.group(1)) for p in directory.glob("config.resume-*.yaml") if (m := RESUME_CONFIG.fullmatch(p.name))]
    return directory / f"config.resume-{max(taken, default=0) + 1}.yaml"


def _section(config: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        config = config.get(key) if isinstance(config, dict) else None
    return config


class RunConfigRecorder(SaveConfigCallback):
    """Writes ``config.yaml`` when a run starts, and ``config.resume-N.yaml`` when a resumed run has loaded its
    checkpoint (``on_train_start``, after the weights, optimizer and loops are restored); never overwrites.

    When the resumed command changes the optimizer or scheduler, one note says that the checkpoint's
    optimizer state (its learning rate included) is what continues, as Lightning restores it.
    """

    resume_in_place = False

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict[str, Any]) -> None:
        """Record the model section of this command's config in the checkpoint (``check_same_model_config``)."""
        if not hasattr(self, "_model_section"):
            self._model_section = model_section(self.parser, self.config)
            self._data_section = model_section(self.parser, self.config, "data")
        if self._model_section is not None:
            checkpoint[MODEL_CONFIG_KEY] = self._model_section
        if self._data_section is not None:
            checkpoint[DATA_CONFIG_KEY] = self._data_section

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if self.already_saved:
            return
        log_dir = shared_run_dir(trainer)  # broadcasts from rank 0: read on every rank
        if trainer.is_global_zero and not self.resume_in_place:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
            with atomic_write(Path(log_dir) / CONFIG_NAME, "w") as f:
                f.write(self.parser.dump(self.config, skip_none=False))
        self.already_saved = True

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        log_dir = shared_run_dir(trainer)  # broadcasts from rank 0: read on every rank, or rank 0 waits there alone
        if not self.resume_in_place or not trainer.is_global_zero:
            return
        directory = Path(log_dir)
        text = self.parser.dump(self.config, skip_none=False)
        record = next_resume_config(directory)
        with atomic_write(record, "w") as f:
            f.write(text)
        self.resume_in_place = False  # recorded once per command
        original = directory / CONFIG_NAME
        if not original.is_file():
            return
        before, now = yaml.safe_load(original.read_text()) or {}, yaml.safe_load(text) or {}
        changed = [
            k
            for k in ("optimizer", "scheduler")
            if _section(before, "model", "init_args", k) != _section(now, "model", "init_args", k)
        ]
        if changed:
            print(
                f"note: model.init_args.{' and '.join(changed)} differ from {original.name}; the optimizer state saved in "
                f"the checkpoint (learning rate included) is what continues; this command's config is in {record.name}",
                file=sys.stderr,
                flush=True,
            )
