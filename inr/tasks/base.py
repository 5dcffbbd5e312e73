"""``INRModule``: encoder + network as a LightningModule, the base every task subclasses.

A training step is ``loss(measure(field(batch), batch), batch["values"])``: the field f at the batch's
coordinates, seen through the measurement A that produced the targets. Direct fitting is A = sampling at the
training coordinates (``measure`` returns the field as it is); an inverse problem applies an operator
(``inr.tasks.InverseFitting``). Evaluation (``predict``, ``render``, validation) reads the field alone.

Extension points (override only what differs):
- ``default_in_dim`` / ``default_output_activation``: the defaults used when a config gives no encoder or
  network;
- ``field(batch)``: the representation's raw output at ``batch["coords"]`` (default network(encoder(v)));
  a representation that is not a coordinate network overrides this one hook (``ConvFitting``);
- ``measure(field, batch)``: the raw prediction in the space of ``batch["values"]`` (default: the field);
- ``loss(raw, target)``: training objective on that raw prediction (default MSE);
- ``postprocess(raw)``: raw field -> values in the target's space (clamping, sigmoid of logits, ...);
  ``postprocess_measurement(raw)`` does it for the training metrics' predictions (default the same);
- ``make_metrics()``: a torchmetrics ``MetricCollection`` for the held-out split (and, unless
  ``make_train_metrics`` says otherwise, the training batches);
- ``on_heldout_grid(pred, target)``: extra metrics on the held-out split as a regular grid (SSIM, IoU).

A stacked task (``members``) hands the hooks of ``inr.tasks.members.HOOKS`` (training and validation steps, the
step hooks, ``predict``, ``render``, ``target_grid``, ``predict_step``, ``evaluate``) to its ``Members``
(``self.stack``), each in its first line; a subclass that overrides one of them does the same and declares
``stackable = True``. The inner-step loop and the CUDA-graph path call the interface
``inr.tasks.engine.SteppedTask``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, ClassVar, Optional, Union

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.cli import LRSchedulerCallable, OptimizerCallable
from torch import Tensor, nn
from torchmetrics import MetricCollection

import inr.tasks.graphs as graphs
import inr.tasks.steps as steps
from inr.data.grid import Grid
from inr.encoders import Encoder, IdentityEncoding
from inr.errors import InputError
from inr.io.progress import advance
from inr.io.trusted import refuse_untrusted_imports, run_directory, trusted_imported_classes
from inr.metrics.local import not_distributed
from inr.modes import eval_mode
from inr.networks import MLP, NetworkFactory
from inr.tasks.buildable import check_saved_config
from inr.tasks.engine import LoggedStep, StepLoss
from inr.tasks.guards import NonFiniteLossGuard
from inr.tasks.init_from import INIT_KEY, InnerLoop, architecture, inner_loop, load_init, recorded_inner_loop
from inr.tasks.init_steps import adapted_names, check_names, init_optimizer
from inr.tasks.members import Members, build_members, resolve_members
from inr.tasks.optimizers import make_optimizer
from inr.tasks.parts import build_parts, import_class, init_arguments

# Lightning's all_gather goes through torch's autograd collective, which torch 2.14 reports as deprecated; the gathered
# held-out predictions need no gradient, and Lightning keeps the strategy's own process group.
warnings.filterwarnings("ignore", message=r"torch\.distributed\.nn\.functional\.all_gather is deprecated")


class INRModule(L.LightningModule):
    """f(v) = network(encoder(v)) fitted to a target sampled on a regular grid.

    Args:
        encoder: coordinate encoding; default ``IdentityEncoding(default_in_dim)``.
        network: ``(in_dim, out_dim) -> nn.Module``; in YAML a ``class_path`` with the remaining
            ``init_args`` (the task passes ``encoder.out_dim`` and ``out_channels``). Default: a 3×256 ReLU MLP.
        out_channels: output width; the CLI links it to the DataModule's channel count.
        optimizer, scheduler: injected callables (``OptimizerCallable``); default Adam(lr=1e-3).
        render_chunk: coordinates per forward pass when evaluating a whole grid (bounds memory).
        cache_encoding: when the training batch is the same full split every step and the encoder has no
            trainable parameters, encode it once and reuse the features.
        compile: run the network through ``torch.compile`` (the parameters and checkpoints stay those of the
            plain module).
        members: K > 0 trains K independent members of this task's shape as one stacked model
            (``inr.tasks.members``); None (default) is the single model.
        member_seeds: member k's network is drawn after ``torch.manual_seed(member_seeds[k])``; default 0..K−1.
        member_encoders: member k's encoder (one width for all); default ``encoder`` for every member. Giving
            either list makes the task stacked, with K its length.
        inner_steps: optimizer steps per Lightning training step (``inr.tasks.steps``): K > 1 trains K
            consecutive batches of the sampler inside one ``training_step``, so Lightning's per-batch cost is paid
            once per K steps; the steps, ``global_step``, logging, checkpoints and resumes are those of K = 1.
        cuda_graphs: capture the inner steps' training step as a CUDA graph and replay it (``inr.tasks.graphs``;
            on a CUDA device with inner_steps > 1, otherwise one log line says why not and the steps run eagerly).
        init_from: a checkpoint whose encoder and network start the fit instead of a random draw (a learned
            initialisation, ``inr.tasks.init_from``), read when ``fit`` sets up (a resume then restores its checkpoint).
            A Meta-SGD init's first n steps are its inner loop's (SGD at its learned rates, ``inr.tasks.init_steps``);
            a modulations init's are SGD on its hidden layers' biases alone, at its shifts' rates.
        init_inner_loop: a Reptile or MAML init's first n steps as its own inner loop too: SGD at its inner rate on
            every network tensor, n and the rate as the init records them (``inr.tasks.init_from.recorded_inner_loop``),
            then the configured optimizer. Its learned init fitted on this way ended above the paper's init where SGD
            at the inner rate throughout ended below (docs/learned_init.md, the +adam rows).
    """

    default_in_dim = 2
    default_output_activation = "none"
    # the world axes of the coordinates, in input order: grid tasks read (z, y, x) = the array's axes; meshes are written in x, y, z
    coordinate_axes = "zyx"
    # whether this class's own overrides of inr.tasks.members.HOOKS hand a stacked task to its members (the base's do)
    stackable: ClassVar[bool] = True

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 3,
        optimizer: OptimizerCallable = torch.optim.Adam,
        scheduler: Optional[LRSchedulerCallable] = None,
        render_chunk: int = 65536,
        cache_encoding: bool = True,
        compile: bool = False,
        members: Optional[int] = None,
        member_seeds: Optional[list[int]] = None,
        member_encoders: Optional[list[Encoder]] = None,
        inner_steps: int = 1,
        cuda_graphs: bool = False,
        init_from: Optional[str] = None,
        init_inner_loop: bool = False,
    ) -> None:
        super().__init__()
        if render_chunk < 1:
            raise InputError(f"model.render_chunk must be ≥ 1 coordinates, got {render_chunk}")
        self.inner_steps = steps.check_inner_steps(inner_steps)
        self.cuda_graphs = bool(cuda_graphs)
        # what captures the graph: None is torch.cuda.CUDAGraph (the tests give graphs.EagerGraph, which needs no CUDA)
        self.graph_backend: Optional[Callable[[], graphs.GraphBackend]] = None
        self._graphed: Optional[tuple[L.Trainer, Optional[graphs.GraphedSteps]]] = None  # (the run, its graph)
        self.lightning_steps = False  # True: inner steps through Lightning's manual path even without a scaler
        stacked = members is not None or member_seeds is not None or member_encoders is not None
        if stacked:
            members, member_seeds = resolve_members(members, member_seeds, member_encoders)
        # Given by the command line, the parts are their configs (class_path / init_args), which Lightning's
        # load_from_checkpoint rebuilds; built in Python, they are objects, which hyper-parameters cannot hold.
        ignore = [] if given_as_config() else ["encoder", "network", "optimizer", "scheduler", "member_encoders"]
        self.save_hyperparameters(ignore=ignore if stacked else [*ignore, "members", "member_seeds"])
        if stacked:  # as resolved (the CLI gives the hyper-parameters as configured)
            self.hparams.update(members=members, member_seeds=member_seeds)
        self.encoder = encoder if encoder is not None else IdentityEncoding(in_dim=self.default_in_dim)
        factory = network or partial(MLP, width=256, depth=3, output_activation=self.default_output_activation)
        self._attached_data: Any = None  # data given by attach_data, else the Trainer's
        self.out_channels = out_channels
        self.stack: Optional[Members] = None  # the members of a stacked task (inr.tasks.members)
        self.predict_member: Optional[int] = None  # the member a stacked task's predict_step renders (--member k)
        if stacked:
            encoders = list(member_encoders) if member_encoders is not None else [self.encoder] * members
            self.stack = Members(self, INRModule, encoders, member_seeds, factory)
            self.encoder, self.network = build_members(encoders, member_seeds, factory, out_channels)
        else:
            self.network = factory(self.encoder.out_dim, out_channels)
        self.optimizer_factory, self.scheduler_factory = optimizer, scheduler
        self.render_chunk, self.cache_encoding = render_chunk, cache_encoding
        # a compiled view of the same module, kept out of nn.Module's registry (object.__setattr__) so the
        # network's parameters appear once in state_dict/parameters() and checkpoints do not depend on compile
        object.__setattr__(self, "_network_fn", torch.compile(self.network) if compile else self.network)
        self.train_metrics = self.make_train_metrics().clone(prefix="train/")
        self.val_metrics = self.make_metrics().clone(prefix="val/")
        self._encoding_cache: Optional[tuple[Tensor, Tensor]] = None
        # prediction of the latest full-batch step on the training grid, (C, *train_shape); callbacks reuse it
        self.last_train_grid_prediction: Optional[Tensor] = None
        # weight of this rank's loss when it trains on a share of the full batch (``inr.data.module.shard_weight``)
        self._shard_weight: Optional[float] = None
        # (first step, losses so far, steps taken) of the group in progress (inner_steps > 1), read by the guard
        self.inner_progress: Optional[tuple[int, Tensor, int]] = None
        # (batch, StepLoss) of the latest step of the group in progress, for ``refresh_grid_prediction``
        self.inner_output: Optional[tuple[dict[str, Any], StepLoss]] = None
        self.init_from = init_from  # loaded at the first fit's setup (a resume's checkpoint then replaces it)
        if init_inner_loop and init_from is None:
            raise InputError("model.init_inner_loop: the inner loop of which init? set model.init_from too")
        self.init_inner_loop = bool(init_inner_loop)
        # a Meta-SGD init's inner loop, the fit's first steps (``inr.tasks.init_steps``); None: an ordinary fit
        self.init_loop: Optional[InnerLoop] = None
        self._init_step_taken = False  # the latest optimizer step was one of those: the scheduler holds

    # --- what subclasses override -------------------------------------------------------------------
    def field(self, batch: dict[str, Any]) -> Tensor:
        """f(v) = network(encoder(v)) at ``batch["coords"]`` (N, d) -> raw (N, C). A fixed full batch is
        encoded once (``cache_encoding``)."""
        return self._network_fn(self._encode_training_batch(batch["coords"], batch.get("full_batch", False)))

    def measure(self, field: Tensor, batch: dict[str, Any]) -> Tensor:
        """A(f): the raw field at the batch's coordinates -> the raw prediction of ``batch["values"]``.
        Direct fitting: A samples the field at those coordinates, so the field is returned as it is."""
        return field

    def loss(self, raw: Tensor, target: Tensor) -> Tensor:
        """L = mean((f(v) − y)²) over the batch."""
        return F.mse_loss(raw, target)

    def postprocess(self, raw: Tensor) -> Tensor:
        return raw

    def postprocess_measurement(self, raw: Tensor) -> Tensor:
        """The training metrics' prediction from ``measure``'s raw output (default ``postprocess``)."""
        return self.postprocess(raw)

    def make_metrics(self) -> MetricCollection:
        return MetricCollection({})

    def make_train_metrics(self) -> MetricCollection:
        """Metrics of the training batches (prediction vs ``batch["values"]``); default ``make_metrics()``."""
        return self.make_metrics()

    def on_heldout_grid(self, pred: Tensor, target: Tensor) -> dict[str, Tensor]:
        """Metrics of the held-out split seen as a regular grid; ``pred``/``target`` are (C, *shape)."""
        return {}

    # --- the field ----------------------------------------------------------------------------------
    def forward(self, coords: Tensor) -> Tensor:
        """Raw field at coordinates (N, d) -> (N, C)."""
        return self.field({"coords": coords})

    def coordinate_network(self) -> Optional[tuple[nn.Module, nn.Module]]:
        """(encoder, network) when the field is f(v) = network(encoder(v)), else None (``field`` overridden)."""
        return (self.encoder, self.network) if type(self).field is INRModule.field else None

    # --- members (inr.tasks.members) ------------------------------------------------------------------
    @property
    def members(self) -> Optional[int]:
        """K of a stacked task, None for a single model."""
        return None if self.stack is None else self.stack.count

    @property
    def member_seeds(self) -> Optional[list[int]]:
        """The members' network seeds of a stacked task, None for a single model."""
        return None if self.stack is None else self.stack.seeds

    def member(self, k: int) -> INRModule:
        """Member k of a stacked task as an ordinary single-model task (``Members.member``)."""
        return self._members().member(k)

    def evaluate_members(self) -> list[dict[str, float]]:
        """Each member's ``evaluate()`` as the single model it is (``Members.evaluate_members``)."""
        return self._members().evaluate_members()

    def _members(self) -> Members:
        if self.stack is None:
            raise InputError(f"{type(self).__name__} is a single model; members are those of a model with model.members")
        return self.stack

    # A task whose loss differentiates the field with respect to its coordinates (∂f/∂v: an eikonal term, gradient
    # supervision) sets this: the full batch's encoding is then never cached, which would cut the graph at v.
    needs_coordinate_gradients: bool = False

    def target_channels(self) -> int:
        """Channels of the data's target for this task: its output width, unless the target is something else than
        the field (e.g. ∂f/∂v, d·C channels for C outputs), which a task says by overriding this."""
        return self.out_channels

    def _encode_training_batch(self, coords: Tensor, full_batch: bool) -> Tensor:
        fixed = (
            full_batch
            and self.cache_encoding
            and not self.needs_coordinate_gradients
            and not any(p.requires_grad for p in self.encoder.parameters())
        )
        if not fixed:
            return self.encoder(coords)
        if self._encoding_cache is None or self._encoding_cache[0] is not coords:
            with torch.no_grad():
                self._encoding_cache = (coords, self.encoder(coords))
        return self._encoding_cache[1]

    def forget_encoding(self) -> None:
        """Drop the cached encoding of the full-batch coordinates: its encoder's weights were replaced."""
        self._encoding_cache = None

    @torch.no_grad()
    def predict(self, coords: Tensor, chunk: Optional[int] = None) -> Tensor:
        """Values f(v) at coordinates (N, d) -> (N, C), evaluated in chunks of ``chunk`` rows."""
        if self.stack is not None:
            return self.stack.predict(coords, chunk)
        chunk = chunk or self.render_chunk
        out = [self.postprocess(self(c)) for c in coords.split(chunk)]
        return torch.cat(out) if out else coords.new_zeros(0, self.out_channels)

    @torch.no_grad()
    def render(self, shape: Optional[Sequence[int]] = None, chunk: Optional[int] = None) -> Tensor:
        """The field on a regular grid of ``shape`` over [0,1)^d (default: the data's grid) -> (C, *shape).

        Coordinates are computed chunk by chunk from linear indices, so peak memory is bounded by the chunk
        (plus the output), never by a full coordinate tensor.
        """
        if self.stack is not None:
            return self.stack.render(shape, chunk)
        shape = tuple(shape) if shape is not None else self.grid_shape
        grid, chunk = Grid(shape), chunk or self.render_chunk
        if chunk < 1:  # a negative step would render nothing and return uninitialised memory
            raise InputError(f"render chunk must be ≥ 1 coordinates, got {chunk}")
        out = torch.empty(grid.numel, self.out_channels, device=self.device)
        for start in range(0, grid.numel, chunk):
            index = torch.arange(start, min(start + chunk, grid.numel), device=self.device)
            out[start : start + len(index)] = self.postprocess(self(grid.coords(index)))
            advance(start + len(index), grid.numel)  # a command waiting on this render shows how far it is
        return out.T.reshape(self.out_channels, *shape)  # (N, C) -> (C, *shape)

    # --- the data the task is attached to -----------------------------------------------------------
    @property
    def data(self) -> Any:
        if self._attached_data is not None:
            return self._attached_data
        dm = getattr(self.trainer, "datamodule", None) if self._trainer is not None else None
        if dm is None:
            raise RuntimeError(f"{type(self).__name__} needs a GridDataModule attached through a Trainer")
        return dm

    def attach_data(self, datamodule: Any) -> None:
        """Use ``datamodule`` as this task's data without a Trainer (``evaluate``, ``render`` of a member model)."""
        self._attached_data = datamodule

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return self.data.shape

    def target_grid(self) -> Tensor:
        """The target on the full grid, (C, *shape), on this module's device."""
        if self.stack is not None:
            return self.stack.target_grid()
        return self.data.values_grid().to(self.device)

    def setup(self, stage: str) -> None:
        dm = getattr(self.trainer, "datamodule", None)
        if dm is None:
            return
        if dm.ndim != self.encoder.in_dim:
            raise InputError(
                f"model.encoder expects {self.encoder.in_dim}-D coordinates but the data is {dm.ndim}-D; set in_dim: {dm.ndim}"
            )
        if dm.out_channels != self.target_channels():
            expected = (
                f"{self.target_channels()} (for {self.out_channels} outputs)"
                if self.target_channels() != self.out_channels
                else str(self.out_channels)
            )
            raise InputError(
                f"model.out_channels is {self.out_channels}: the data needs {expected} channels, it has {dm.out_channels}"
            )
        if self.stack is not None:
            self.stack.check_fit(self.trainer, dm)
        elif getattr(dm, "targets", 1) > 1:
            raise InputError(
                f"{dm.describe()}: the data holds {dm.targets} targets, one per member; set model.members: {dm.targets}"
            )
        if stage == "fit":
            if self.init_from is not None and not getattr(self, "_init_loaded", False):
                load_init(self, self.init_from)
                self.init_loop = inner_loop(self.init_from)
                if self.init_loop is None and self.init_inner_loop:  # a learned init's rates come first: it has its own
                    self.init_loop = recorded_inner_loop(self.init_from, [n for n, _ in self.network.named_parameters()])
                if self.init_loop is not None:
                    where = f"model.init_from {self.init_from}"
                    check_names(self.init_loop, adapted_names(self.init_loop, self.network), where)
                    if self.inner_steps > 1:
                        which = "a Meta-SGD" if self.init_loop.adapts == "all" else "a modulations"
                        raise InputError(
                            f"{where}: {which} init's first {self.init_loop.steps} steps take its learned rates, one "
                            f"optimizer step per training step; model.inner_steps is {self.inner_steps}: set it to 1"
                        )
                self._init_loaded = True
            dm.inner_steps = self.inner_steps
            if self.inner_steps > 1:
                steps.check_trainer(self.trainer)
                # manual optimization, declared after Lightning's configuration check: that check refuses
                # trainer.gradient_clip_val under manual optimization, and the steps clip with it themselves
                self.automatic_optimization = False

    # --- steps --------------------------------------------------------------------------------------
    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Optional[Tensor]:
        if self.stack is not None:
            return self.stack.training_step(batch, batch_idx)
        if "group" in batch:  # inner_steps K > 1: the group's steps, under manual optimization
            return steps.run_group(self, batch["group"])
        target = batch["values"]
        field = self.field(batch)
        raw = self.measure(field, batch)
        loss = self.loss(raw, target)
        n = len(batch["coords"])
        pred = self.postprocess_measurement(raw.detach())
        if self.logs_this_step():
            if self._shard_weight is None:
                self.log("train/loss", loss, prog_bar=True, batch_size=n)
            else:  # a share of the full batch: the mean over ranks of the weighted losses is the full batch's loss
                self.log("train/loss", loss.detach() * self._shard_weight, prog_bar=True, batch_size=n, sync_dist=True)
            self.train_metrics(pred, target)
            # per step: this rank's batch (a share of the full batch: all shares); per epoch: reduced over ranks
            self.log_dict(self.train_metrics, prog_bar=True, on_step=True, on_epoch=True, batch_size=n)
        else:  # the states only: the epoch's value still pools every step
            self.train_metrics.update(pred, target)
        if batch["full_batch"] and self._shard_weight is None:
            # the field on the training grid (never a measurement), for callbacks: (N, C) -> (C, *train_shape)
            values = pred if raw is field else self.postprocess(field.detach())
            self.last_train_grid_prediction = values.T.reshape(self.out_channels, *self.data.train_shape)
        return loss

    # --- the steps of a group (inner_steps > 1; ``inr.tasks.steps``) --------------------------------------
    def step_loss(self, batch: dict[str, Any]) -> StepLoss:
        """One step's forward: the loss L of the batch, the guard's view of it, the raw prediction and the field."""
        if self.stack is not None:
            return self.stack.step_loss(batch)
        field = self.field(batch)
        raw = self.measure(field, batch)
        loss = self.loss(raw, batch["values"])
        return StepLoss(loss, loss, raw, field)

    def group_log_values(self, batch: dict[str, Any], out: StepLoss) -> dict[str, Tensor]:
        """A logging step's values: ``train/loss`` and each training metric of the batch (``<key>_step``; the
        metrics' states take the batch in). A copy of the loss: a CUDA graph's next replay rewrites its output."""
        if self.stack is not None:
            return self.stack.group_log_values(batch, out)
        loss = out.loss.detach().clone()
        if self._shard_weight is not None:  # the full batch's loss: the mean over ranks of the weighted losses
            loss = self.trainer.strategy.reduce(loss * self._shard_weight, reduce_op="mean")
        values = {"train/loss": loss}
        step_values = self.train_metrics(self.postprocess_measurement(out.raw.detach()), batch["values"])
        values.update({f"{key}_step": value for key, value in step_values.items()})
        return values

    def update_group_metrics(self, raws: list[Tensor], targets: list[Tensor]) -> None:
        """The training metrics' states take the predictions of a group's other steps in, in one update."""
        if self.stack is not None:
            return self.stack.update_group_metrics(raws, targets)
        if len(self.train_metrics):
            self.train_metrics.update(self.postprocess_measurement(torch.cat(raws)), torch.cat(targets))

    def record_grid_prediction(self, batch: dict[str, Any], out: StepLoss) -> None:
        """``last_train_grid_prediction`` from a full-batch step (the group's last)."""
        if self.stack is not None:
            return self.stack.record_grid_prediction(batch, out)
        if batch["full_batch"] and self._shard_weight is None:
            raw = out.raw.detach()
            values = self.postprocess_measurement(raw) if out.raw is out.field else self.postprocess(out.field.detach())
            self.last_train_grid_prediction = values.T.reshape(self.out_channels, *self.data.train_shape)

    def refresh_grid_prediction(self) -> None:
        """``last_train_grid_prediction`` from the step just taken, between two steps of a group (a callback that
        measures there); at a group's end it is already the group's last step's."""
        if self.inner_output is not None:
            self.record_grid_prediction(*self.inner_output)

    def log_group(self, logged: list[LoggedStep]) -> None:
        """Writes the group's logging steps (``inr.tasks.steps.write_logs``) and, when it has any, hands Lightning
        the training metrics, whose epoch values it computes (``<key>_epoch``) from every step's update."""
        if self.stack is not None:
            return self.stack.log_group(logged)
        steps.write_logs(self, logged)
        if logged and len(self.train_metrics):
            self.log_dict({f"{key}_epoch": metric for key, metric in self.train_metrics.items()}, on_step=False, on_epoch=True)

    def graphed_steps(self) -> Optional[graphs.GraphedSteps]:
        """The captured training step of this run (``cuda_graphs``), or None: the steps run eagerly. Built at the
        run's first group (``inr.tasks.graphs.graphed_steps``, which says why not in one line) and kept for it."""
        if not self.cuda_graphs:
            return None
        if self._graphed is None or self._graphed[0] is not self.trainer:
            self._graphed = (self.trainer, graphs.graphed_steps(self, self.trainer))
        return self._graphed[1]

    def divergence_guard(self) -> Optional[NonFiniteLossGuard]:
        return next((cb for cb in self.trainer.callbacks if isinstance(cb, NonFiniteLossGuard)), None)

    def logs_this_step(self) -> bool:
        """Whether this training step's values reach the logger: every ``log_every_n_steps``-th step, a step
        that stops the run, and the last batch of an epoch (which closes the epoch's values).

        ``self.log`` costs Lightning's bookkeeping on every call (the largest part of the framework's own time
        per step: benchmarks/README.md, "Historical figures"), so the steps in between update the
        metrics' states and log nothing; the progress bar and ``trainer.callback_metrics`` hold the values of
        the latest logged step. Without a Trainer (a step called by hand) every step logs.
        """
        trainer = self._trainer
        if trainer is None:
            return True
        every = trainer.log_every_n_steps
        return (
            (every > 0 and (self.global_step + 1) % every == 0)
            or trainer.should_stop
            or trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
        )

    def on_train_batch_start(self, batch: dict[str, Any], batch_idx: int) -> None:
        """Reads the share's loss weight (None: the whole batch); the step metrics of a share sum the states of
        all shares, so the logged step values are the full batch's."""
        weight = batch.get("shard_weight") if isinstance(batch, dict) else None
        if (weight is None) != (self._shard_weight is None):
            for metric in self.train_metrics.values():
                metric.dist_sync_on_step = weight is not None
        self._shard_weight = weight

    def backward(self, loss: Tensor, *args: Any, **kwargs: Any) -> None:
        """Back-propagates w_r·L_r for a share of the full batch (``inr.data.module.shard_weight``), L otherwise,
        whichever ``training_step`` computed the loss."""
        super().backward(loss if self._shard_weight is None else loss * self._shard_weight, *args, **kwargs)

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        if self.stack is not None:
            return self.stack.validation_step(batch, batch_idx)
        pred = self.predict(batch["coords"])
        self.val_metrics.update(pred, batch["values"])
        self._heldout_chunks.append(pred)

    def on_validation_epoch_start(self) -> None:
        self._heldout_chunks: list[Tensor] = []

    def log_rank_equal(self, values: dict[str, Tensor], **kwargs: Any) -> None:
        """``log_dict`` for epoch-level values that are already the same on every rank, without Lightning's
        advice to add ``sync_dist`` for those keys (a mean over ranks of equal values changes nothing).

        Held-out values qualify: torchmetrics' ``compute()`` reduces the states over the ranks, and metrics of
        the held-out grid are computed on every rank from the gathered shares. The advice is emitted at epoch end, away from this call,
        so it is filtered by key; keys logged elsewhere keep it.
        """
        for key in values:
            warnings.filterwarnings("ignore", message=re.escape(f"It is recommended to use `self.log({key!r}"))
        self.log_dict(values, **kwargs)

    def heldout_prediction(self) -> Tensor:
        """The validation pass's predictions (N, C) on the held-out split: under N > 1 ranks, every rank's share
        gathered in rank order (the shares concatenate to the split; a collective, so every rank calls it)."""
        chunks = self._heldout_chunks
        pred = torch.cat(chunks) if chunks else torch.zeros(0, self.out_channels, device=self.device)
        if self.trainer.world_size == 1:
            return pred
        sizes = self.all_gather(torch.tensor(len(pred), device=self.device)).tolist()  # (N,)
        padded = F.pad(pred, (0, 0, 0, max(sizes) - len(pred)))  # (N_r, C) -> (max N_r, C)
        shares = self.all_gather(padded)  # (N, max N_r, C)
        return torch.cat([share[:size] for share, size in zip(shares, sizes)])

    def on_validation_epoch_end(self) -> None:
        if self.stack is not None:
            return self.stack.on_validation_epoch_end()
        self.log_rank_equal(self.val_metrics.compute(), prog_bar=True)
        self.val_metrics.reset()
        if type(self).on_heldout_grid is INRModule.on_heldout_grid:
            self._heldout_chunks = []
            return  # no metric needs the held-out grid: nothing to gather
        dm = self.data
        pred = self.heldout_prediction()
        if len(pred) == len(dm.test_index):
            pred_grid = pred.T.reshape(self.out_channels, *dm.test_shape)
            target_grid = dm.values_grid(dm.test_index, dm.test_shape).to(pred.device)
            grid_values = self.on_heldout_grid(pred_grid, target_grid)
            self.log_rank_equal({f"val/{name}": value for name, value in grid_values.items()})
        self._heldout_chunks = []

    # --- `test` runs the validation hooks on the held-out split; what they log as val/... is test/... ----
    def log(self, name: str, value: Any, *args: Any, **kwargs: Any) -> None:
        if name.startswith("val/") and self._trainer is not None and self.trainer.testing:
            name = "test/" + name[len("val/") :]
        super().log(name, value, *args, **kwargs)

    def test_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        self.validation_step(batch, batch_idx)

    def on_test_epoch_start(self) -> None:
        self.on_validation_epoch_start()

    def on_test_epoch_end(self) -> None:
        self.on_validation_epoch_end()

    def predict_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        """A render request ``{"shape": [...]}`` (``GridDataModule.predict_dataloader``) -> the field on that
        grid, (C, *shape), evaluated chunk by chunk (a stacked task: member ``predict_member``'s)."""
        if self.stack is not None:
            return self.stack.predict_step(batch, batch_idx)
        return self.render(batch["shape"])

    def optimizer_groups(self) -> list[Any]:
        """What the configured optimizer steps: every parameter, one group (a subclass may give groups their own rates)."""
        return list(self.parameters())

    def configure_optimizers(self) -> Any:
        optimizer = make_optimizer(self.optimizer_factory, self.optimizer_groups())
        if self.scheduler_factory is None:
            return optimizer
        scheduler = {"scheduler": self.scheduler_factory(optimizer)}
        if self.automatic_optimization:  # under manual optimization (inner_steps > 1) the steps step it
            scheduler["interval"] = "step"
        return {"optimizer": optimizer, "lr_scheduler": scheduler}

    def optimizer_step(self, epoch: int, batch_idx: int, optimizer: Any, optimizer_closure: Any = None) -> None:
        """The configured optimizer's step; the first n steps of a fit from a Meta-SGD init are its inner loop's
        instead (``inr.tasks.init_steps``): SGD at the learned rate α_i of each network tensor (of each hidden layer's
        bias, for a modulations init)."""
        loop = self.init_loop
        self._init_step_taken = loop is not None and self.global_step < loop.steps
        if not self._init_step_taken:
            super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)
            return
        sgd = init_optimizer(dict(self.network.named_parameters()), loop)
        self.trainer.strategy.optimizer_step(sgd, optimizer_closure, model=self)

    def lr_scheduler_step(self, scheduler: Any, metric: Any) -> None:
        if self._init_step_taken:  # the configured schedule counts the configured optimizer's steps only
            return
        super().lr_scheduler_step(scheduler, metric)

    def configure_callbacks(self) -> list[L.Callback]:
        return [NonFiniteLossGuard()]

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint[INIT_KEY] = architecture(self)  # what its weights belong to, checked when they start another fit

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.forget_encoding()
        steps.carry_step_count(checkpoint, self.automatic_optimization)
        steps.reopen_cut_epoch(checkpoint, getattr(self.data, "steps_per_epoch", None))

    @classmethod
    def load_from_checkpoint(
        cls,
        checkpoint_path: Any,
        map_location: Any = None,
        strict: Optional[bool] = None,
        trust: Union[str, Sequence[str], None] = None,
        **kwargs: Any,
    ):
        """Lightning's ``load_from_checkpoint``, reading the checkpoint as data: a run trained by the command line
        is rebuilt from the configuration recorded in its hyper-parameters (or, for older checkpoints, in its
        ``inr_model_config``), building only classes of ``inr``, ``torch`` and ``lightning``, of the packages the
        user grants (``trust=["mylab"]`` or ``$INR_TRUSTED_PACKAGES``), and classes the caller has already
        imported (``inr.io.trusted``); ``kwargs`` override recorded arguments (a model built in Python: pass its
        ``encoder=...``, ``network=...``), and an overridden part's recorded config is not read at all.

            model = ImageFitting.load_from_checkpoint("runs/image/version_0/checkpoints/last.ckpt")
            model = SDFFitting.load_from_checkpoint("runs/sdf/version_0/checkpoints/last.ckpt")  # SDFFitting imported
        """
        path = str(checkpoint_path)
        checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
        hparams = dict(checkpoint.get("hyper_parameters") or {})
        recorded = checkpoint.get("inr_model_config") or {}
        for key, value in (recorded.get("init_args") or {}).items():  # older runs: their parts from the run's config
            hparams.setdefault(key, value)
        hparams.pop("_instantiator", None)
        hparams = {k: v for k, v in hparams.items() if k not in kwargs}  # given by the caller: never built from data
        class_path = hparams.pop("_class_path", None)
        recorded_config = {"class_path": class_path, "init_args": hparams} if class_path else hparams
        imported = trusted_imported_classes(recorded_config)  # the caller's own classes, already in memory
        grants = check_saved_config(recorded_config, path, "model", trust, imported, run_dir=run_directory(path))
        target = import_class(class_path, INRModule) if class_path is not None else cls
        if not issubclass(target, cls):
            raise InputError(f"{path}: a checkpoint of {class_path}, not of {cls.__name__}")
        accepted = init_arguments(target)  # the CLI also records values linked into every model (``mode``)
        hparams = {k: v for k, v in hparams.items() if k in accepted}
        with refuse_untrusted_imports(path, grants):
            parts = build_parts(hparams)
            model = target(**{**hparams, **parts, **kwargs})
        model.hparams.update({k: hparams[k] for k in parts})  # the configs again, so a new checkpoint records them
        state = checkpoint["state_dict"]
        model.load_state_dict(state, strict=True if strict is None else strict)
        if map_location is not None:
            model = model.to(map_location)
        return model.eval()

    # --- final report -------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Metrics on the whole train and held-out splits, in eval mode (used for the closing summary).

        Local to the calling process (no cross-rank sync), so rank 0 may call it alone after DDP training.
        """
        if self.stack is not None:
            return self.stack.evaluate()
        dm, results = self.data, {}
        with eval_mode(self):
            for split, index in (("train", dm.train_index), ("test", dm.test_index)):
                metrics = self.make_metrics().to(self.device)
                for metric in metrics.values():  # local: rank 0 may evaluate alone after DDP training
                    metric.distributed_available_fn = not_distributed
                done = 0
                for chunk in index.split(self.render_chunk):
                    batch = dm.gather(chunk, self.device)
                    metrics.update(self.predict(batch["coords"]), batch["values"])
                    done += len(chunk)
                    advance(done, len(index))
                results.update({f"{split}/{k}": float(v) for k, v in metrics.compute().items()})
        return results


def given_as_config() -> bool:
    """Whether this task is being built by LightningCLI, which hands ``save_hyperparameters`` the config."""
    try:
        from lightning.pytorch.core.mixins.hparams_mixin import _given_hyperparameters
    except ImportError:  # another Lightning: the parts are left out of the hyper-parameters, as objects are
        return False
    return _given_hyperparameters.get() is not None
