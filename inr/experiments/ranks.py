"""A comparison over the processes of a launcher: its stacked groups trained with the members sharded over the
ranks, everything else on rank 0, which alone writes.

    torchrun --standalone --nproc-per-node 2 -m inr.experiments.table1 --kind natural --images DIR --seeds 2

Why torchrun (or ``srun`` under SLURM) and not a ``--devices N`` of the comparison's own: Lightning's launcher for
``Trainer(devices=N, strategy="ddp")`` starts the other processes inside rank 0's first ``Trainer.fit``, by
running the command again from its start. A comparison does much before its first fit (it reads and writes its
images, reads the rows of an earlier run, may run the time probe or a row of one model first), which processes
started there would repeat or never reach. A launcher starts every process at the beginning: each runs the same
command and computes the same plan, and they meet in the stacked fits, where Lightning reads the ranks from the
launcher's environment (``TorchElasticEnvironment``, ``SLURMEnvironment``) as ``train.py`` does. The same holds
on CPU (gloo) and on GPUs (NCCL for the tensors on the devices, gloo for the few Python objects exchanged: one
process group, ``cpu:gloo,cuda:nccl``).

What runs where (``comparison.run``):

- rank 0 alone checks the inputs and writes the built-in images (``check``), runs the time probe (``--paper``),
  creates ``--out``, completes the protocol (``prepare``) and reads the rows an earlier run left; then it sends
  the protocol and those rows to the other ranks (``first``). A refusal there is its one line, and every rank
  stops with exit 2;
- a group of members trained as one stacked model trains on every rank: Lightning's DDP with ``devices`` and
  ``num_nodes`` from the launcher (``trainer_args``). ``inr.tasks.members`` shards the members over the ranks;
  DDP averages their gradients, so every rank ends holding every member's trained weights (equal on all ranks),
  and rank 0 scores them. For a power of two of ranks the rows are those of one process bit for bit (to rounding
  otherwise: ``inr.tasks.members``);
- a row that trains one model (a method that does not stack, a group of one member) trains on rank 0 alone,
  its metrics computed locally (``local_metrics``); the other ranks go on to the next stacked group and wait
  there (the process group's ``TIMEOUT`` bounds the wait);
- scoring, baselines, progress lines, ``results.json``/``results.md`` and figures: rank 0. The other ranks print
  and write nothing (``quiet``: their stdout and stderr go nowhere; a crash still prints its traceback).

Refused in one line, exit 2, on every rank before anything is written (``refusal``): a plan with no stacked group
of several members (nothing to share over the ranks), a stacked group with fewer members than processes,
``--threads`` asking for more threads on a node than it has cores, and ``--estimate-only`` (a probe of one
process).
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import lightning as L
import torch
import torchmetrics
from lightning.fabric.plugins.environments import SLURMEnvironment, TorchElasticEnvironment

from inr.errors import InputError
from inr.metrics.local import not_distributed
from inr.run.cluster import launcher

# how long a rank waits in a collective: the others wait for rank 0's rows of one model, scoring and baselines
TIMEOUT = datetime.timedelta(hours=24)


@dataclass(frozen=True)
class Ranks:
    """This process's place among the launcher's: its rank, the number of processes, those per node and the
    launcher's name (``Ranks()``: one process, started by hand).

    Example:
        >>> from unittest import mock
        >>> env = {"TORCHELASTIC_RUN_ID": "x", "RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
        ...        "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
        >>> with mock.patch.dict(os.environ, env, clear=True):
        ...     ranks = Ranks.of_launcher()
        >>> ranks, ranks.writes, ranks.trainer_args()
        (Ranks(rank=1, world=4, per_node=2, launcher='torchrun'), False, {'devices': 2, 'num_nodes': 2, 'strategy': 'ddp'})
        >>> Ranks().several, Ranks().writes
        (False, True)
    """

    rank: int = 0
    world: int = 1
    per_node: int = 1
    launcher: str = ""

    @classmethod
    def of_launcher(cls) -> Ranks:
        """The ranks torchrun (``RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``) or SLURM (``SLURM_PROCID``,
        ``SLURM_NTASKS``, ``SLURM_NTASKS_PER_NODE``) started; one process without either."""
        found = launcher()
        if found is None or found[1] <= 1:
            return cls()
        name, world = found
        if name == "torchrun":
            rank, per_node = os.environ.get("RANK", "0"), os.environ.get("LOCAL_WORLD_SIZE", str(world))
        else:  # "2(x3)": two tasks on each of three nodes
            rank, per_node = os.environ.get("SLURM_PROCID", "0"), os.environ.get("SLURM_NTASKS_PER_NODE", str(world))
        return cls(int(rank), world, int(per_node.split("(")[0]), name)

    @property
    def several(self) -> bool:
        return self.world > 1

    @property
    def writes(self) -> bool:
        """Whether this process prints and writes: rank 0."""
        return self.rank == 0

    def trainer_args(self) -> dict[str, Any]:
        """The Trainer's arguments of a stacked fit over every rank (none on one process)."""
        if not self.several:
            return {}
        return {"devices": self.per_node, "num_nodes": self.world // self.per_node, "strategy": "ddp"}

    def refusal(self, args: Any, groups: Sequence[Sequence[Any]], prog: str) -> Optional[str]:
        """Why these flags and this plan (every group of members the command trains) cannot run over the ranks,
        or None."""
        if not self.several:
            return None
        over = f"{prog} over {self.world} processes ({self.launcher})"
        if args.estimate_only:
            return f"--estimate-only: the time probe runs in one process; {over}: start it without {self.launcher}"
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if args.threads is not None and args.threads * self.per_node > cores:
            return (
                f"--threads {args.threads}: {self.per_node} processes on this node × {args.threads} threads = "
                f"{args.threads * self.per_node} for {cores} cores; give --threads {max(1, cores // self.per_node)} "
                "or less, or leave it out"
            )
        sizes = [len(group) for group in groups]
        if not any(size > 1 for size in sizes):
            return (
                f"{over}: every row trains one model (no stacked group of members to share over the processes); "
                "run it in one process, or give more signals or seeds"
            )
        small = min(size for size in sizes if size > 1)
        if small < self.world:
            return (
                f"{over}: a stacked group of {small} members; each process trains at least one member: give at most "
                f"{small} processes, or more signals or seeds"
            )
        return None

    # --- the process group ------------------------------------------------------------------------------------
    def connect(self) -> None:
        """The process group of the launcher's processes, now (Lightning finds it in every stacked fit and keeps it;
        it is taken down at exit)."""
        if not self.several or torch.distributed.is_initialized():
            return
        environment = TorchElasticEnvironment() if self.launcher == "torchrun" else SLURMEnvironment()
        os.environ["MASTER_ADDR"] = environment.main_address
        os.environ["MASTER_PORT"] = str(environment.main_port)
        backend = "cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"
        torch.distributed.init_process_group(backend, rank=self.rank, world_size=self.world, timeout=TIMEOUT)

    def first(self, opening: Callable[[], Any]) -> Any:
        """``opening()`` on rank 0 before the process group is set up (a time probe trains there), its value sent
        to every rank; its refusal (``InputError``) raised on every rank, and any other failure on rank 0 stops
        the others too. One process: ``opening()``."""
        if not self.several:
            return opening()
        outcome: list[Any] = [None]
        if self.writes:
            try:
                outcome = [("value", opening())]
            except InputError as exc:
                outcome = [("refused", str(exc))]
                self.connect()
                torch.distributed.broadcast_object_list(outcome, src=0, device=torch.device("cpu"))
                raise
            except Exception:
                outcome = [("failed", None)]
                self.connect()
                torch.distributed.broadcast_object_list(outcome, src=0, device=torch.device("cpu"))
                raise
        self.connect()
        # objects of these processes, in memory (the protocol, rows of numbers and text): no file is unpickled
        torch.distributed.broadcast_object_list(outcome, src=0, device=torch.device("cpu"))
        kind, value = outcome[0]
        if kind == "refused":
            raise InputError(value)
        if kind == "failed":
            raise SystemExit(1)  # rank 0 printed its traceback
        return value


ONE = Ranks()  # one process, started by hand


def local_metrics(model: L.LightningModule) -> None:
    """Every torchmetrics metric of ``model`` computed in this process alone: a fit on rank 0 alone must not
    gather metric states from ranks that are not there."""
    for module in model.modules():
        if isinstance(module, torchmetrics.Metric):
            module.distributed_available_fn = not_distributed


@contextlib.contextmanager
def quiet(ranks: Ranks) -> Iterator[None]:
    """Ranks other than 0 print nothing (stdout and stderr go nowhere inside the block); an exception leaving the
    block still prints its traceback where the process's stderr goes."""
    if ranks.writes:
        yield
        return
    with open(os.devnull, "w") as nowhere, contextlib.redirect_stdout(nowhere), contextlib.redirect_stderr(nowhere):
        yield
