"""The command line: a LightningCLI over any task and DataModule, with one-line errors, safe resumes and a summary.

Exit codes (``inr.errors``): 0 done; 1 stopped by its environment (disk full, out of memory) or by a bug;
2 bad input, nothing trained; 3 the loss diverged; 130 / 143 stopped by Ctrl-C / SIGTERM with a checkpoint
saved. Everything but a bug ends with one line on stderr saying what happened and what to do.
"""
from __future__ import annotations

import re
import shlex
import shutil
import sys
import time
import warnings
from argparse import ArgumentError
from pathlib import Path
from typing import Optional

import torch
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.utilities import rank_zero_only
from lightning.pytorch.utilities.exceptions import MisconfigurationException

from inr.callbacks.guards import TrainingDiverged
from inr.data.module import GridDataModule
from inr.errors import EXIT_DIVERGED, EXIT_FAILED, EXIT_INPUT, InputError
from inr.run.checkpoints import AtomicCheckpointIO, last_good_checkpoint
from inr.run.config_loader import PARSER_MODE
from inr.run.lock import LOCK_NAME, RunLock
from inr.run.preflight import check_unique_callbacks, preflight
from inr.run.resume import ResumePlan, RunConfigRecorder, plan_resume, run_dir
from inr.run.signals import GracefulStop, RunInterrupted
from inr.tasks.base import INRModule

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
DEFAULT_CONFIG = "image.yaml"

# train.py always passes its (resolved) argv explicitly
warnings.filterwarnings("ignore", message=".*LightningCLI's args parameter is intended.*")
# a resumed run writes into its own checkpoint directory on purpose
warnings.filterwarnings("ignore", message=".*Checkpoint directory .* exists and is not empty.*")


def resolve_config_names(args: list[str]) -> list[str]:
    """``--config NAME`` where NAME is not a file but ``configs/NAME`` is -> that path; no config and no
    model given -> the default config."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--config" and i + 1 < len(out):
            out[i + 1] = _resolve(out[i + 1])
        elif arg.startswith("--config="):
            out[i] = "--config=" + _resolve(arg.split("=", 1)[1])
    given = any(a == "--config" or a.startswith(("--config=", "--model", "-h", "--help", "--print_config")) for a in out)
    if not given:
        out = ["--config", str(CONFIG_DIR / DEFAULT_CONFIG)] + out
    return out


def _resolve(name: str) -> str:
    path = Path(name)
    if path.exists():
        return name
    for candidate in (CONFIG_DIR / name, CONFIG_DIR / f"{name}.yaml"):
        if candidate.exists():
            return str(candidate)
    raise InputError(f"config {name!r} not found (looked in . and {CONFIG_DIR})")


_STRUCTURE = ("Does not validate against any", "Subtypes:", "Errors:", "Given value", "Expected a <class 'NoneType'>")


def condense_config_error(text: str) -> str:
    """One line from jsonargparse's nested validation report: the config key path, the class it concerns
    and the innermost complaint, e.g. ``model.encoder.sigma (inr.encoders.GaussianEncoding): Expected a
    <class 'float'>. Got value: abc``."""
    keys, classes, leaf = [], [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.lstrip("- ").startswith(_STRUCTURE):
            continue
        if m := re.match(r'Parser key "([^"]+)":', line):
            keys.append(m.group(1))
        elif m := re.match(r"- Problem with given class_path '([^']+)':", line):
            classes.append(m.group(1))
        elif leaf is None:
            leaf = line.lstrip("- ")
    where = ".".join(keys)
    if classes:
        where = f"{where} ({classes[-1]})" if where else classes[-1]
    message = leaf or text.strip().splitlines()[0]
    return f"config {where}: {message}" if where else f"config: {message}"


class INRCLI(LightningCLI):
    """LightningCLI with the model's output width linked to the data, a ``--ckpt_path`` to resume from and the
    run's ``checkpoint`` section (a ModelCheckpoint always present, configurable like any class)."""

    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.out_channels", "model.init_args.out_channels", apply_on="instantiate")
        parser.add_argument("--ckpt_path", type=Optional[str], default=None, help="checkpoint to resume from, or 'last'")
        # last.ckpt and the newest epoch=…-step=….ckpt at the end of every training epoch (not only at validation
        # epochs); --checkpoint.every_n_epochs / --checkpoint.every_n_train_steps change the cadence. No version
        # counter: a resumed or copied run refreshes its last.ckpt instead of writing last-v1.ckpt beside it.
        parser.add_lightning_class_args(ModelCheckpoint, "checkpoint")
        parser.set_defaults({"checkpoint.save_last": True, "checkpoint.save_on_train_epoch_end": True,
                             "checkpoint.enable_version_counter": False})

    def instantiate_trainer(self, **kwargs):
        """The Trainer, after refusing duplicate callbacks in one line; ``trainer.enable_checkpointing: false``
        leaves out the ``checkpoint`` section's callback (Lightning refuses the two together)."""
        parser = self._parser(self.subcommand)
        trainer_config = {**self._get(self.config_init, "trainer", default={}), **kwargs}
        keys = [k for k in parser.callback_keys if k != "checkpoint" or trainer_config.get("enable_checkpointing") is not False]
        extra = [self._get(self.config_init, k) for k in keys]
        check_unique_callbacks([*(trainer_config.get("callbacks") or []), *extra])
        saved_keys, parser.callback_keys = parser.callback_keys, keys
        try:
            return super().instantiate_trainer(**kwargs)
        finally:
            parser.callback_keys = saved_keys


def build_cli(args: list[str]) -> INRCLI:
    return INRCLI(
        INRModule,
        GridDataModule,
        subclass_mode_model=True,
        subclass_mode_data=True,
        run=False,
        args=args,
        save_config_callback=RunConfigRecorder,
        parser_kwargs={"exit_on_error": False, "parser_mode": PARSER_MODE},
    )


@rank_zero_only
def print_summary(cli: INRCLI, seconds: float) -> None:
    metrics = cli.model.evaluate()
    parts = [f"{k} {v:.4g}" for k, v in sorted(metrics.items())]
    print(f"summary: {' | '.join(parts)} | {seconds:.1f} s | steps {cli.trainer.global_step} | logs {run_dir(cli.trainer)}", flush=True)


@rank_zero_only
def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def resume_command(args: list[str], checkpoint: str) -> str:
    """The command that resumes from ``checkpoint``: this one's arguments with its ``--ckpt_path`` replaced."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--ckpt_path":
            skip = True
        elif not arg.startswith("--ckpt_path="):
            kept.append(arg)
    return shlex.join(["python", "train.py", *kept, "--ckpt_path", checkpoint])


def install_atomic_checkpoints(cli: INRCLI) -> None:
    """Checkpoints are written atomically and read as data only, unless a config chose its own CheckpointIO."""
    strategy = cli.trainer.strategy
    if type(strategy.checkpoint_io) is TorchCheckpointIO:
        strategy.checkpoint_io = AtomicCheckpointIO()


class Session:
    """One command: the CLI, the resume plan, the run's lock and the signal handling, and how it ends."""

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.cli: Optional[INRCLI] = None
        self.plan = ResumePlan()
        self.lock: Optional[RunLock] = None
        self.stop = GracefulStop()
        self.fitting = self.trained = self.created_run_dir = False

    def run(self) -> Optional[INRCLI]:
        self.stop.install()
        self.cli = cli = build_cli(resolve_config_names(self.args))
        if cli.config.get("print_config"):
            return cli
        trainer = cli.trainer
        install_atomic_checkpoints(cli)
        trainer.callbacks.append(self.stop)
        preflight(trainer, cli.model, cli.datamodule)
        self.plan = plan_resume(trainer, cli.model, cli.config.get("ckpt_path"))
        for callback in trainer.callbacks:
            if isinstance(callback, RunConfigRecorder):
                callback.resume_in_place = self.plan.in_place
        for note in self.plan.notes:
            say(f"note: {note}")
        if rank_zero_only.rank == 0:  # DDP ranks > 0 are started by rank 0, which holds the lock for them
            existed = run_dir(trainer).exists()
            self.lock = RunLock(run_dir(trainer)).acquire()
            self.created_run_dir = not existed
        start = time.perf_counter()
        self.fitting = True
        try:
            trainer.fit(cli.model, datamodule=cli.datamodule, ckpt_path=self.plan.checkpoint, weights_only=True)
        except SystemExit:  # Lightning's SIGTERMException, or its exit after a KeyboardInterrupt
            if self.stop.signum is None:
                raise
            self.stopped()
        self.fitting, self.trained = False, True
        print_summary(cli, time.perf_counter() - start)
        return cli

    # --- endings --------------------------------------------------------------------------------------
    def stopped(self) -> None:
        """Training stopped by a signal: one line with the checkpoint and the command that resumes it."""
        stop, trainer = self.stop, self.cli.trainer
        step = stop.step if stop.step is not None else trainer.global_step
        head = f"interrupted by {stop.name} at step {step}"
        if stop.saved:
            say(f"{head}: saved {stop.saved}; resume with: {resume_command(self.args, stop.saved)}")
        elif stop.forced:
            say(f"{head}, twice: stopped without saving; {self._last_good()}")
        elif stop.save_error:
            say(f"{head}: could not save a checkpoint: {stop.save_error}; {self._last_good()}")
        else:
            say(f"{head}; {self._last_good()}")
        raise SystemExit(stop.exit_code)

    def _last_good(self) -> str:
        path = last_good_checkpoint(self.cli.trainer) if self.cli is not None else None
        if path is None and self.plan.checkpoint:
            path = self.plan.checkpoint
        if path is None:
            return "no checkpoint had been written"
        return f"the last good checkpoint is {path}; resume with: {resume_command(self.args, path)}"

    def interrupted(self, exc: RunInterrupted) -> None:
        """A signal outside the training loop: before training nothing is lost; after it, the final checkpoint stands."""
        name = self.stop.name
        if self.trained:
            say(f"interrupted by {name} after training finished; {self._last_good()}")
        else:
            self.cleanup()
            kept = f"; {self.plan.checkpoint} is unchanged" if self.plan.checkpoint else ""
            say(f"interrupted by {name} before training started: nothing was trained{kept}")
        raise SystemExit(self.stop.exit_code)

    def fail(self, message: str, code: int = EXIT_INPUT) -> None:
        self.cleanup()
        say(f"error: {message}")
        raise SystemExit(code)

    def failed_in_training(self, what: str, advice: str) -> None:
        """The environment stopped training (disk full, out of memory): the checkpoints on disk are whole."""
        step = self.cli.trainer.global_step if self.cli is not None else 0
        self.fail(f"{what} at step {step}; {advice}; {self._last_good()}", EXIT_FAILED)

    def cleanup(self) -> None:
        """Release the lock; drop a run directory this command created (never another's) and left without results."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        if self.created_run_dir and self.cli.trainer.logger is not None:
            _remove_empty_run_dir(run_dir(self.cli.trainer), self.cli.trainer.global_step == 0)

    def close(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        self.stop.uninstall()


def _remove_empty_run_dir(path: Path, untrained: bool) -> None:
    """After a failure, drop a run directory that holds nothing but the saved config and the lock (and, when
    the failure came before the first step, e.g. in a task's ``setup``, the logger's still empty event file)."""
    disposable = lambda p: p.name in ("config.yaml", "hparams.yaml", LOCK_NAME) or (untrained and p.name.startswith("events.out.tfevents."))
    if path.is_dir() and all(disposable(p) for p in path.iterdir()):
        shutil.rmtree(path, ignore_errors=True)


def cli_main(args: Optional[list[str]] = None) -> Optional[INRCLI]:
    """Parse ``args`` (default ``sys.argv[1:]``), train, print one summary line; every failure but a bug ends
    with one line on stderr and the exit code of the module docstring."""
    session = Session(list(sys.argv[1:] if args is None else args))
    try:
        return session.run()
    except RunInterrupted as exc:
        session.interrupted(exc)
    except InputError as exc:
        session.fail(str(exc))
    except TrainingDiverged as exc:
        session.fail(str(exc), EXIT_DIVERGED)
    except ArgumentError as exc:
        session.fail(condense_config_error(str(exc)))
    except MisconfigurationException as exc:  # Lightning's refusal of a Trainer setting, e.g. max_steps < -1
        session.fail(f"trainer: {str(exc).strip().splitlines()[0]}")
    except torch.OutOfMemoryError:
        session.failed_in_training("out of memory", "choose a smaller data.batch_size or model")
    except OSError as exc:  # disk full, a file system turned read-only, a quota
        where = f" ({exc.filename})" if exc.filename else ""
        if not session.fitting:
            session.fail(f"{exc.strerror or exc}{where}")
        session.failed_in_training(f"cannot write: {exc.strerror or exc}{where}", "free space or choose another save_dir")
    except ValueError as exc:  # jsonargparse reports failed instantiation (our InputErrors too) as ValueError
        if "Does not validate against any" not in str(exc):
            raise
        session.fail(condense_config_error(str(exc)))
    finally:
        session.close()
