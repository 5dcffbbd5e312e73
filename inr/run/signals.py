"""SIGINT (Ctrl-C) and SIGTERM (kill, timeout, docker stop, schedulers): stop cleanly with a checkpoint. Under
SLURM, SIGUSR1 (the warning ``#SBATCH --signal=USR1@90`` sends before the job's end) stops the same way, and
the job is then requeued (``inr.run.requeue``).

During training a signal does not interrupt the step in flight. It is acted on where a resume from the
saved state repeats exactly what an uninterrupted run would have done:
- after a batch that is not the last of its epoch: Lightning's stop request (``received_sigterm``) makes
  the loop raise ``SIGTERMException`` right after it, and ``on_exception`` saves ``last.ckpt`` (the
  training loader is resumable mid-epoch: ``inr.data.module.ResumableLoader``);
- after the last batch of an epoch: at the end of that epoch, after the epoch-end callbacks (this class
  is a ``Checkpoint`` callback, which Lightning runs after all others), where ``last.ckpt`` is saved and
  ``SIGTERMException`` raised. (Lightning's own handler would stop between the last batch and the epoch's
  end, a state its loops do not restore exactly; this handler withdraws that request.)
With K optimizer steps per Lightning step (``inner_steps``), a single-process run acts on a signal between two
steps of a group (``on_inner_step_end``): it saves there, a checkpoint a resume repeats exactly from, and stops.
A second Ctrl-C stops at once without saving (the checkpoints on disk are untouched). Before training
starts and after it ends there is nothing to save: the signal raises ``RunInterrupted`` right away. Once the
last training step is done the same holds for the closing work: a signal during the final validation saves
the final state after the validation batch in flight and stops; after the final checkpoint is written (the
last epoch's end), during the closing callbacks and evaluation, it raises ``RunInterrupted`` at once
(``closing``).
Signals that arrive while the command is already stopping are ignored, so that the save and the clean-up
finish.

Under data parallelism (N > 1 ranks) every rank must stop after the same step, since saving is a
collective (``Trainer.save_checkpoint`` ends in a barrier) and so is every training step. A signal may reach
one rank (``kill`` of the launching process: rank 0) or all of them (Ctrl-C in a terminal reaches the whole
process group; torchrun and SLURM signal every rank), at any moment, also while a rank waits inside a
collective. So a handler only records the signal, and after every batch the ranks agree on it: an
all-reduce (max) of the signal number each has received, 0 for none, one number per step. The launching
process also passes the first signal on to the ranks it started (as SIGTERM, so that a Ctrl-C that reached
them too does not count as a second one), which stops them too when it comes outside training. Lightning's
own SIGTERM handler, which the Trainer puts before ours when a stage starts, is taken out again at the first
hook of the stage (sanity check, training, validation, test, predict start): it calls a broadcast from inside
the signal handler, which deadlocks when another rank waits in a different collective. Between the two, during
the Trainer's "run-stage" barrier and the set-up of the loaders, a SIGTERM still goes through Lightning's
handler first.
"""

from __future__ import annotations

import os
import signal
from typing import Any, Optional

import lightning as L
import torch
from lightning.pytorch.callbacks import Checkpoint, ModelCheckpoint
from lightning.pytorch.utilities.exceptions import SIGTERMException

from inr.errors import EXIT_SIGINT, EXIT_SIGTERM
from inr.io.run_dir import run_dir
from inr.run.requeue import under_slurm

HANDLED = (signal.SIGINT, signal.SIGTERM)
REQUEUE_SIGNAL = signal.SIGUSR1  # SLURM's warning before the end of a job (Lightning's SLURMEnvironment default)
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
        self.requested = False  # a signal asked this process to stop
        self.pending = False  # a stop decided after a batch (by every rank) and not acted on yet
        self.ctrl_c = 0  # SIGINTs received: the second one stops at once
        self._trainer: Optional[L.Trainer] = None
        self._training = False
        self.closing = False  # the final checkpoint is written; what runs now is closing work
        self._previous: dict[int, Any] = {}

    # --- handlers -------------------------------------------------------------------------------------
    def install(self) -> GracefulStop:
        """Take over SIGINT and SIGTERM, and SIGUSR1 under SLURM (main thread only; elsewhere Python allows no
        handlers). With SIGUSR1 taken, Lightning does not install its own requeue handler."""
        for signum in (*HANDLED, REQUEUE_SIGNAL) if under_slurm() else HANDLED:
            try:
                self._previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread
                pass
        return self

    def uninstall(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}

    def watch(self, trainer: L.Trainer) -> None:
        """The Trainer the command will run, so that a signal can be passed on to the ranks it starts."""
        self._trainer = trainer

    def _handle(self, signum: int, frame: Any) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
            pass_on_to_started_ranks(self._trainer)
        self.ctrl_c += signum == signal.SIGINT
        if self._training and self._trainer is not None and not self.closing:
            if signum == signal.SIGINT and self.ctrl_c > 1:
                self.forced = True
                raise KeyboardInterrupt  # Ctrl-C twice: the user wants out now
            if not self.pending:  # in case Lightning's handler ran; see the module docstring
                self._trainer._signal_connector.received_sigterm = False
            self.requested = True
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
    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        self._trainer = trainer

    def _take_sigterm_back(self) -> None:
        """Ours alone again: the Trainer put its own SIGTERM handler before ours when it started the stage (see
        the module docstring); it restores ours itself when the stage ends."""
        if signal.SIGTERM in self._previous and signal.getsignal(signal.SIGTERM) != self._handle:
            signal.signal(signal.SIGTERM, self._handle)

    def on_sanity_check_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._take_sigterm_back()

    def on_validation_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._take_sigterm_back()

    def on_test_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._take_sigterm_back()

    def on_predict_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._take_sigterm_back()

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._take_sigterm_back()
        self._trainer, self._training = trainer, True

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        # the one place a stop is decided: after a batch, on every rank alike
        self.pending = self._agree(trainer) if trainer.world_size > 1 else self.requested
        if self.pending and not trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
            trainer._signal_connector.received_sigterm = True  # Lightning raises SIGTERMException after this batch

    def on_inner_step_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Between two optimizer steps of one Lightning step: one process stops here (ranks agree on a stop only
        after a batch, where they all are)."""
        if self.requested and trainer.world_size == 1:
            self._save(trainer)
            raise SIGTERMException()

    def _agree(self, trainer: L.Trainer) -> bool:
        """Whether every rank stops after this batch: s = max over ranks of the signal number each has received
        (0: none), s > 0 on all ranks or on none; a rank that received none takes that signal as its own."""
        mine = float(self.signum or signal.SIGTERM) if self.requested else 0.0
        agreed = int(trainer.strategy.reduce(torch.tensor([mine], device=trainer.strategy.root_device), reduce_op="max").item())
        if agreed:
            self.signum = self.signum or agreed
        return agreed > 0

    def on_validation_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        # the final validation: no training batch follows to act on a request, so it is acted on here
        if trainer.training is False and self._training and self.requested and final_step_done(trainer):
            self._save(trainer)
            raise SIGTERMException()

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self.pending or (self.requested and final_step_done(trainer)):  # the epoch-end callbacks and saves have run
            self._save(trainer)
            raise SIGTERMException()
        if final_step_done(trainer):
            self.closing = True

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._training = False
        self.closing = True

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        was_training, self._training = self._training, False
        if not was_training or not isinstance(exception, SIGTERMException) or self.saved or self.save_error:
            return
        if self.signum is None:  # SIGTERM reached Lightning's handler, ours not being installed
            self.signum = signal.SIGTERM
        self._save(trainer)

    def _save(self, trainer: L.Trainer) -> None:
        self.requested = self.pending = False
        self.step = trainer.global_step
        path = interrupt_checkpoint_path(trainer)
        try:
            trainer.save_checkpoint(path, weights_only=False)  # the full training state
        except OSError as exc:
            self.save_error = f"{exc.strerror or exc} ({path})"
            return
        self.saved = path


def final_step_done(trainer: L.Trainer) -> bool:
    """Training has run its last step: ``max_steps`` reached, or the last batch of the last epoch done."""
    if trainer.max_steps is not None and trainer.max_steps >= 0 and trainer.global_step >= trainer.max_steps:
        return True
    last_epoch = trainer.max_epochs is not None and trainer.max_epochs >= 0 and trainer.current_epoch + 1 >= trainer.max_epochs
    return last_epoch and trainer.fit_loop.epoch_loop.batch_progress.is_last_batch


def interrupt_checkpoint_path(trainer: L.Trainer) -> str:
    """``last.ckpt`` of the run's ModelCheckpoint (what ``--ckpt_path last`` resumes), or of ``<run>/checkpoints``.

    No collective: ``Trainer.log_dir`` broadcasts rank 0's directory, which would hang a rank that asks alone;
    here each rank reads its own logger's, and only rank 0's path is written to.
    """
    for cb in trainer.checkpoint_callbacks:
        if isinstance(cb, ModelCheckpoint) and cb.dirpath:
            return os.path.join(cb.dirpath, f"{cb.CHECKPOINT_NAME_LAST}{cb.FILE_EXTENSION}")
    return str(run_dir(trainer) / "checkpoints" / "last.ckpt")


def pass_on_to_started_ranks(trainer: Optional[L.Trainer]) -> None:
    """SIGTERM to the ranks this process started (Lightning's launcher on rank 0 of a local DDP run), if any."""
    launcher = getattr(getattr(trainer, "strategy", None), "launcher", None)
    for process in getattr(launcher, "procs", None) or []:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
