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

A stacked task is an ordinary task of its class (``ImageFitting``, ...) whose ``encoder`` and ``network`` are the
stacked modules and whose ``stack`` is a ``Members``; the task's hooks in ``HOOKS`` begin by handing a stacked
task to the ``Members`` method of the same name and arguments (``if self.stack is not None: return
self.stack.<hook>(...)``), and its other hooks (``field``, ``measure``, ``loss``, ``postprocess``,
``on_heldout_grid``, ...) are the single model's, which ``Members`` calls. A task class that overrides a hook of
``HOOKS`` declares ``stackable = True`` once its overrides hand over (``ImageFitting.evaluate``); a class that
overrides one without declaring it is refused (``refusal``), as is one whose field is not network(encoder(v)).

``Members`` (``task.stack``), the interface:
- ``count`` (K), ``seeds`` (K ints), ``encoders`` (member k's single encoder, the template ``member(k)`` is
  rebuilt from; its weights live in the stack), ``factory`` (the network factory), ``task`` (the stacked task);
- ``losses``: (K,) the latest training step's losses L_k (detached), read by the non-finite guard;
- ``train_metrics``, ``val_metrics``: one ``MetricCollection`` per member (``train/...``, ``val/...``);
- ``targets``: how many targets the attached data holds (1: shared by every member; K: one each);
  ``target(values, k)``: member k's columns of a batch's values; ``target_grid_of(k)``: its target as a grid;
- ``field_and_measurement(batch)`` -> field (K, N, C), raw prediction (K, ...); ``member_losses(raw, values)``
  -> (K,) (the task's ``loss`` under ``torch.vmap``, or member by member when vmap cannot map it);
- ``member(k)``: member k as an ordinary single-model task of the same class (copies, attached to its target);
  ``evaluate_members()``: each member's ``evaluate()`` as that single model, one dict per member;
- ``check_fit(trainer, data)``: the refusals of ``setup``; the hooks of ``HOOKS`` below.

What the hooks do for a stacked task:
- ``training_step`` and the step hooks of ``inr.tasks.engine.SteppedTask`` (``step_loss``, ``group_log_values``,
  ``update_group_metrics``, ``record_grid_prediction``, ``log_group``): the summed loss; ``train/loss`` (the
  sum) and per member ``train/loss/m{k}`` and the training metrics ``train/<name>/m{k}``;
- ``validation_step``, ``on_validation_epoch_end``: ``val/<name>/m{k}`` per member, with ``val/<name>/mean``
  and ``val/<name>/std`` (population std, ddof 0) over the members, grid metrics (SSIM) included;
- ``predict`` -> (K, N, C), ``render`` -> (K, C, *shape) (chunks of ``render_chunk // K`` points, so a chunk's
  memory stays what one model's is), ``target_grid`` -> (K, C, *shape);
- ``evaluate``: each member evaluated as the single model it is (``member(k)`` on its own target), keys
  ``<key>/m{k}`` plus ``<key>/mean`` and ``<key>/std``;
- ``predict_step``: renders member ``task.predict_member`` (``inr-train predict --member k``).

Over R > 1 processes (DDP, one node or several) the members are sharded: rank r trains its contiguous share of
them (``shard``: ⌈K/R⌉ or ⌊K/R⌋ members, the larger shares first), every rank sees all of the data (the data
module neither shards the full batch nor draws per-rank random batches for a sharded stack:
``GridDataModule.rank_and_world_size``), and each rank computes only its members' field, through their slices of
the stacked weights. Its loss is R·Σ_{k∈r} L_k: DDP averages the ranks' gradients, so member k's gradient is
R·g_k / R = g_k (exactly for R a power of two, to rounding otherwise), and every rank holds every member's weights
and optimizer state, equal on all ranks, so the checkpoint rank 0 writes holds all K members. The members' losses,
logged metrics, validation scores and the field on the training grid are gathered from the ranks in member order
(``gather``), so every rank logs, guards and summarises all K. 2 ranks × K/2 members end bit for bit as 1 rank × K
(tests/run/test_multinode.py). The gradients of all K members are still all-reduced every step (DDP's way with
any model): the compute per rank falls with R, the communication does not.

Refused with one line: a task whose field is not network(encoder(v)) (conv decoders, radiance fields) or that
overrides a hook of ``HOOKS`` for one model only (shapes), a network or encoder that cannot be stacked, data with
a number of targets other than 1 or K, fewer members than processes, ``compile`` over several processes, gradient
clipping by norm (it would couple the members), and callbacks of ``inr.callbacks`` that do not read members
(``supports_members``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Optional

import lightning as L
import torch
from torch import Tensor, nn

from inr.data.grid import Grid
from inr.encoders import Encoder
from inr.encoders.stacked import stack_encoders
from inr.errors import InputError
from inr.metrics.local import not_distributed
from inr.modes import eval_mode
from inr.networks import NetworkFactory
from inr.networks.stacked import member_state, stack_networks
from inr.tasks.engine import LoggedStep, StepLoss
from inr.tasks.parts import init_arguments
from inr.tasks.steps import run_group, write_logs

# the constructor arguments of a stacked task that a member, a single model, does not take
MEMBER_ARGS = ("members", "member_seeds", "member_encoders")

# the task's hooks that a stacked task hands to ``Members`` (same names, same arguments)
HOOKS = (
    "training_step",
    "step_loss",
    "group_log_values",
    "update_group_metrics",
    "record_grid_prediction",
    "log_group",
    "validation_step",
    "on_validation_epoch_end",
    "predict",
    "render",
    "target_grid",
    "predict_step",
    "evaluate",
)


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


def refusal(cls: type, base: type) -> Optional[str]:
    """Why a task of class ``cls`` cannot be stacked, or None when it can. ``base`` is ``INRModule`` (passed in by
    it: this module sits below it). A hook of ``HOOKS`` that ``cls`` takes from a class below ``base`` must come
    from one that declares ``stackable = True`` (its overrides hand a stacked task to ``Members``)."""
    if cls.field is not base.field or cls.forward is not base.forward:
        return f"{cls.__name__}'s field is not network(encoder(v))"
    single = []
    for name in HOOKS:
        owner = next(klass for klass in cls.__mro__ if name in vars(klass))
        if owner is not base and not vars(owner).get("stackable", False):
            single.append(f"{owner.__name__}.{name}")
    if single:
        return f"{', '.join(single)} {'is' if len(single) == 1 else 'are'} written for one model"
    return None


class Members(nn.Module):
    """The members of a stacked task (``task.stack``): their settings, per-member metrics and the stacked versions
    of the task's ``HOOKS`` (see the module docstring). A module so that the metrics follow the task's device
    and mode; it holds no weights (the stacked encoder and network are the task's) and no checkpoint entries.

    Args:
        task: the stacked task, whose single-model hooks (``field``, ``loss``, ...) these methods call.
        base: ``INRModule``, to tell the task's own hooks from the base's.
        encoders: member k's encoder (one width for all).
        seeds: member k's network is drawn after ``torch.manual_seed(seeds[k])``.
        factory: the network factory ``(in_dim, out_dim) -> nn.Module`` of one member.
    """

    def __init__(
        self, task: L.LightningModule, base: type, encoders: Sequence[Encoder], seeds: Sequence[int], factory: NetworkFactory
    ) -> None:
        super().__init__()
        why = refusal(type(task), base)
        if why is not None:
            raise InputError(f"model.members: {why}; it cannot be stacked")
        object.__setattr__(self, "task", task)  # a back-reference, kept out of nn.Module's registry of children
        self.count, self.seeds = len(seeds), [int(s) for s in seeds]
        self.encoders, self.factory = list(encoders), factory  # what member(k) rebuilds a single model from
        self.losses: Optional[Tensor] = None  # (K,) the latest step's losses, read by the non-finite guard
        self.loss_maps = True  # whether the task's loss maps under torch.vmap (tried at the first step)
        # the task's measurement and held-out grid metrics, when it has its own
        self.measures = type(task).measure is not base.measure
        self.grid_metrics = type(task).on_heldout_grid is not base.on_heldout_grid
        self.train_metrics = nn.ModuleList(task.make_train_metrics().clone(prefix="train/") for _ in range(self.count))
        self.val_metrics = nn.ModuleList(task.make_metrics().clone(prefix="val/") for _ in range(self.count))
        # over R > 1 processes: (first, end) of this rank's members and every rank's count (None: one process)
        self.shard: Optional[tuple[int, int]] = None
        self.shares: list[int] = [self.count]

    # --- sharding over processes ------------------------------------------------------------------------------
    @property
    def mine(self) -> range:
        """The members this process trains: all of them, or its share over several processes."""
        return range(*self.shard) if self.shard is not None else range(self.count)

    def shard_over(self, rank: int, ranks: int) -> None:
        """Rank ``rank`` of ``ranks`` trains its contiguous share of the members (the larger shares first); their
        metrics are this rank's alone (never synchronised: another rank holds no state of them)."""
        if ranks == 1:
            self.shard, self.shares = None, [self.count]
            return
        shares = torch.tensor_split(torch.arange(self.count), ranks)
        self.shares = [len(share) for share in shares]
        self.shard = (int(shares[rank][0]), int(shares[rank][-1]) + 1)
        for collection in (*self.train_metrics, *self.val_metrics):
            for metric in collection.values():
                metric.sync_on_compute = False
                metric.distributed_available_fn = not_distributed  # a compute already pending syncs nothing either

    def gather(self, values: Tensor) -> Tensor:
        """This rank's members' ``values`` (K_r, ...) -> every member's (K, ...), in member order (a collective:
        every rank calls it at the same point); ``values`` itself on one process."""
        if self.shard is None:
            return values
        largest = self.shares[0]
        padded = torch.cat([values, values.new_zeros(largest - len(values), *values.shape[1:])])  # (max K_r, ...)
        every = self.task.all_gather(padded)  # (R, max K_r, ...)
        return torch.cat([share[:size] for share, size in zip(every, self.shares)])

    def gather_values(self, per_member: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Dicts of scalar values (tensors or numbers), one per member of this rank (same keys) -> one per member of
        the stack, as float64 tensors (exact for float32 and Python floats; a value None, a metric the grid is too small for, is left out on every rank)."""
        if self.shard is None:
            return per_member
        keys = sorted(key for key, value in per_member[0].items() if value is not None) if per_member else []
        as_tensor = lambda value: torch.as_tensor(value, dtype=torch.float64, device=self.task.device).detach().reshape(())
        local = torch.stack([torch.stack([as_tensor(values[key]) for key in keys]) for values in per_member])
        every = self.gather(local)  # (K, keys)
        return [dict(zip(keys, row)) for row in every]

    def shard_field(self, coords: Tensor, full_batch: bool = False) -> Tensor:
        """This rank's members' raw field at ``coords`` (N, d) -> (K_r, N, C): the stack's encoding (cached for a
        fixed full batch) cut to their rows, through their slices of the stacked weights (views: the gradients
        reach the stack's parameters)."""
        task, (first, end) = self.task, self.shard
        features = task._encode_training_batch(coords, full_batch)[first:end]  # (K, N, F) -> (K_r, N, F)
        weights = {name: value[first:end] for name, value in task.network.named_parameters()}
        return torch.func.functional_call(task.network, weights, (features,))

    # --- targets ------------------------------------------------------------------------------------------
    @property
    def targets(self) -> int:
        """How many targets the attached data holds: 1 (shared by every member) or K (one per member)."""
        return int(getattr(self.task.data, "targets", 1))

    def target(self, values: Tensor, k: int, targets: Optional[int] = None) -> Tensor:
        """Member k's columns of a batch's values (N, T·C), T = ``targets`` (default: the data's): the shared target
        when T = 1."""
        channels, targets = self.task.out_channels, self.targets if targets is None else targets
        return values if targets == 1 else values[:, k * channels : (k + 1) * channels]

    def target_grid_of(self, k: int, index: Optional[Tensor] = None, shape: Optional[tuple] = None) -> Tensor:
        """Member k's target as a grid (C, *shape) (the sub-grid of ``index``/``shape`` when given)."""
        grid = self.task.data.values_grid(index, shape)  # (T·C, *shape)
        targets = self.targets
        return grid.view(targets, self.task.out_channels, *grid.shape[1:])[0 if targets == 1 else k]

    def check_fit(self, trainer: L.Trainer, data: Any) -> None:
        """Refuses data with a number of targets other than 1 or K, fewer members than processes, clipping by norm and
        callbacks that do not read members, and shards the members over the processes (``INRModule.setup`` calls
        it)."""
        targets = int(getattr(data, "targets", 1))
        if targets not in (1, self.count):
            raise InputError(
                f"{data.describe()}: the data holds {targets} targets and model.members is {self.count}; give one target, or one per member"
            )
        ranks = trainer.world_size
        if ranks > self.count:
            raise InputError(
                f"model.members {self.count} over {ranks} processes: each process trains at least one member; give "
                f"model.members ≥ {ranks}, or fewer processes"
            )
        if ranks > 1 and self.task.hparams.get("compile"):
            raise InputError("model.compile: members sharded over several processes run uncompiled; leave compile out")
        self.shard_over(trainer.global_rank, ranks)
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

    # --- training ------------------------------------------------------------------------------------------
    def field_and_measurement(self, batch: dict[str, Any]) -> tuple[Tensor, Tensor]:
        """This process's members' field (K_r, N, C) and raw predictions of the batch's values (K_r, ...); K_r = K on
        one process."""
        task = self.task
        field = task.field(batch) if self.shard is None else self.shard_field(batch["coords"], batch.get("full_batch", False))
        if not self.measures:
            return field, field
        return field, torch.stack([task.measure(member, batch) for member in field])  # A applied to each member

    def member_losses(self, raw: Tensor, values: Tensor) -> Tensor:
        """L_k of this process's members, (K_r,): the task's own loss mapped over the members' axis by ``torch.vmap``;
        target k is the k-th block of C columns of the values (N, K·C) -> (N, K, C), or the shared target. A loss
        vmap cannot map (one that reads a value on the host, say) is called once per member instead, from then on."""
        loss, targets, mine = self.task.loss, self.targets, self.mine
        if self.loss_maps:
            per_member = values
            if targets > 1:  # (N, K·C) -> (N, K_r, C)
                per_member = values.view(values.shape[0], targets, self.task.out_channels)[:, mine.start : mine.stop]
            try:
                return torch.vmap(loss, in_dims=(0, 1 if targets > 1 else None))(raw, per_member)
            except RuntimeError:
                self.loss_maps = False
        return torch.stack([loss(raw[i], self.target(values, k, targets)) for i, k in enumerate(mine)])

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Optional[Tensor]:
        task = self.task
        if "group" in batch:  # inner_steps K > 1 (inr.tasks.steps), with the step hooks below
            return run_group(task, batch["group"])
        out = self.step_loss(batch)
        n = len(batch["coords"])
        if task.logs_this_step():
            logged = self.group_log_values(batch, out)
            task.log("train/loss", logged.pop("train/loss"), prog_bar=True, batch_size=n)
            task.log_dict(logged, batch_size=n)
        else:
            self.update_group_metrics([out.raw.detach()], [batch["values"]])
        self.record_grid_prediction(batch, out)
        return out.loss

    def record_field(self, values: Tensor) -> None:
        """``last_train_grid_prediction`` from the members' values on the training grid: (K, N, C) -> (K, C, *shape)."""
        task = self.task
        task.last_train_grid_prediction = values.transpose(1, 2).reshape(self.count, task.out_channels, *task.data.train_shape)

    # --- the steps of a group (inner_steps > 1; inr.tasks.steps) ---------------------------------------------
    def step_loss(self, batch: dict[str, Any]) -> StepLoss:
        """L = Σ_k L_k back-propagated (R·Σ_{k∈r} L_k on rank r of R: DDP averages the ranks' gradients); the guard
        reads every member's loss (K,), gathered from the ranks."""
        field, raw = self.field_and_measurement(batch)
        local = self.member_losses(raw, batch["values"])  # (K_r,)
        if self.shard is None:
            self.losses = local.detach()
            return StepLoss(local.sum(), local, raw, field)
        self.losses = self.gather(local.detach())  # (K,)
        return StepLoss(local.sum() * len(self.shares), self.losses, raw, field)

    def group_log_values(self, batch: dict[str, Any], out: StepLoss) -> dict[str, Tensor]:
        """``train/loss`` (the sum), and per member its loss and training metrics of the batch (the states take it in)."""
        values, targets = batch["values"], self.targets
        losses = out.watched.detach().clone()  # (K,); copies: a CUDA graph's next replay rewrites its outputs
        logged = {"train/loss": losses.sum()}
        logged.update({member_key("train/loss", k): value for k, value in enumerate(losses)})
        pred = self.task.postprocess_measurement(out.raw.detach())  # (K_r, N, C)
        step_values = [dict(self.train_metrics[k](pred[i], self.target(values, k, targets))) for i, k in enumerate(self.mine)]
        for k, member_values in enumerate(self.gather_values(step_values)):
            logged.update({member_key(key, k): value for key, value in member_values.items()})
        return logged

    def update_group_metrics(self, raws: list[Tensor], targets: list[Tensor]) -> None:
        """Each member's training metrics take the group's other steps in, in one update."""
        pred = self.task.postprocess_measurement(torch.cat(raws, dim=1))  # K_r × (M, N_i, C) -> (K_r, Σ N_i, C)
        values, count = torch.cat(targets), self.targets
        for i, k in enumerate(self.mine):
            metrics = self.train_metrics[k]
            if len(metrics):
                metrics.update(pred[i], self.target(values, k, count))

    def record_grid_prediction(self, batch: dict[str, Any], out: StepLoss) -> None:
        if batch["full_batch"]:
            task = self.task
            raw = out.raw.detach()
            field = task.postprocess_measurement(raw) if out.raw is out.field else task.postprocess(out.field.detach())
            self.record_field(self.gather(field))  # (K_r, N, C) -> (K, N, C)

    def log_group(self, logged: list[LoggedStep]) -> None:
        """The logging steps' values (the members' metrics are logged per step, with no epoch values)."""
        write_logs(self.task, logged)

    # --- validation --------------------------------------------------------------------------------------------
    def has_ground_truth(self) -> bool:
        return bool(getattr(self.task.data, "has_ground_truth", True))

    @torch.no_grad()
    def predict_mine(self, coords: Tensor) -> Tensor:
        """This process's members' values at coordinates (N, d) -> (K_r, N, C) (all K on one process)."""
        task = self.task
        if self.shard is None:
            return task.predict(coords)
        chunk = max(1, task.render_chunk // len(self.mine))
        return torch.cat([task.postprocess(self.shard_field(c)) for c in coords.split(chunk)], dim=1)

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        if not self.has_ground_truth():
            return
        task = self.task
        pred = self.predict_mine(batch["coords"])  # (K_r, N, C)
        targets = self.targets
        for i, k in enumerate(self.mine):
            self.val_metrics[k].update(pred[i], self.target(batch["values"], k, targets))
        task._heldout_chunks.append(pred)

    def on_validation_epoch_end(self) -> None:
        task = self.task
        chunks, task._heldout_chunks = task._heldout_chunks, []
        if not self.has_ground_truth():
            return
        per_member = []
        for k in self.mine:
            metrics = self.val_metrics[k]
            per_member.append(dict(metrics.compute()))
            metrics.reset()
        dm = task.data
        if self.grid_metrics and chunks:
            pred = torch.cat(chunks, dim=1)  # (K_r, N, C)
            if pred.shape[1] == len(dm.test_index):
                for i, k in enumerate(self.mine):
                    pred_grid = pred[i].T.reshape(task.out_channels, *dm.test_shape)
                    target_grid = self.target_grid_of(k, dm.test_index, dm.test_shape).to(pred.device)
                    per_member[i].update({f"val/{name}": v for name, v in task.on_heldout_grid(pred_grid, target_grid).items()})
        values = summarise(self.gather_values(per_member))
        task.log_rank_equal({k: v for k, v in values.items() if k.endswith("/mean")}, prog_bar=True)
        task.log_rank_equal({k: v for k, v in values.items() if not k.endswith("/mean")})

    # --- the field -------------------------------------------------------------------------------------------
    @torch.no_grad()
    def predict(self, coords: Tensor, chunk: Optional[int] = None) -> Tensor:
        """Values f_k(v) of every member at coordinates (N, d) -> (K, N, C), in chunks of ``chunk`` // K rows."""
        task = self.task
        chunk = max(1, (chunk or task.render_chunk) // self.count)
        out = [task.postprocess(task(c)) for c in coords.split(chunk)]
        return torch.cat(out, dim=1) if out else coords.new_zeros(self.count, 0, task.out_channels)

    @torch.no_grad()
    def render(self, shape: Optional[Sequence[int]] = None, chunk: Optional[int] = None) -> Tensor:
        """Every member's field on a regular grid -> (K, C, *shape), ``chunk`` // K coordinates per pass."""
        task = self.task
        shape = tuple(shape) if shape is not None else task.grid_shape
        grid, chunk = Grid(shape), chunk or task.render_chunk
        if chunk < 1:
            raise InputError(f"render chunk must be ≥ 1 coordinates, got {chunk}")
        chunk = max(1, chunk // self.count)
        out = torch.empty(self.count, grid.numel, task.out_channels, device=task.device)
        for start in range(0, grid.numel, chunk):
            index = torch.arange(start, min(start + chunk, grid.numel), device=task.device)
            out[:, start : start + len(index)] = task.postprocess(task(grid.coords(index)))
        return out.transpose(1, 2).reshape(self.count, task.out_channels, *shape)  # (K, N, C) -> (K, C, *shape)

    def target_grid(self) -> Tensor:
        """Every member's target on the full grid, (K, C, *shape) (a view when the target is shared)."""
        task = self.task
        grid = task.data.values_grid().to(task.device)  # (T·C, *shape)
        grid = grid.view(self.targets, task.out_channels, *grid.shape[1:])
        return grid.expand(self.count, *grid.shape[1:]) if grid.shape[0] == 1 else grid

    def predict_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        """Member ``task.predict_member``'s field on the requested grid, (C, *shape)."""
        k = self.task.predict_member
        if k is None:
            raise InputError(f"predict: the model holds {self.count} members; choose one with --member k (0..{self.count - 1})")
        with eval_mode(self.task):
            return self.member(k).render(batch["shape"])

    # --- members as single models --------------------------------------------------------------------------
    def member(self, k: int) -> L.LightningModule:
        """Member k as an ordinary single-model task of the same class: its encoder, its weights, the same settings;
        on the task's device, in its mode, attached to the stack's data with its own target (when the stack has
        data). Independent of the stack (its tensors are copies)."""
        task = self.task
        if not 0 <= k < self.count:
            raise InputError(f"member {k}: the model holds members 0..{self.count - 1}")
        accepted = init_arguments(type(task))
        parts = ("encoder", "network", "optimizer", "scheduler")  # given below; the hyper-parameters may hold their configs
        settings = {key: value for key, value in task.hparams.items() if key in accepted and key not in (*MEMBER_ARGS, *parts)}
        settings["compile"] = False
        with torch.random.fork_rng(devices=[]):  # its initial draw is replaced at once; the global state stays
            single = type(task)(
                encoder=copy.deepcopy(self.encoders[k]),
                network=self.factory,
                optimizer=task.optimizer_factory,
                scheduler=task.scheduler_factory,
                **settings,
            )
        dtype = next(task.network.parameters()).dtype
        single.to(device=task.device, dtype=dtype)
        state = {key: value for key, value in task.state_dict().items() if key.startswith(("encoder.", "network."))}
        single.load_state_dict(member_state(state, k))
        dm = task._attached_data
        if dm is None and task._trainer is not None:
            dm = getattr(task.trainer, "datamodule", None)
        if dm is not None:  # the stack's data, with member k's target
            single.attach_data(dm.member_data(k) if getattr(dm, "targets", 1) > 1 else dm)
        return single.train(task.training)

    def evaluate_members(self) -> list[dict[str, float]]:
        """Each member's ``evaluate()`` as the single model it is, on its own target: one dict per member."""
        self.task.data  # noqa: B018 - refuses, with its message, a stack without data
        return [self.member(k).evaluate() for k in range(self.count)]

    def evaluate(self) -> dict[str, float]:
        """``<key>/m{k}`` of every member's ``evaluate()``, with ``<key>/mean`` and ``<key>/std`` over the members."""
        return summarise(self.evaluate_members())

    def extra_repr(self) -> str:
        return f"count={self.count}, seeds={self.seeds}"
