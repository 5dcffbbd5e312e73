"""``MonitoringBudget``: the run's periodic observation — validation, the spectral measurements and figures, the
logged images — takes at most a share of its wall time, whatever an epoch or a step costs.

Each of these runs on its configured cadence (every n epochs or optimizer steps) as long as the time all of them
have taken, plus what this one is expected to take (its previous cost), stays within ``max_share`` of the time
since training started; otherwise that occurrence is skipped. Where observation is cheap against training (a
256² image on a CPU: a spectral measurement every 10 steps is 0.7 % of those steps) nothing is skipped and the
cadence is the configured one; where it is not (a tiny problem, or any step on a GPU: a millisecond) the
observations thin out to the share, instead of the run spending most of its time observing itself. The
occurrences at the end of training (the final validation, the closing spectral measurement and images) always
run. Without a ``MonitoringBudget`` among the callbacks every occurrence runs.

Under data parallelism rank 0's clock decides for every rank (validation is a collective; the other observers
run on rank 0 only).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Optional

import lightning as L

from inr.errors import InputError


class MonitoringBudget(L.Callback):
    """At most ``max_share`` of the run's wall time for validation and the observers that consult it.

    Example:
        >>> budget = MonitoringBudget(max_share=0.05)
        >>> budget.start, budget.spent = 0.0, 1.0
        >>> budget.allows("images", now=10.0), budget.allows("images", now=30.0)
        (False, True)
    """

    supports_members = True  # reads no model

    def __init__(self, max_share: float = 0.05) -> None:
        if not 0 < max_share <= 1:
            raise InputError(f"MonitoringBudget.max_share must be in (0, 1], got {max_share}")
        self.max_share = float(max_share)
        self.start: Optional[float] = None
        self.spent = 0.0
        self.costs: dict[str, float] = {}  # the latest cost of each kind of work
        self.skipped: dict[str, int] = {}
        self._validating_since: Optional[float] = None

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.start, self.spent = time.monotonic(), 0.0

    def allows(self, job: str, estimate: Optional[float] = None, now: Optional[float] = None) -> bool:
        """Whether ``job`` may run now: the work so far plus its expected cost (its previous cost, else
        ``estimate``, else nothing) within ``max_share`` of the time since training started."""
        if self.start is None:
            return True
        now = time.monotonic() if now is None else now
        expected = self.costs.get(job, estimate if estimate is not None else 0.0)
        allowed = self.spent + expected <= self.max_share * (now - self.start)
        if not allowed:
            self.skipped[job] = self.skipped.get(job, 0) + 1
        return allowed

    def record(self, job: str, seconds: float) -> None:
        self.spent += seconds
        self.costs[job] = seconds

    @contextmanager
    def timed(self, job: str):
        began = time.monotonic()
        try:
            yield
        finally:
            self.record(job, time.monotonic() - began)

    # --- validation: Lightning's cadence, thinned -----------------------------------------------------------
    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if validates_after_this_batch(trainer) and not final_training_step(trainer):
            allowed = self.allows("validation")
            if trainer.world_size > 1:
                allowed = bool(trainer.strategy.broadcast(allowed))
            if not allowed:
                trainer.fit_loop.epoch_loop._skip_next_val = True  # Lightning's own flag for "not this time"

    def on_validation_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._validating_since = None if trainer.sanity_checking else time.monotonic()

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self._validating_since is not None and self.start is not None:
            self.record("validation", time.monotonic() - self._validating_since)
        self._validating_since = None


def budget_of(trainer: Optional[L.Trainer]) -> Optional[MonitoringBudget]:
    """The run's ``MonitoringBudget``, or None (then every occurrence runs)."""
    callbacks = getattr(trainer, "callbacks", None) or []
    return next((cb for cb in callbacks if isinstance(cb, MonitoringBudget)), None)


def validates_after_this_batch(trainer: L.Trainer) -> bool:
    """Lightning validates after the epoch's last batch of every ``check_val_every_n_epoch``-th epoch (the cadence
    the configs use; other forms of ``val_check_interval`` are left as they are)."""
    if not trainer.enable_validation or trainer.val_check_interval != 1.0:
        return False
    if not trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
        return False
    every = trainer.check_val_every_n_epoch
    return every is None or (trainer.current_epoch + 1) % every == 0


def final_training_step(trainer: L.Trainer) -> bool:
    """The optimizer step just taken is the run's last (max_steps, or the last batch of the last epoch)."""
    if trainer.max_steps is not None and 0 <= trainer.max_steps <= trainer.global_step:
        return True
    last_epoch = trainer.max_epochs is not None and 0 <= trainer.max_epochs <= trainer.current_epoch + 1
    return last_epoch and bool(trainer.fit_loop.epoch_loop.batch_progress.is_last_batch)
