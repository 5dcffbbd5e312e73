"""The inner steps as a CUDA graph (``INRModule(cuda_graphs=True)``): forward, loss, backward, gradient clipping
and the optimizer's step of one fixed-shape training step are captured once and replayed for every later step, so
a step costs one launch instead of a few hundred (tiny-cuda-nn's way of reaching thousands of steps per second).

The step has a fixed shape when its batch is the full training split (the same device tensors every step) or a
random batch of ``batch_size`` points: the graph reads its indices from a static device buffer, which each step
fills with a device-to-device copy of its row of the group's indices (``inr.data.module.BatchGroup``: the sampler's
own draws, moved to the device once per group, so the graph trains on exactly the batches of the eager steps).
The first ``WARMUP_STEPS`` steps of a run are ordinary steps on a side stream, as torch's whole-network capture
recipe asks (they initialise the optimizer's state and the libraries' workspaces); capture itself runs nothing,
and every step after it is a replay. The optimizer is switched to its ``capturable`` form (its step counts on the
device).

Used only where it can be (``refusal`` says why not, in one log line when the run starts): a CUDA device, one
process, 32-bit precision, no learning-rate scheduler (its rate would be frozen into the graph), no
``compile``, ``inner_steps`` > 1 and an optimizer with a ``capturable`` form (Adam, AdamW). On the CPU the steps
run eagerly. The logic that does not need CUDA (the refusals, the static batch, warm-up, capture and replay
bookkeeping) runs on the CPU with ``EagerGraph`` standing in for ``torch.cuda.CUDAGraph``
(tests/tasks/test_graphs.py, through the task's ``graph_backend``): a replay there calls the step again, and what
the graph returns lives in the same tensors from step to step, as a CUDA graph's outputs do. What this path calls
on the task is ``inr.tasks.engine.SteppedTask``, on the graph ``inr.tasks.engine.GraphBackend``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Optional

import lightning as L
import torch
from lightning.pytorch.plugins.precision import Precision
from lightning.pytorch.utilities import rank_zero_info
from torch import Tensor

from inr.tasks.engine import GraphBackend, StepLoss, SteppedTask

WARMUP_STEPS = 3  # eager steps on a side stream before the capture (torch.cuda.graphs' whole-network recipe)


def refusal(task: SteppedTask, trainer: L.Trainer) -> Optional[str]:
    """Why the steps cannot be a CUDA graph in this run, or None when they can."""
    if task.device.type != "cuda" and task.graph_backend is None:
        return f"the device is {task.device.type}; CUDA graphs need a CUDA device"
    if task.inner_steps == 1:
        return "model.inner_steps is 1; a graph pays off replayed several times per Lightning step"
    if trainer.world_size > 1:
        return f"{trainer.world_size} processes; the graph is captured for one"
    if type(trainer.precision_plugin) is not Precision:
        return f"precision {trainer.precision}; the graph is captured in 32-bit"
    if task.lr_schedulers() is not None:
        return "a learning-rate scheduler would have its rate frozen into the graph"
    if task.hparams.get("compile"):
        return "model.compile is set; choose one of compile and cuda_graphs"
    optimizer = task.optimizers().optimizer
    if "capturable" not in optimizer.defaults:
        return f"{type(optimizer).__name__} has no capturable form"
    return None


class CudaGraph:
    """``torch.cuda.CUDAGraph`` behind the two calls the steps make: ``capture(fn)`` (records ``fn``, runs
    nothing, returns its outputs: tensors the replays rewrite) and ``replay()``."""

    def __init__(self) -> None:
        self.graph = torch.cuda.CUDAGraph()

    @staticmethod
    def prepare(optimizer: torch.optim.Optimizer) -> None:
        """The optimizer's capturable form: its step counts on the device."""
        for group in optimizer.param_groups:
            group["capturable"] = True
        for param, state in optimizer.state.items():
            if "step" in state and torch.is_tensor(state["step"]) and state["step"].device != param.device:
                state["step"] = state["step"].to(param.device, torch.float32)

    @staticmethod
    def side_stream() -> contextlib.AbstractContextManager:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        return _on_stream(stream)

    def capture(self, fn: Callable[[], Any]) -> Any:
        with torch.cuda.graph(self.graph):
            return fn()

    def replay(self) -> None:
        self.graph.replay()


@contextlib.contextmanager
def _on_stream(stream: Any):
    with torch.cuda.stream(stream):
        yield
    torch.cuda.current_stream().wait_stream(stream)


class EagerGraph:
    """A stand-in for ``CudaGraph`` that needs no CUDA: ``capture`` records ``fn`` without running it; each
    ``replay`` runs it and copies its outputs into the tensors of the first replay, which every replay returns
    (as a CUDA graph's outputs, they are rewritten by the next replay)."""

    def __init__(self) -> None:
        self.fn: Optional[Callable[[], Any]] = None
        self.outputs: Any = None
        self.replays = 0

    @staticmethod
    def prepare(optimizer: torch.optim.Optimizer) -> None:
        pass  # capturable optimizers are CUDA's

    @staticmethod
    def side_stream() -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def capture(self, fn: Callable[[], Any]) -> None:
        self.fn = fn

    def replay(self) -> Any:
        fresh = self.fn()
        if self.outputs is None:
            self.outputs = fresh
        else:
            for static, new in zip(_tensors(self.outputs), _tensors(fresh), strict=True):
                static.copy_(new)
        self.replays += 1
        return self.outputs


def _tensors(outputs: tuple[StepLoss, Tensor]) -> list[Tensor]:
    step, values = outputs
    return [step.loss, step.watched, step.raw, step.field, values]


class GraphedSteps:
    """The captured step of one task in one run: the static batch, warm-up, capture and replays.

    ``step(group, j)`` trains step j of ``group`` and returns (StepLoss, the batch's target values): eagerly
    for the run's first ``WARMUP_STEPS`` steps, then by replay. The returned tensors of a replay are the graph's:
    the next replay rewrites them, so what is kept across steps must be copied.
    """

    def __init__(self, task: SteppedTask, trainer: L.Trainer, backend: GraphBackend) -> None:
        self.task, self.trainer, self.backend = task, trainer, backend
        self.optimizer = task.optimizers().optimizer
        self.clip = (trainer.gradient_clip_val, trainer.gradient_clip_algorithm)
        self.static_index: Optional[Tensor] = None
        self.full_batch: Optional[bool] = None
        self.warm = 0
        self.captured: Optional[tuple[bool, Any]] = None
        backend.prepare(self.optimizer)

    def _batch(self) -> dict[str, Any]:
        data, device = self.task.data, self.task.device
        return data.gather(None if self.full_batch else self.static_index, device)

    def _train(self) -> tuple[StepLoss, Tensor]:
        """One step on the static batch: what is captured (and, warming up, run)."""
        batch = self._batch()
        out = self.task.step_loss(batch)
        self.optimizer.zero_grad(set_to_none=True)  # captured: backward writes the gradients afresh each replay
        self.task.backward(out.loss)
        if self.clip[0]:
            self.task.configure_gradient_clipping(self.optimizer, *self.clip)
        self.optimizer.step()
        return out, batch["values"]

    def step(self, group: Any, j: int) -> tuple[StepLoss, Tensor]:
        if self.full_batch is None:
            self.full_batch = group.index is None
            if not self.full_batch:
                self.static_index = group.index[j].clone()
        if not self.full_batch:
            self.static_index.copy_(group.index[j], non_blocking=True)  # device to device, no wait
        if self.warm < WARMUP_STEPS:
            self.warm += 1
            with self.backend.side_stream():
                return self._train()
        if self.captured is None:
            self.captured = True, self.backend.capture(self._train)
        replayed = self.backend.replay()  # a CUDA graph returns nothing: its outputs are the captured ones
        return replayed if replayed is not None else self.captured[1]


def graphed_steps(task: SteppedTask, trainer: L.Trainer) -> Optional[GraphedSteps]:
    """The run's ``GraphedSteps`` when ``cuda_graphs`` is usable in it, else None, saying why in one log line; built
    once per run (the task keeps it: ``INRModule.graphed_steps``)."""
    reason = refusal(task, trainer)
    if reason is not None:
        rank_zero_info(f"model.cuda_graphs: not used, {reason}; the training steps run eagerly")
        return None
    backend = task.graph_backend() if task.graph_backend is not None else CudaGraph()
    rank_zero_info(f"model.cuda_graphs: the training step is captured after {WARMUP_STEPS} eager steps and replayed")
    return GraphedSteps(task, trainer, backend)
