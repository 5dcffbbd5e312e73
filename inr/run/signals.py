"""SIGINT (Ctrl-C) and SIGTERM (kill, timeout, docker stop, schedulers): stop cleanly with a checkpoint.

During training a signal does not interrupt the step in flight. It is acted on where a resume from the
saved state repeats exactly what an uninterrupted run would have done:
- after a batch that is not the last of its epoch: Lightning's stop request (``received_sigterm``) makes
  the loop raise ``SIGTERMException`` right after it, and ``on_exception`` saves ``last.ckpt`` (the
  training loader is resumable mid-epoch: ``inr.data.module.ResumableLoader``);
- after the last batch of an epoch: at the end of that epoch, after the epoch-end callbacks (this class
  is a ``Checkpoint`` callback, which Lightning runs after all others), where ``last.ckpt`` is saved and
  ``SIGTERMException`` raised. (Lightning's own handler would stop between the last batch and the epoch's
  end, a state its loops do not restore exactly; this handler withdraws that request.)
A second Ctrl-C stops at once without saving (the checkpoints on disk are untouched). Before training
starts and after it ends there is nothing to save: the signal raises ``RunInterrupted`` right away.
Signals that arrive while the command is already stopping are ignored, so that the save and the clean-up
finish.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any, Optional

import lightning as L
from lightning.pytorch.callbacks import Checkpoint, ModelCheckpoint
from lightning.pytorch.utilities.exceptions import SIGTERMException

from inr.errors import EXIT_SIGINT, EXIT_SIGTERM

HANDLED = (signal.SIGINT, signal.SIGTERM)
EXIT_CODES = {signal.SIGINT: EXIT_SIGINT, signal.SIGTERM: EXIT_SIGTERM}


class RunInterrupted(BaseException):
    """A signal arrived outside the training loop (a BaseException, like KeyboardInterrupt, so that no
    ``except Exception`` on the way swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class GracefulStop(Checkpoint):
    """Signal handlers for SIGINT/SIGTERM and the callback that saves the checkpoint when they stop training.

    ``signum``: the first signal received (None: none); ``saved``: the checkpoint written at the stop;
    ``save_error``: why it could not be written; ``forced``: a second Ctrl-C stopped without saving;
    ``step``: the global step at the stop.
    """

    def __init__(self) -> None:
        self.signum: Optional[int] = None
        self.saved: Optional[str] = None
        self.save_error: Optional[str] = None
        self.forced = False
        self.step: Optional[int] = None
        self.pending = False  # a stop was requested and has not been acted on yet
        self._trainer: Optional[L.Trainer] = None
        self._training = False
        self._previous: dict[int, Any] = {}

    # --- handlers -------------------------------------------------------------------------------------
    def install(self) -> GracefulStop:
        """Take over SIGINT and SIGTERM (main thread only; elsewhere Python allows no handlers)."""
        for signum in HANDLED:
            try:
                self._previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread
                pass
        return self

    def uninstall(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}

    def _handle(self, signum: int, frame: Any) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
        if self._training and self._trainer is not None:
            if signum == signal.SIGINT and not first:
                self.forced = True
                raise KeyboardInterrupt  # Ctrl-C twice: the user wants out now
            self._trainer._signal_connector.received_sigterm = False  # Lightning's handler ran first; see the module docstring
            self.pending = True
            return
        if first:
            raise RunInterrupted(signum)
        # a repeated signal while already stopping (saving, cleaning up) would only cut that short

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.signum, 128 + (self.signum or 0))

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else "a signal"

    # --- callback hooks -------------------------------------------------------------------------------
    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._trainer, self._training = trainer, True

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        if self.pending and not trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
            trainer._signal_connector.received_sigterm = True  # Lightning raises SIGTERMException after this batch

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self.pending:  # the other epoch-end callbacks (and ModelCheckpoint's save) have run
            self._save(trainer)
            raise SIGTERMException()

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._training = False

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        was_training, self._training = self._training, False
        if not was_training or not isinstance(exception, SIGTERMException) or self.saved or self.save_error:
            return
        if self.signum is None:  # SIGTERM reached Lightning's handler, ours not being installed
            self.signum = signal.SIGTERM
        self._save(trainer)

    def _save(self, trainer: L.Trainer) -> None:
        self.pending, self.step = False, trainer.global_step
        path = interrupt_checkpoint_path(trainer)
        try:
            trainer.save_checkpoint(path, weights_only=False)  # the full training state
        except OSError as exc:
            self.save_error = f"{exc.strerror or exc} ({path})"
            return
        self.saved = path


def interrupt_checkpoint_path(trainer: L.Trainer) -> str:
    """``last.ckpt`` of the run's ModelCheckpoint (what ``--ckpt_path last`` resumes), or of ``<run>/checkpoints``."""
    for cb in trainer.checkpoint_callbacks:
        if isinstance(cb, ModelCheckpoint) and cb.dirpath:
            return os.path.join(cb.dirpath, f"{cb.CHECKPOINT_NAME_LAST}{cb.FILE_EXTENSION}")
    root = trainer.log_dir or trainer.default_root_dir
    return str(Path(root) / "checkpoints" / "last.ckpt")
