"""The task engine's interface: what the inner-step loop (``inr.tasks.steps.run_group``) and the CUDA-graph path
(``inr.tasks.graphs.GraphedSteps``) call on a task, written down as a ``typing.Protocol``.

``INRModule`` (``inr.tasks.base``) is the one implementation; a stacked task (``model.members``) keeps the same
interface and hands the five step hooks to its ``Members`` (``inr.tasks.members``), whose versions take the same
arguments. The loop and the graph path import this module, not the task's: the task's module imports them.

One optimizer step of a group, as ``run_group`` takes it (eagerly; a graph replays the same calls)::

    out = task.step_loss(batch)                      # StepLoss: forward, measurement, loss
    task.backward(out.loss); clip; optimizer.step()  # Lightning's, with the Trainer's clipping settings
    task.group_log_values(batch, out)                # on a logging step: its values (metrics take the batch in)
    task.update_group_metrics(raws, targets)         # the other steps' predictions, in one update
    task.record_grid_prediction(batch, out)          # the group's last step: the field on the training grid
    task.log_group(logged)                           # the logging steps' values to the loggers
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Protocol

import torch
from torch import Tensor

if TYPE_CHECKING:  # annotations only
    import lightning as L

    from inr.tasks.guards import NonFiniteLossGuard


@dataclass
class StepLoss:
    """One step's forward: ``loss`` (back-propagated), ``watched`` (what the non-finite guard reads: the loss,
    or a stacked model's losses per member, (K,)), ``raw`` (the prediction of the batch's values, for the
    metrics) and ``field`` (the field at the batch's coordinates; ``raw`` itself when the measurement is the
    field)."""

    loss: Tensor
    watched: Tensor
    raw: Tensor
    field: Tensor


# (step, {key: value}, whether it reaches the loggers) of each logging step of a group
LoggedStep = tuple[int, dict[str, Tensor], bool]


class GraphBackend(Protocol):
    """What ``GraphedSteps`` calls on the graph it captures: ``CudaGraph``, or ``EagerGraph`` without CUDA."""

    @staticmethod
    def prepare(optimizer: torch.optim.Optimizer) -> None:
        """Switches the optimizer to the form the graph can capture."""

    @staticmethod
    def side_stream() -> contextlib.AbstractContextManager:
        """Where the warm-up steps run."""

    def capture(self, fn: Callable[[], Any]) -> Any:
        """Records ``fn`` (runs nothing); returns the outputs the replays rewrite, or None."""

    def replay(self) -> Any:
        """Runs the recorded step; returns its outputs, or None (then they are ``capture``'s)."""


class CapturedStep(Protocol):
    """What ``run_group`` calls on the captured step of a run (``inr.tasks.graphs.GraphedSteps``)."""

    full_batch: Optional[bool]  # whether every step's batch is the full training split (set by the first step)

    def step(self, group: Any, j: int) -> tuple[StepLoss, Tensor]:
        """Step j of ``group`` (eager while warming up, then a replay): its StepLoss and the batch's values."""


class SteppedTask(Protocol):
    """What ``run_group`` and ``GraphedSteps`` read and call on a task (``INRModule`` implements it).

    Settings and the state of a group in progress:
        inner_steps: optimizer steps per Lightning training step (K ≥ 1).
        cuda_graphs: whether the steps may be captured as a CUDA graph (``inr.tasks.graphs``).
        graph_backend: what captures the graph (None: ``torch.cuda.CUDAGraph``; the tests give
            ``graphs.EagerGraph``, which needs no CUDA).
        lightning_steps: take every step through Lightning's ``manual_backward`` and optimizer step (the path a
            gradient scaler needs) even without a scaler.
        inner_progress: (first step, the group's losses so far (K, ...), steps taken), read by the guard.
        inner_output: (batch, StepLoss) of the step just taken, for a callback between two steps.
    """

    inner_steps: int
    cuda_graphs: bool
    graph_backend: Optional[Callable[[], GraphBackend]]
    lightning_steps: bool
    inner_progress: Optional[tuple[int, Tensor, int]]
    inner_output: Optional[tuple[dict[str, Any], StepLoss]]

    @property
    def trainer(self) -> L.Trainer: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def hparams(self) -> Any: ...

    @property
    def data(self) -> Any:
        """The attached ``GridDataModule``: ``data.gather(index, device)`` is a batch (index None: the full
        training split)."""

    # --- the task's step hooks (a stacked task: its Members') ---------------------------------------------
    def step_loss(self, batch: dict[str, Any]) -> StepLoss:
        """One step's forward: the loss of ``batch``, what the guard watches, the raw prediction and the field."""

    def group_log_values(self, batch: dict[str, Any], out: StepLoss) -> dict[str, Tensor]:
        """A logging step's values (copies: a graph's next replay rewrites ``out``); the training metrics'
        states take the batch in."""

    def update_group_metrics(self, raws: list[Tensor], targets: list[Tensor]) -> None:
        """The training metrics' states take the predictions of a group's other steps in, in one update."""

    def record_grid_prediction(self, batch: dict[str, Any], out: StepLoss) -> None:
        """``last_train_grid_prediction`` from a full-batch step (the group's last)."""

    def log_group(self, logged: list[LoggedStep]) -> None:
        """The group's logging steps to the loggers (``inr.tasks.steps.write_logs``) and the epoch's values."""

    # --- the task's services ---------------------------------------------------------------------------------
    def graphed_steps(self) -> Optional[CapturedStep]:
        """The captured step of this run, or None: the steps run eagerly."""

    def divergence_guard(self) -> Optional[NonFiniteLossGuard]:
        """The Trainer's non-finite loss guard, which reads each group's losses."""

    # --- Lightning's, as ``LightningModule`` defines them ------------------------------------------------------
    def optimizers(self, use_pl_optimizer: bool = True) -> Any: ...

    def lr_schedulers(self) -> Any: ...

    def backward(self, loss: Tensor, *args: Any, **kwargs: Any) -> None: ...

    def manual_backward(self, loss: Tensor, *args: Any, **kwargs: Any) -> None: ...

    def configure_gradient_clipping(
        self,
        optimizer: torch.optim.Optimizer,
        gradient_clip_val: Optional[float] = None,
        gradient_clip_algorithm: Optional[str] = None,
    ) -> None: ...

    def log_dict(self, dictionary: Any, prog_bar: bool = False, logger: Optional[bool] = None) -> None: ...
