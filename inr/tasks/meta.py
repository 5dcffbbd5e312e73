"""``MetaLearning``: an initialisation θ meta-learned over a class of signals (Tancik et al. 2021, "Learned
Initializations for Optimizing Coordinate-Based Neural Representations"), so that a new signal of the class fits
in a few steps.

θ is the task's own encoder and network (the module is an ``INRModule``: its checkpoint is the init, which any
config then starts from with ``init_from``). Each training step takes K signals of a ``SignalSet``, the K members
of a stacked task of class ``task`` (``inr.tasks.members``: the members' field and measurement, each member
through the task's operator), and runs the inner loop (``inr.tasks.adaptation``):

- ``reptile``: n steps of SGD or Adam at rate α on the K members, each starting at θ; then the outer optimizer
  (its learning rate is ε) steps on g = θ − mean_k φ_k: with SGD, θ ← θ + ε·mean_k(φ_k − θ);
- ``maml``: n differentiable SGD steps at rate α, then the outer optimizer steps on ∇_θ mean_k L_k(φ_k^(n)).
- ``metasgd`` (Li et al. 2017): MAML with a learned rate per network tensor, φ_i ← φ_i − α_i ∇_i with α_i = exp(a_i),
  a_i = log α at the start; the a_i are parameters of the module (``inner_log_rates``) that the outer optimizer
  steps with θ on the same loss, in a parameter group of their own at ``inner_log_rate_lr``: at MAML's outer rate
  (Adam at 1e-4 moves a parameter by about its rate per step) a_i would move by 0.025 in 250 outer steps, α_i by
  2.5 %, so the rates would stay where they started. A checkpoint holds the rates (``INNER_RATES_KEY``;
  ``inner_rates(path)``) and n (``INNER_STEPS_KEY``); the held-out scores adapt with them, and so does a fit
  started from the init (its first n steps: ``inr.tasks.init_steps``).

``adapt``: what the inner loop moves. ``all`` (default): every network tensor, as above. ``modulations`` (functa,
Dupont et al. 2022): only per-signal shifts s_l added to each hidden layer's pre-activation, h_{l+1} =
act(W_l h_l + b_l + s_l), s^(0) = 0 (``inr.tasks.modulations``); n SGD steps s_l ← s_l − α_l ∇_{s_l} Σ_k L_k, θ
held, at one rate α (``maml``) or a learned α_l = exp(a_l) per layer (``metasgd``); the outer loop is MAML's on
θ (and the a_l), through the inner steps. A signal is then its shifts, D·width numbers. Reptile has no such form
(its direction θ − mean_k φ_k is zero when the inner loop holds θ) and is refused. The checkpoint holds the shifts'
rates by the bias each is added to, n and ``INNER_ADAPTS_KEY`` = ``modulations``; a fit from the init takes its
first n steps on those biases alone (``inr.tasks.init_steps``), and the held-out scores adapt the shifts alone.

The loss the inner loop minimises is the task's own (``ImageFitting``: MSE on the training pixels;
``InverseFitting``: |A(f) − y|² on the projections; ``VolumeFitting``: BCE on occupancy). Under N ranks each rank
adapts its share of the K signals and DDP averages the outer gradients: the mean over all K.

Logged: ``train/loss@0`` and ``train/loss`` (the members' mean loss at θ and after the inner loop), and at each
validation the held-out score of the test signals after each of ``eval_steps`` inner steps from θ, with the inner
optimizer, ``val/<metric>@<n>`` (PSNR, or IoU for occupancy; mean over the test signals) and ``.../std`` — the
outer loop's curves. ``evaluate()`` (the closing summary) reports the same as ``test/<metric>@<n>``.
"""

from __future__ import annotations

import copy
import math
import sys
from functools import partial
from typing import Any, Literal, Optional

import torch
import torch.nn.functional as F
from lightning.pytorch.cli import LRSchedulerCallable, OptimizerCallable
from torch import Tensor, nn

from inr.encoders import Encoder
from inr.errors import InputError
from inr.metrics.local import not_distributed
from inr.networks import MLP, NetworkFactory
from inr.tasks.adaptation import INNER_OPTIMIZERS, adapt, expand, maml_losses, reptile_gradient, surrogate
from inr.tasks.base import INRModule
from inr.tasks.init_from import INNER_ADAPTS_KEY, INNER_RATES_KEY, INNER_STEPS_KEY, inner_adapts, inner_rates, load_init
from inr.tasks.modulations import ADAPTS, modulated, shift_losses, shift_names, zero_shifts
from inr.tasks.parts import import_class

ALGORITHMS = ("reptile", "maml", "metasgd")
DEFAULT_EVAL_STEPS = (0, 1, 2, 5, 10)
MAX_INNER_STEPS = 10_000


class MemberField(nn.Module):
    """The members' field (K, N, C) of a stacked task, and with ``measure`` their measurement (K, ...): a module
    around ``Members.field_and_measurement`` so that ``torch.func.functional_call`` can evaluate it at φ."""

    def __init__(self, task: INRModule) -> None:
        super().__init__()
        self.task = task

    def forward(self, batch: dict[str, Any], measure: bool = True) -> Tensor:
        if measure:
            return self.task.stack.field_and_measurement(batch)[1]
        return self.task.field(batch)


def member_losses(task: INRModule, raw: Tensor, targets: Tensor) -> Tensor:
    """L_k = the task's loss of member k's prediction against its own target, (K,): ``torch.vmap`` of the task's
    ``loss`` over the members' axis of both (each signal has its own target or measurements), member by member
    where vmap cannot map it."""
    try:
        return torch.vmap(task.loss)(raw, targets)
    except RuntimeError:
        return torch.stack([task.loss(r, t) for r, t in zip(raw, targets)])


def task_class(path: str) -> type:
    """The fitting task named by ``model.task``: an ``INRModule`` subclass of ``inr`` or of a module already
    imported (a config never imports code of its own)."""
    module = path.rpartition(".")[0]
    if not path.startswith("inr.") and module not in sys.modules:
        raise InputError(f"model.task {path}: a task outside inr must be imported before the run (a script that imports it)")
    cls = import_class(path)
    if not (isinstance(cls, type) and issubclass(cls, INRModule)) or issubclass(cls, MetaLearning):
        raise InputError(f"model.task {path}: not a fitting task (a subclass of inr.tasks.INRModule)")
    return cls


class MetaLearning(INRModule):
    """θ = (encoder, network) meta-learned over a ``SignalSet`` by Reptile, MAML or Meta-SGD (module docstring).

    Args:
        encoder, network, out_channels: the architecture of the init (a network of linear layers and entrywise
            activations, as members need; a Fourier or identity encoder). Default network: 3 × 256 ReLU with the
            task's output activation.
        optimizer, scheduler: the outer loop's (its learning rate is Reptile's ε).
        task: the fitting task of one signal, whose loss, measurement and score the loops use.
        mode: a volume task's mode (linked from the data: occupancy for shapes).
        algorithm: ``reptile``, ``maml`` or ``metasgd``.
        inner_loop_steps: n, inner steps per outer step.
        inner_loop_lr: α, the inner steps' learning rate (Meta-SGD's rates start there).
        inner_loop_optimizer: ``sgd`` or ``adam`` (torch's Adam; first order, so Reptile only).
        inner_log_rate_lr: Meta-SGD: the outer optimizer's learning rate for the log-rates a_i (their own
            parameter group; θ's is the optimizer's own). Default 1e-2: with Adam each a_i can move by about 0.01
            per outer step, α_i by about 1 %.
        eval_steps: the inner-step counts after which the test signals are scored (default 0, 1, 2, 5, 10).
        render_chunk: coordinates per forward pass when scoring (shared by the K members).
        init_from: continue from a checkpoint's encoder and network (``inr.tasks.init_from``).
        adapt: what the inner loop adapts: ``all`` network tensors, or the hidden layers' shift ``modulations``
            only (``maml`` or ``metasgd``; ``inr.tasks.modulations``).
    """

    default_in_dim = 2

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 3,
        optimizer: OptimizerCallable = torch.optim.Adam,
        scheduler: Optional[LRSchedulerCallable] = None,
        task: str = "inr.tasks.ImageFitting",
        mode: Optional[str] = None,
        algorithm: Literal["reptile", "maml", "metasgd"] = "reptile",
        inner_loop_steps: int = 2,
        inner_loop_lr: float = 1e-2,
        inner_loop_optimizer: Literal["sgd", "adam"] = "sgd",
        inner_log_rate_lr: float = 1e-2,
        eval_steps: Optional[list[int]] = None,
        render_chunk: int = 65536,
        init_from: Optional[str] = None,
        adapt: Literal["all", "modulations"] = "all",
    ) -> None:
        cls = task_class(task)
        if algorithm not in ALGORITHMS:
            raise InputError(f"model.algorithm: unknown algorithm {algorithm!r}; choose {' or '.join(ALGORITHMS)}")
        if adapt not in ADAPTS:
            raise InputError(f"model.adapt: unknown {adapt!r}; choose {' or '.join(ADAPTS)}")
        if adapt == "modulations" and algorithm == "reptile":
            raise InputError(
                "model.adapt modulations: Reptile steps θ toward the adapted weights, and the shifts leave θ where it "
                "is; use algorithm maml or metasgd"
            )
        if (
            isinstance(inner_loop_steps, bool)
            or not isinstance(inner_loop_steps, int)
            or not 1 <= inner_loop_steps <= MAX_INNER_STEPS
        ):
            raise InputError(f"model.inner_loop_steps must be an int from 1 to {MAX_INNER_STEPS:,}, got {inner_loop_steps}")
        if not (isinstance(inner_loop_lr, (int, float)) and math.isfinite(inner_loop_lr) and inner_loop_lr > 0):
            raise InputError(f"model.inner_loop_lr must be a finite number > 0, got {inner_loop_lr}")
        if not (isinstance(inner_log_rate_lr, (int, float)) and math.isfinite(inner_log_rate_lr) and inner_log_rate_lr > 0):
            raise InputError(f"model.inner_log_rate_lr must be a finite number > 0, got {inner_log_rate_lr}")
        if inner_loop_optimizer not in INNER_OPTIMIZERS:
            raise InputError(f"model.inner_loop_optimizer: unknown {inner_loop_optimizer!r}; choose sgd or adam")
        if algorithm in ("maml", "metasgd") and inner_loop_optimizer != "sgd":
            raise InputError(
                f"model.inner_loop_optimizer: {'MAML' if algorithm == 'maml' else 'Meta-SGD'} differentiates through SGD steps; use sgd (or algorithm reptile)"
            )
        steps = list(DEFAULT_EVAL_STEPS if eval_steps is None else eval_steps)
        if not steps or any(isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_INNER_STEPS for s in steps):
            raise InputError(f"model.eval_steps must be a list of ints from 0 to {MAX_INNER_STEPS:,}, got {eval_steps}")
        self.task_cls, self.mode = cls, mode
        self.task_args = {"mode": mode} if mode is not None else {}
        output = {"occupancy": "none", "density": "sigmoid"}.get(mode or "", cls.default_output_activation)  # as VolumeFitting
        factory = network or partial(MLP, width=256, depth=3, output_activation=output)
        super().__init__(
            encoder,
            factory,
            out_channels,
            optimizer=optimizer,
            scheduler=scheduler,
            render_chunk=render_chunk,
            init_from=init_from,
        )
        check_outer_rate(optimizer)
        self.factory = factory
        self.algorithm, self.inner_loop_steps, self.inner_loop_lr = algorithm, inner_loop_steps, float(inner_loop_lr)
        self.inner_loop_optimizer, self.eval_steps = inner_loop_optimizer, sorted(set(steps))
        self.inner_log_rate_lr = float(inner_log_rate_lr)
        self.adapt = adapt
        # the hidden layers' biases, where the shifts enter (refused in one line where the network has none)
        self.shift_names = shift_names(self.network) if adapt == "modulations" else []
        if algorithm == "metasgd":  # a_i = log α_i: the rates stay > 0 whatever step the outer optimizer takes
            start = math.log(self.inner_loop_lr)
            self.inner_log_rates = nn.ParameterList(nn.Parameter(torch.tensor(start)) for _ in self.rate_names())
        self._stacks: dict[tuple[int, str, torch.dtype], INRModule] = {}  # stacked tasks by (K, device, dtype)
        try:  # a task, network or encoder that cannot be stacked: refused now
            probe = self.members_task(1, torch.device("cpu"))
        except InputError as exc:
            raise InputError(f"model.task {task}: its signals cannot train as members ({exc})") from None
        self.metric = next(iter(probe.make_metrics().keys()), "loss")
        self._scores: list[Tensor] = []

    # --- the members: K signals as one stacked task -----------------------------------------------------------
    def members_task(self, count: int, device: torch.device) -> INRModule:
        """The stacked task of K members of class ``task`` whose hooks the loops call; its own weights are never
        used (φ replaces them), and it is not a child module (no parameters of θ's DDP, no checkpoint entries)."""
        dtype = next(self.network.parameters()).dtype
        key = (count, str(device), dtype)
        if key not in self._stacks:
            with torch.random.fork_rng(devices=[]):
                stacked = self.task_cls(
                    member_encoders=[copy.deepcopy(self.encoder) for _ in range(count)],
                    member_seeds=[0] * count,
                    network=self.factory,
                    out_channels=self.out_channels,
                    **self.task_args,
                )
            stacked.requires_grad_(False)
            stacked.to(device=device, dtype=dtype)
            if self._attached_data is not None or self._trainer is not None:
                stacked.attach_data(self.data)
            self._stacks[key] = stacked
        return self._stacks[key]

    def losses_at(self, stacked: INRModule, batch: dict[str, Any]) -> Any:
        """φ -> the members' losses (K,) on the batch's targets (their own pixels or measurements)."""
        field = MemberField(stacked)
        names = [n for n, _ in self.network.named_parameters()]

        def losses(phi: dict[str, Tensor]) -> Tensor:
            raw = torch.func.functional_call(field, {f"task.network.{n}": phi[n] for n in names}, (batch,))
            return member_losses(stacked, raw, batch["targets"])

        return losses

    def theta(self) -> dict[str, Tensor]:
        return dict(self.network.named_parameters())

    def rate_names(self) -> list[str]:
        """What the inner loop steps, by name: every network tensor, or the biases the shifts are added to."""
        return list(self.shift_names) if self.adapt == "modulations" else [n for n, _ in self.network.named_parameters()]

    def inner_rates(self) -> Any:
        """The inner SGD's rate: α_i = exp(a_i) per network tensor (per shifted layer) by name for Meta-SGD
        (differentiable in a_i), else the one ``inner_loop_lr``."""
        if self.algorithm != "metasgd":
            return self.inner_loop_lr
        return {n: a.exp() for n, a in zip(self.rate_names(), self.inner_log_rates)}

    def optimizer_groups(self) -> list[Any]:
        """θ at the outer optimizer's rate; Meta-SGD's log-rates a_i in a group of their own at ``inner_log_rate_lr``."""
        if self.algorithm != "metasgd":
            return super().optimizer_groups()
        rates = list(self.inner_log_rates)
        own = {id(a) for a in rates}
        return [{"params": [p for p in self.parameters() if id(p) not in own]}, {"params": rates, "lr": self.inner_log_rate_lr}]

    # --- training ---------------------------------------------------------------------------------------
    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        count = len(batch["signals"])
        stacked = self.members_task(count, self.device)
        losses, theta = self.losses_at(stacked, batch), self.theta()
        if self.adapt == "modulations":  # MAML or Meta-SGD on θ through the shifts' inner loop
            before, after, _ = shift_losses(losses, theta, self.shift_names, count, self.inner_loop_steps, self.inner_rates())
            loss = after.mean()
        elif self.algorithm == "reptile":
            adapted, history = adapt(
                losses, expand(theta, count), self.inner_loop_steps, self.inner_loop_lr, self.inner_loop_optimizer
            )
            with torch.no_grad():
                after = losses(adapted)
            before = history[0]
            loss = surrogate(theta, reptile_gradient(theta, adapted), after.mean())
        else:  # MAML, or Meta-SGD through its rates
            before, after = maml_losses(losses, theta, count, self.inner_loop_steps, self.inner_rates())
            loss = after.mean()
        if self._trainer is not None:  # (a step called by hand logs nothing)
            distributed = self.trainer.world_size > 1
            self.log("train/loss", after.mean().detach(), prog_bar=True, batch_size=count, sync_dist=distributed)
            self.log("train/loss@0", before.mean(), batch_size=count, sync_dist=distributed)
        return loss

    # --- scoring the test signals after n inner steps ----------------------------------------------------
    @torch.no_grad()
    def member_scores(self, stacked: INRModule, phi: dict[str, Tensor], batch: dict[str, Any]) -> Tensor:
        """The held-out score (``metric``) of each member's field at φ on the batch's evaluation points, (K,)."""
        field, names = MemberField(stacked), [n for n, _ in self.network.named_parameters()]
        params = {f"task.network.{n}": phi[n] for n in names}
        coords, count = batch["eval_coords"], len(phi[names[0]])
        chunk = max(1, self.render_chunk // count)
        parts = [torch.func.functional_call(field, params, ({"coords": c},), {"measure": False}) for c in coords.split(chunk)]
        pred = stacked.postprocess(torch.cat(parts, dim=1))  # (K, m, C)
        metrics = stacked.make_metrics().to(pred.device)
        for metric in metrics.values():  # each rank scores its own signals; the scores are gathered afterwards
            metric.distributed_available_fn = not_distributed
        scores = []
        for k in range(count):
            metrics.update(pred[k], batch["eval_targets"][k])
            scores.append(metrics.compute()[self.metric].float())
            metrics.reset()
        return torch.stack(scores)

    def adapted_scores(self, batch: dict[str, Any]) -> Tensor:
        """The batch's signals adapted from θ with the inner optimizer; their scores after each of ``eval_steps``
        inner steps, (K, E)."""
        count = len(batch["signals"])
        stacked = self.members_task(count, self.device)
        theta = {n: p.detach() for n, p in self.theta().items()}
        rates = self.inner_rates()
        rates = {n: a.item() for n, a in rates.items()} if isinstance(rates, dict) else rates
        recorded: dict[int, Tensor] = {}
        wanted = set(self.eval_steps)

        def observe(step: int, phi: dict[str, Tensor]) -> None:
            if step in wanted:
                recorded[step] = self.member_scores(stacked, phi, batch)

        with torch.inference_mode(False), torch.enable_grad():
            batch = {k: v.clone() if isinstance(v, Tensor) else v for k, v in batch.items()}  # tensors autograd may save
            losses = self.losses_at(stacked, batch)
            if self.adapt == "modulations":  # the shifts alone move, from 0; the members' weights are θ's with them
                adapt(
                    lambda s: losses(modulated(theta, s)),
                    zero_shifts(theta, self.shift_names, count),
                    max(self.eval_steps),
                    rates if isinstance(rates, dict) else {n: rates for n in self.shift_names},
                    "sgd",
                    lambda step, s: observe(step, modulated(theta, s)),
                )
            else:
                adapt(losses, expand(theta, count), max(self.eval_steps), rates, self.inner_loop_optimizer, observe)
        return torch.stack([recorded[s] for s in self.eval_steps], dim=1)

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        self._scores.append(self.adapted_scores(batch))

    def on_validation_epoch_start(self) -> None:
        self._scores = []

    def on_validation_epoch_end(self) -> None:
        scores = torch.cat(self._scores) if self._scores else torch.zeros(0, len(self.eval_steps), device=self.device)
        self._scores = []
        if self._trainer is not None and self.trainer.world_size > 1:  # every rank's test signals, in rank order
            sizes = self.all_gather(torch.tensor(len(scores), device=self.device)).tolist()
            shares = self.all_gather(F.pad(scores, (0, 0, 0, max(sizes) - len(scores))))
            scores = torch.cat([share[:size] for share, size in zip(shares, sizes)])
        if len(scores) == 0:
            return
        values = self.summarise_scores(scores, "val")
        trained = [s for s in self.eval_steps if s <= self.inner_loop_steps]  # the progress bar: after the trained steps
        shown = f"val/{self.metric}@{max(trained) if trained else self.eval_steps[0]}"
        self.log_rank_equal({k: v for k, v in values.items() if k == shown}, prog_bar=True)
        self.log_rank_equal({k: v for k, v in values.items() if k != shown})

    def summarise_scores(self, scores: Tensor, prefix: str) -> dict[str, Tensor]:
        """(signals, E) scores -> ``<prefix>/<metric>@<n>`` (mean over the signals) and ``.../std`` (ddof 0)."""
        values = {}
        for j, step in enumerate(self.eval_steps):
            column = scores[:, j].double()
            values[f"{prefix}/{self.metric}@{step}"] = column.mean().float()
            values[f"{prefix}/{self.metric}@{step}/std"] = column.std(correction=0).float()
        return values

    def test_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        self.validation_step(batch, batch_idx)

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """``test/<metric>@<n>`` and ``.../std`` over every test signal of the data, adapted from θ (in this process)."""
        dm = self.data
        scores = []
        for signals in torch.arange(dm.test_count).split(dm.signals_per_step):
            scores.append(self.adapted_scores(dm.batch(signals, "test", self.device)))
        return {k: float(v) for k, v in self.summarise_scores(torch.cat(scores), "test").items()}

    # --- setup and state ------------------------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        dm = getattr(self.trainer, "datamodule", None)
        if dm is None:
            return
        if not hasattr(dm, "batch") or not hasattr(dm, "test_count"):
            raise InputError(
                f"{type(self).__name__} meta-learns over a class of signals: its data is an inr.data.SignalSet, got {type(dm).__name__}"
            )
        if dm.ndim != self.encoder.in_dim:
            raise InputError(
                f"model.encoder expects {self.encoder.in_dim}-D coordinates but the data is {dm.ndim}-D; set in_dim: {dm.ndim}"
            )
        if dm.out_channels != self.out_channels:
            raise InputError(f"model.out_channels is {self.out_channels}: the data's signals have {dm.out_channels} channels")
        measures = self.task_cls.measure is not INRModule.measure
        if (dm.kind == "ct") != measures:
            need = "a task with its operator (inr.tasks.InverseFitting)" if dm.kind == "ct" else "a task that samples its field"
            raise InputError(f"model.task {self.task_cls.__name__}: {dm.kind} signals need {need}")
        for callback in self.trainer.callbacks:
            if type(callback).__module__.startswith("inr.callbacks") and type(callback).__name__ != "MonitoringBudget":
                raise InputError(
                    f"trainer.callbacks: {type(callback).__name__} observes one fit; a meta-learning run logs its outer loop "
                    "(val/...@n): leave it out (--trainer.callbacks null)"
                )
        if stage == "fit" and self.init_from is not None and not getattr(self, "_init_loaded", False):
            load_init(self, self.init_from)
            rates = inner_rates(self.init_from) if self.algorithm == "metasgd" else None
            same = rates is not None and inner_adapts(self.init_from) == self.adapt and set(rates) == set(self.rate_names())
            if same:  # a Meta-SGD init continues with its rates
                with torch.no_grad():
                    for name, a in zip(self.rate_names(), self.inner_log_rates):
                        a.fill_(math.log(rates[name]))
            self._init_loaded = True
        self._stacks.clear()  # the encoder's tensors may have been restored or loaded since

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        super().on_save_checkpoint(checkpoint)
        if self.adapt == "modulations":  # θ alone is not the init: its shifts' inner loop is (inr.tasks.init_steps)
            rates = self.inner_rates()
            rates = {n: a.item() for n, a in rates.items()} if isinstance(rates, dict) else dict.fromkeys(self.shift_names, rates)
            checkpoint[INNER_RATES_KEY] = rates
            checkpoint[INNER_STEPS_KEY] = self.inner_loop_steps
            checkpoint[INNER_ADAPTS_KEY] = self.adapt
        elif self.algorithm == "metasgd":  # beside the field, where a consumer of the init finds them (inner_rates)
            checkpoint[INNER_RATES_KEY] = {n: a.item() for n, a in self.inner_rates().items()}
            checkpoint[INNER_STEPS_KEY] = self.inner_loop_steps  # the steps the rates were learned for

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        super().on_load_checkpoint(checkpoint)
        self._stacks.clear()


def check_outer_rate(optimizer: OptimizerCallable) -> None:
    """Refuse an outer learning rate (Reptile's ε) that is not a finite number > 0, before anything runs."""
    try:
        built = optimizer([torch.zeros(1, requires_grad=True)])
    except (ValueError, TypeError) as exc:
        raise InputError(f"model.optimizer: {exc}") from None
    lr = built.param_groups[0].get("lr")
    lr = float(lr) if isinstance(lr, (int, float, Tensor)) else None
    if lr is not None and not (math.isfinite(lr) and lr > 0):
        raise InputError(f"model.optimizer: the outer learning rate (Reptile's ε) must be a finite number > 0, got {lr:g}")
