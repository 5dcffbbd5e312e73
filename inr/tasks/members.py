"""K independent members of one task trained side by side as one stacked model (``INRModule(members=K)``).

The members share the architecture, the data's grid, the training batches and the optimizer's settings; each
has its own initialisation (``member_seeds``), its own encoder (``member_encoders``: a Gaussian B of its own σ
and seed, a positional scale of its own) and, when the data holds one target per member, its own target. The
field of member k is f_k(v) = network_k(encoder_k(v)); the stacked modules (``inr.encoders.stacked``,
``inr.networks.stacked``) evaluate all K at once: coordinates (N, d) -> raw values (K, N, C).

The loss is L = Σ_k L_k, the sum of the members' own mean losses. ∂L/∂θ_k = ∂L_k/∂θ_k, and Adam (like SGD) acts
on each entry alone, so one Adam on the stacked parameters is exactly K independent Adams: member k follows the
trajectory of a single run with its seed, encoder and target (tests/tasks/test_members.py, float64). Member k's
initial weights are those a single model built with ``torch.manual_seed(member_seeds[k])`` draws.

What a stacked task changes, installed on the instance by ``install`` (the class's methods stay those of the
single model, so ``member(k)`` is an ordinary task of the same class):
- ``training_step``: the summed loss; ``train/loss`` (the sum) and per member ``train/loss/m{k}`` and the
  training metrics ``train/<name>/m{k}``; ``member_losses`` (K,) holds the step's losses for the NaN guard;
- validation: ``val/<name>/m{k}`` per member, with ``val/<name>/mean`` and ``val/<name>/std`` (population std,
  ddof 0) over the members, grid metrics (SSIM) included;
- ``predict`` -> (K, N, C), ``render`` -> (K, C, *shape) (chunks of ``render_chunk // K`` points, so a chunk's
  memory stays what one model's is), ``target_grid`` -> (K, C, *shape);
- ``evaluate``: each member evaluated as the single model it is (``member(k)`` on its own target), keys
  ``<key>/m{k}`` plus ``<key>/mean`` and ``<key>/std``;
- ``predict_step``: renders member ``predict_member`` (``inr-train predict --member k``).

Refused with one line: a task whose field is not network(encoder(v)) (conv decoders, radiance fields), a
network or encoder that cannot be stacked, data with a number of targets other than 1 or K, more than one
device, gradient clipping by norm (it would couple the members), and callbacks of ``inr.callbacks`` that do
not read members (``supports_members``).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from functools import partial
from typing import Any, Optional

import lightning as L
import torch
from torch import Tensor, nn

from inr.data.grid import Grid
from inr.encoders import Encoder
from inr.encoders.stacked import stack_encoders
from inr.errors import InputError
from inr.modes import eval_mode
from inr.networks import NetworkFactory
from inr.networks.stacked import member_state, stack_networks
from inr.tasks.steps import StepLoss, run_group, write_logs

# the task these functions serve; typed as the Lightning module it is, so this module does not import the base
# class that imports it (the base passes itself in where its hooks are needed)
Task = L.LightningModule

# the constructor arguments of a stacked task that a member, a single model, does not take
MEMBER_ARGS = ("members", "member_seeds", "member_encoders")


def member_key(key: str, k: int) -> str:
    """The name of member k's value of ``key``.

    Example:
        >>> member_key("val/psnr", 3)
        'val/psnr/m3'
    """
    return f"{key}/m{k}"


def summarise(per_member: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """{key: value} per member -> ``key/m{k}`` for each member, ``key/mean`` and ``key/std`` (population, ddof 0)
    over the members, for the keys every member has; tensors stay tensors, numbers stay floats.

    Example:
        >>> summarise([{"psnr": 20.0}, {"psnr": 24.0}])
        {'psnr/m0': 20.0, 'psnr/m1': 24.0, 'psnr/mean': 22.0, 'psnr/std': 2.0}
    """
    out: dict[str, Any] = {}
    keys = [key for key in per_member[0] if all(key in values for values in per_member)]
    for key in keys:
        values = [values[key] for values in per_member]
        for k, value in enumerate(values):
            out[member_key(key, k)] = value
        if all(isinstance(v, Tensor) for v in values):
            stacked = torch.stack([v.detach().to(torch.float64) for v in values])
            out[f"{key}/mean"], out[f"{key}/std"] = stacked.mean(), stacked.std(correction=0)
        else:
            array = torch.tensor([float(v) for v in values], dtype=torch.float64)
            out[f"{key}/mean"], out[f"{key}/std"] = float(array.mean()), float(array.std(correction=0))
    return out


def resolve_members(
    members: Optional[int], member_seeds: Optional[Sequence[int]], member_encoders: Optional[Sequence[Encoder]]
) -> tuple[int, list[int]]:
    """K and the members' seeds (default 0..K−1), from whichever of the three settings are given, checked to agree.

    Example:
        >>> resolve_members(None, None, [object()] * 3), resolve_members(2, [7, 9], None)
        ((3, [0, 1, 2]), (2, [7, 9]))
    """
    counts = {
        name: n
        for name, n in (
            ("members", members),
            ("member_seeds", None if member_seeds is None else len(member_seeds)),
            ("member_encoders", None if member_encoders is None else len(member_encoders)),
        )
        if n is not None
    }
    if len(set(counts.values())) > 1:
        given = ", ".join(f"{name} {n}" for name, n in counts.items())
        raise InputError(f"model.{next(iter(counts))}: the members' settings disagree on their number ({given})")
    count = next(iter(counts.values()))
    if count < 1:
        raise InputError(f"model.members must be ≥ 1, got {count}")
    seeds = list(member_seeds) if member_seeds is not None else list(range(count))
    return count, [int(s) for s in seeds]


def build_members(
    encoders: Sequence[Encoder], seeds: Sequence[int], factory: NetworkFactory, out_channels: int
) -> tuple[nn.Module, nn.Module]:
    """The stacked encoder and network of K members; member k's network is ``factory(in, out)`` drawn right after
    ``torch.manual_seed(seeds[k])``, as a single model built with that seed draws it. The global random state is
    left as it was."""
    networks = []
    for encoder, seed in zip(encoders, seeds):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            networks.append(factory(encoder.out_dim, out_channels))
    return stack_encoders(encoders), stack_networks(networks)


def install(
    task: Task,
    base: type,
    encoder: Encoder,
    factory: NetworkFactory,
    out_channels: int,
    members: int,
    member_seeds: Sequence[int],
    member_encoders: Optional[Sequence[Encoder]],
) -> None:
    """Make ``task`` a stacked task of ``members`` members (``resolve_members``): its encoder and network,
    per-member metrics, and the methods of the module docstring bound to this instance. ``base`` is the task
    base class (``INRModule``, passed in by it: this module sits below it), whose hooks the stacked ones call."""
    INRModule = base
    task.members_base = INRModule
    if type(task).field is not INRModule.field or type(task).forward is not INRModule.forward:
        raise InputError(f"model.members: {type(task).__name__}'s field is not network(encoder(v)); it cannot be stacked")
    count, seeds = members, list(member_seeds)
    encoders = list(member_encoders) if member_encoders is not None else [encoder] * count
    task.members, task.member_seeds = count, seeds
    task.encoder, task.network = build_members(encoders, seeds, factory, out_channels)
    # what member(k) rebuilds a single model from (kept out of nn.Module's registry: not part of the state)
    object.__setattr__(task, "_member_parts", (list(encoders), factory))
    task.member_losses = None  # (K,) the latest step's losses, read by the NaN guard
    task.predict_member = None  # the member predict_step renders
    task.member_train_metrics = nn.ModuleList(task.make_train_metrics().clone(prefix="train/") for _ in range(count))
    task.member_val_metrics = nn.ModuleList(task.make_metrics().clone(prefix="val/") for _ in range(count))
    for name, method in METHODS.items():  # partials of module functions: the task pickles and copies with them
        object.__setattr__(task, name, partial(method, task))


# --- targets ----------------------------------------------------------------------------------------------
def data_targets(task: Task) -> int:
    """How many targets the attached data holds: 1 (shared by every member) or K (one per member)."""
    return int(getattr(task.data, "targets", 1))


def member_target(values: Tensor, k: int, targets: int, channels: int) -> Tensor:
    """Member k's columns of a batch's values (N, T·C): the shared target when T = 1."""
    return values if targets == 1 else values[:, k * channels : (k + 1) * channels]


def member_target_grid(task: Task, k: int, index: Optional[Tensor] = None, shape: Optional[tuple] = None) -> Tensor:
    """Member k's target as a grid (C, *shape) (the sub-grid of ``index``/``shape`` when given)."""
    dm = task.data
    grid = dm.values_grid(index, shape)  # (T·C, *shape)
    return grid.view(data_targets(task), task.out_channels, *grid.shape[1:])[0 if data_targets(task) == 1 else k]


# --- the methods installed on a stacked task ---------------------------------------------------------------
def setup(self: Task, stage: str) -> None:
    type(self).setup(self, stage)
    dm = getattr(self.trainer, "datamodule", None)
    if dm is None:
        return
    targets = int(getattr(dm, "targets", 1))
    if targets not in (1, self.members):
        raise InputError(
            f"{dm.describe()}: the data holds {targets} targets and model.members is {self.members}; give one target, or one per member"
        )
    trainer = self.trainer
    if trainer.world_size > 1:
        raise InputError(f"model.members: the {self.members} members train on one device; set trainer.devices 1")
    if trainer.gradient_clip_val and trainer.gradient_clip_algorithm != "value":
        raise InputError(
            "trainer.gradient_clip_val: clipping by the norm of all parameters couples the members; clip by value "
            "(trainer.gradient_clip_algorithm value) or not at all"
        )
    for callback in trainer.callbacks:
        if type(callback).__module__.startswith("inr.callbacks") and not getattr(callback, "supports_members", False):
            raise InputError(
                f"trainer.callbacks: {type(callback).__name__} does not read a model with members; leave it out "
                "(--trainer.callbacks null), or export a member and run it there"
            )


def field_and_measurement(self: Task, batch: dict[str, Any]) -> tuple[Tensor, Tensor]:
    """The members' field (K, N, C) and their raw predictions of the batch's values (K, ...)."""
    field = self.field(batch)  # (K, N, C)
    if type(self).measure is self.members_base.measure:
        return field, field
    return field, torch.stack([self.measure(member, batch) for member in field])  # A applied to each member


def member_losses(self: Task, raw: Tensor, values: Tensor, targets: int, channels: int) -> Tensor:
    """L_k of each member, (K,): the task's own loss mapped over the members' axis by ``torch.vmap``; target k
    is the k-th block of C columns of the values (N, K·C) -> (N, K, C), or the shared target. A loss vmap cannot
    map (one that reads a value on the host, say) is called once per member instead, from then on."""
    if getattr(self, "_loss_maps", True):
        per_member = values.view(values.shape[0], targets, channels) if targets > 1 else values
        try:
            return torch.vmap(self.loss, in_dims=(0, 1 if targets > 1 else None))(raw, per_member)
        except RuntimeError:
            self._loss_maps = False
    return torch.stack([self.loss(raw[k], member_target(values, k, targets, channels)) for k in range(len(raw))])


def training_step(self: Task, batch: dict[str, Any], batch_idx: int) -> Optional[Tensor]:
    if "group" in batch:  # inner_steps K > 1 (inr.tasks.steps), with the hooks below
        return run_group(self, batch["group"])
    values, channels, targets = batch["values"], self.out_channels, data_targets(self)
    field, raw = field_and_measurement(self, batch)
    losses = member_losses(self, raw, values, targets, channels)  # (K,)
    self.member_losses = losses.detach()
    loss = losses.sum()
    n = len(batch["coords"])
    pred = self.postprocess_measurement(raw.detach())
    logs = self.logs_this_step()
    if logs:
        self.log("train/loss", loss, prog_bar=True, batch_size=n)
        self.log_dict({member_key("train/loss", k): value for k, value in enumerate(losses.detach())}, batch_size=n)
    for k, metrics in enumerate(self.member_train_metrics):
        target = member_target(values, k, targets, channels)
        if logs:
            step_values = metrics(pred[k], target)
            self.log_dict({member_key(key, k): v for key, v in step_values.items()}, batch_size=n)
        else:
            metrics.update(pred[k], target)
    if batch["full_batch"]:
        grid_values = pred if raw is field else self.postprocess(field.detach())  # (K, N, C)
        self.last_train_grid_prediction = grid_values.transpose(1, 2).reshape(
            self.members, channels, *self.data.train_shape
        )  # (K, N, C) -> (K, C, *train_shape)
    return loss


# --- the steps of a group (inner_steps > 1; inr.tasks.steps) -------------------------------------------------
def step_loss(self: Task, batch: dict[str, Any]) -> StepLoss:
    """L = Σ_k L_k back-propagated; the guard reads the members' losses (K,)."""
    field, raw = field_and_measurement(self, batch)
    losses = member_losses(self, raw, batch["values"], data_targets(self), self.out_channels)  # (K,)
    self.member_losses = losses.detach()
    return StepLoss(losses.sum(), losses, raw, field)


def group_log_values(self: Task, batch: dict[str, Any], out: StepLoss) -> dict[str, Tensor]:
    """``train/loss`` (the sum), and per member its loss and training metrics of the batch (the states take it in)."""
    values, channels, targets = batch["values"], self.out_channels, data_targets(self)
    logged = {"train/loss": out.loss.detach().clone()}  # copies: a CUDA graph's next replay rewrites its outputs
    logged.update({member_key("train/loss", k): value for k, value in enumerate(out.watched.detach().clone())})
    pred = self.postprocess_measurement(out.raw.detach())  # (K, N, C)
    for k, metrics in enumerate(self.member_train_metrics):
        step_values = metrics(pred[k], member_target(values, k, targets, channels))
        logged.update({member_key(key, k): value for key, value in step_values.items()})
    return logged


def update_group_metrics(self: Task, raws: list[Tensor], targets_list: list[Tensor]) -> None:
    pred = self.postprocess_measurement(torch.cat(raws, dim=1))  # K × (M, N_i, C) -> (M, Σ N_i, C)
    values, targets = torch.cat(targets_list), data_targets(self)
    for k, metrics in enumerate(self.member_train_metrics):
        if len(metrics):
            metrics.update(pred[k], member_target(values, k, targets, self.out_channels))


def record_grid_prediction(self: Task, batch: dict[str, Any], out: StepLoss) -> None:
    if batch["full_batch"]:
        grid_values = (
            self.postprocess_measurement(out.raw.detach()) if out.raw is out.field else self.postprocess(out.field.detach())
        )
        self.last_train_grid_prediction = grid_values.transpose(1, 2).reshape(
            self.members, self.out_channels, *self.data.train_shape
        )  # (K, N, C) -> (K, C, *train_shape)


def log_group(self: Task, logged: list) -> None:
    write_logs(self, logged)


def has_ground_truth(self: Task) -> bool:
    return bool(getattr(self.data, "has_ground_truth", True))


def validation_step(self: Task, batch: dict[str, Any], batch_idx: int) -> None:
    if not has_ground_truth(self):
        return
    pred = self.predict(batch["coords"])  # (K, N, C)
    targets = data_targets(self)
    for k, metrics in enumerate(self.member_val_metrics):
        metrics.update(pred[k], member_target(batch["values"], k, targets, self.out_channels))
    self._heldout_chunks.append(pred)


def on_validation_epoch_end(self: Task) -> None:
    INRModule = self.members_base
    chunks, self._heldout_chunks = self._heldout_chunks, []
    if not has_ground_truth(self):
        return
    per_member = []
    for metrics in self.member_val_metrics:
        per_member.append(dict(metrics.compute()))
        metrics.reset()
    dm = self.data
    if type(self).on_heldout_grid is not INRModule.on_heldout_grid and chunks:
        pred = torch.cat(chunks, dim=1)  # (K, N, C)
        if pred.shape[1] == len(dm.test_index):
            for k in range(self.members):
                pred_grid = pred[k].T.reshape(self.out_channels, *dm.test_shape)
                target_grid = member_target_grid(self, k, dm.test_index, dm.test_shape).to(pred.device)
                per_member[k].update({f"val/{name}": v for name, v in self.on_heldout_grid(pred_grid, target_grid).items()})
    values = summarise(per_member)
    self.log_rank_equal({k: v for k, v in values.items() if k.endswith("/mean")}, prog_bar=True)
    self.log_rank_equal({k: v for k, v in values.items() if not k.endswith("/mean")})


@torch.no_grad()
def predict(self: Task, coords: Tensor, chunk: Optional[int] = None) -> Tensor:
    """Values f_k(v) of every member at coordinates (N, d) -> (K, N, C), in chunks of ``chunk`` // K rows."""
    chunk = max(1, (chunk or self.render_chunk) // self.members)
    out = [self.postprocess(self(c)) for c in coords.split(chunk)]
    return torch.cat(out, dim=1) if out else coords.new_zeros(self.members, 0, self.out_channels)


@torch.no_grad()
def render(self: Task, shape: Optional[Sequence[int]] = None, chunk: Optional[int] = None) -> Tensor:
    """Every member's field on a regular grid -> (K, C, *shape), ``chunk`` // K coordinates per pass."""
    shape = tuple(shape) if shape is not None else self.grid_shape
    grid, chunk = Grid(shape), chunk or self.render_chunk
    if chunk < 1:
        raise InputError(f"render chunk must be ≥ 1 coordinates, got {chunk}")
    chunk = max(1, chunk // self.members)
    out = torch.empty(self.members, grid.numel, self.out_channels, device=self.device)
    for start in range(0, grid.numel, chunk):
        index = torch.arange(start, min(start + chunk, grid.numel), device=self.device)
        out[:, start : start + len(index)] = self.postprocess(self(grid.coords(index)))
    return out.transpose(1, 2).reshape(self.members, self.out_channels, *shape)  # (K, N, C) -> (K, C, *shape)


def target_grid(self: Task) -> Tensor:
    """Every member's target on the full grid, (K, C, *shape) (a view when the target is shared)."""
    grid = self.data.values_grid().to(self.device)  # (T·C, *shape)
    grid = grid.view(data_targets(self), self.out_channels, *grid.shape[1:])
    return grid.expand(self.members, *grid.shape[1:]) if grid.shape[0] == 1 else grid


def predict_step(self: Task, batch: dict[str, Any], batch_idx: int) -> Tensor:
    """Member ``predict_member``'s field on the requested grid, (C, *shape)."""
    k = self.predict_member
    if k is None:
        raise InputError(f"predict: the model holds {self.members} members; choose one with --member k (0..{self.members - 1})")
    with eval_mode(self):
        return member_module(self, k).render(batch["shape"])


def member_module(self: Task, k: int) -> Task:
    """Member k as an ordinary single-model task of the same class: its encoder, its weights, the same settings;
    on this task's device, in its mode, attached to the stack's data with its own target (when the stack has
    data). Independent of the stack (its tensors are copies)."""
    if not 0 <= k < self.members:
        raise InputError(f"member {k}: the model holds members 0..{self.members - 1}")
    encoders, factory = self._member_parts
    accepted = constructor_arguments(type(self))
    parts = ("encoder", "network", "optimizer", "scheduler")  # given below; the hyper-parameters may hold their configs
    settings = {key: value for key, value in self.hparams.items() if key in accepted and key not in (*MEMBER_ARGS, *parts)}
    settings["compile"] = False
    with torch.random.fork_rng(devices=[]):  # its initial draw is replaced at once; the global state stays
        single = type(self)(
            encoder=copy.deepcopy(encoders[k]),
            network=factory,
            optimizer=self.optimizer_factory,
            scheduler=self.scheduler_factory,
            **settings,
        )
    dtype = next(self.network.parameters()).dtype
    single.to(device=self.device, dtype=dtype)
    state = {key: value for key, value in self.state_dict().items() if key.startswith(("encoder.", "network."))}
    single.load_state_dict(member_state(state, k))
    dm = self._attached_data
    if dm is None and self._trainer is not None:
        dm = getattr(self.trainer, "datamodule", None)
    if dm is not None:  # the stack's data, with member k's target
        single.attach_data(dm.member_data(k) if getattr(dm, "targets", 1) > 1 else dm)
    return single.train(self.training)


def constructor_arguments(cls: type) -> set[str]:
    """The keyword arguments ``cls(...)`` takes, following ``**kwargs`` up to the base classes that receive them
    (the saved hyper-parameters of a CLI run also hold the CLI's own entries, which a constructor refuses)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        parameters = inspect.signature(klass.__init__).parameters.values()
        names |= {p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"}
        if not any(p.kind == p.VAR_KEYWORD for p in parameters):
            break
    return names


def evaluate_members(self: Task) -> list[dict[str, float]]:
    """Each member's ``evaluate()`` as the single model it is, on its own target: one dict per member."""
    self.data  # noqa: B018 - refuses, with its message, a stack without data
    return [member_module(self, k).evaluate() for k in range(self.members)]


def evaluate(self: Task) -> dict[str, float]:
    """``<key>/m{k}`` of every member's ``evaluate()``, with ``<key>/mean`` and ``<key>/std`` over the members."""
    return summarise(evaluate_members(self))


def member(self: Task, k: int) -> Task:
    return member_module(self, k)


METHODS = {
    "setup": setup,
    "training_step": training_step,
    "step_loss": step_loss,
    "group_log_values": group_log_values,
    "update_group_metrics": update_group_metrics,
    "record_grid_prediction": record_grid_prediction,
    "log_group": log_group,
    "validation_step": validation_step,
    "on_validation_epoch_end": on_validation_epoch_end,
    "predict": predict,
    "render": render,
    "target_grid": target_grid,
    "predict_step": predict_step,
    "evaluate": evaluate,
    "evaluate_members": evaluate_members,
    "member": member,
}
