"""Several nodes: processes started by the cluster's launcher, checked before anything runs, agreeing on how
the command starts, with one writer.

Lightning starts the processes of one node itself (``--trainer.devices N``: rank 0 starts the others inside
``Trainer.fit``). Processes on several nodes are started by a launcher, each running the whole command:
``torchrun --nnodes M --nproc-per-node N train.py ...`` (c10d rendezvous) or ``srun python train.py ...`` under
SLURM; Lightning reads the ranks from the launcher's environment (``TorchElasticEnvironment``,
``SLURMEnvironment``) and ``--trainer.num_nodes M --trainer.devices N`` must say the same (``check_launch``).

The rule for files: **rank 0 writes, the other ranks write nothing.** Rank 0 alone chooses the checkpoint a
resume reads and the run directory, and holds the run's lock; the checkpoint's bytes reach the other ranks
through the process group (``inr.run.checkpoints.AtomicCheckpointIO``), so a node needs no copy of the run's
files and its ``trainer.default_root_dir`` may be a disk of its own: it stays empty. Where the processes were
started by a launcher, the process group is set up before the command's checks (``Start.connect``) and every rank
reports how its checks went (``Start.agree``): a refusal on any rank (a file that only rank 0 reads, a directory
one node cannot write) stops every rank with that rank's one line and exit code, instead of leaving the others
waiting for it in the first collective until a timeout; the other ranks then take rank 0's choice of checkpoint.
One line on rank 0 says where the run is written, and one in the log of every other node (``Start.notes``,
``Start.local_line``).
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import lightning as L
import torch
from lightning.fabric.plugins.environments import SLURMEnvironment, TorchElasticEnvironment

from inr.errors import InputError

# what Lightning's cluster environments raise for settings that contradict the launcher's (their messages start so)
LIGHTNING_LAUNCH_ERROR = "You set `"


def launcher() -> Optional[tuple[str, int]]:
    """(the launcher that started this process, the number of processes it started for the job) read from the
    environment: torchrun's ``WORLD_SIZE``, SLURM's ``SLURM_NTASKS``; None for a process started by hand.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"TORCHELASTIC_RUN_ID": "job", "WORLD_SIZE": "4"}, clear=True):
        ...     launcher()
        ('torchrun', 4)
        >>> with mock.patch.dict(os.environ, {"SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "1"}, clear=True):
        ...     launcher()
        ('SLURM', 2)
    """
    if TorchElasticEnvironment.detect():
        return "torchrun", int(os.environ.get("WORLD_SIZE", "1"))
    if SLURMEnvironment.detect():
        return "SLURM", int(os.environ.get("SLURM_NTASKS", "1"))
    return None


def launch_error(exc: BaseException) -> Optional[InputError]:
    """Lightning's refusal of ``trainer.num_nodes``/``trainer.devices`` that contradict the launcher (raised while
    the Trainer is built, with a traceback) as one ``InputError`` line; None for any other exception."""
    text = str(exc).strip()
    if not text.startswith(LIGHTNING_LAUNCH_ERROR):
        return None
    return InputError(f"trainer: {' '.join(text.split())} (docs/cluster.md)")


def check_launch(trainer: L.Trainer) -> None:
    """Refuse, before anything runs, a number of processes the launcher and the Trainer disagree on: each process
    of a launcher set for fewer processes than it started would train a copy of its own (Lightning then runs one
    device, ignoring the launcher); ``num_nodes`` above 1 with no launcher would wait for nodes nobody starts."""
    nodes, devices = int(trainer.num_nodes), int(trainer.num_devices)
    found = launcher()
    if found is None:
        if nodes > 1 and "NODE_RANK" not in os.environ and "GROUP_RANK" not in os.environ:
            raise InputError(
                f"trainer.num_nodes {nodes}: no launcher started this process (no torchrun or SLURM environment, no "
                f"NODE_RANK), so the other nodes would never join; start every node's processes with torchrun --nnodes "
                f"{nodes} --nproc-per-node {devices} ... or srun under SLURM (docs/cluster.md)"
            )
        return
    name, started = found
    if nodes * devices != started:
        how = (
            "torchrun's --nnodes and --nproc-per-node"
            if name == "torchrun"
            else "the job's --nodes and --ntasks-per-node (one task per device)"
        )
        unit = "processes" if name == "torchrun" else "tasks"
        raise InputError(
            f"trainer.num_nodes {nodes} × trainer.devices {devices} = {nodes * devices} process{'es' if nodes * devices > 1 else ''}, "
            f"but {name} started {started} {unit}; give --trainer.num_nodes and --trainer.devices as {how} (docs/cluster.md)"
        )


def external(trainer: L.Trainer) -> bool:
    """Several processes, every one started by torchrun or SLURM (not by Lightning inside rank 0's ``Trainer.fit``,
    whose ranks > 0 also count as started externally, but start after rank 0 has checked and chosen)."""
    environment = getattr(trainer._accelerator_connector, "cluster_environment", None)
    return trainer.world_size > 1 and isinstance(environment, (TorchElasticEnvironment, SLURMEnvironment))


def output_location(trainer: L.Trainer) -> Path:
    """Where this process would write the run: its logger's ``save_dir``, else ``trainer.default_root_dir``."""
    logger = trainer.logger
    return Path(getattr(logger, "save_dir", None) or trainer.default_root_dir).absolute()


@dataclass
class Report:
    """What a rank brings to the start: where it runs, where it would write, and its refusal (one line and exit
    code) or None; rank 0 adds its choice of checkpoint and that checkpoint's step."""

    rank: int
    node: int
    host: str
    location: str
    failure: Optional[tuple[str, int]] = None
    checkpoint: Optional[str] = None
    step: int = 0
    run: Optional[str] = None


class PeerFailed(Exception):
    """Another rank refused the command before it started (its line is ``message``): this rank stops too."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Start:
    """The start of a command over the processes of a launcher: the process group is set up first
    (``connect``), then each rank runs its checks, and ``agree`` (or ``fail``) exchanges the reports once.

    On a single process, or processes Lightning starts itself (they start after rank 0 has checked), every
    method is a no-op and ``decides`` is True.
    """

    trainer: L.Trainer
    active: bool = False
    reports: list[Report] = field(default_factory=list)

    @classmethod
    def of(cls, trainer: L.Trainer) -> Start:
        return cls(trainer, active=external(trainer))

    @property
    def decides(self) -> bool:
        """Whether this rank chooses the checkpoint and the run directory (rank 0, or every rank when inactive)."""
        return not self.active or self.trainer.global_rank == 0

    @property
    def exchanged(self) -> bool:
        return bool(self.reports)

    def connect(self) -> None:
        """The process group, now (Lightning sets it up again in ``Trainer.fit`` and finds it there)."""
        if self.active:
            self.trainer.strategy.setup_environment()

    def _report(self, failure: Optional[tuple[str, int]], checkpoint: Optional[str] = None, step: int = 0, run=None) -> Report:
        trainer = self.trainer
        where = str(output_location(trainer))
        return Report(trainer.global_rank, trainer.node_rank, socket.gethostname(), where, failure, checkpoint, step, run)

    def _exchange(self, mine: Report) -> list[Report]:
        import torch.distributed as dist

        reports: list[Any] = [None] * self.trainer.world_size
        dist.all_gather_object(reports, mine)  # objects of these processes, in memory: no file is unpickled
        self.reports = reports
        return reports

    def fail(self, message: str, code: int) -> None:
        """This rank refuses the command: the others learn it at their ``agree`` and stop too."""
        if self.active and not self.exchanged and torch.distributed.is_available():
            if not torch.distributed.is_initialized():
                return  # the process group is not there: nothing can be told (a refusal while building it)
            self._exchange(self._report((message, code)))

    def agree(self, checkpoint: Optional[str], step: int, run: Optional[str] = None) -> tuple[Optional[str], int]:
        """Every rank's checks passed, or ``PeerFailed`` with the first refusal; returns rank 0's checkpoint and
        its step (every rank reads that one, through rank 0). ``run``: rank 0's run directory."""
        if not self.active:
            return checkpoint, step
        reports = self._exchange(self._report(None, checkpoint, step, run))
        failed = [r for r in reports if r.failure is not None]
        if failed:
            first = failed[0]
            message, code = first.failure
            raise PeerFailed(f"rank {first.rank} (node {first.node}, {first.host}): {message}", code)
        return reports[0].checkpoint, reports[0].step

    def notes(self) -> list[str]:
        """Rank 0's line saying where the run is written, naming the nodes whose output location is not used."""
        if not self.active or self.trainer.num_nodes <= 1:
            return []
        trainer, first = self.trainer, self.reports[0]
        found = launcher()
        line = (
            f"{trainer.num_nodes} nodes × {trainer.num_devices} process{'es' if trainer.num_devices > 1 else ''} "
            f"({found[0] if found else 'a launcher'}): rank 0 "
            f"on {first.host} writes the run into {first.run}; the other ranks write nothing"
        )
        elsewhere: dict[tuple[int, str], str] = {}
        for report in self.reports[1:]:
            if report.location != first.location or report.host != first.host:
                elsewhere.setdefault((report.node, report.host), report.location)
        if elsewhere:
            unused = ", ".join(f"node {node} ({host}) {location}" for (node, host), location in sorted(elsewhere.items()))
            line += f"; not used: {unused}"
        return [line]

    def local_line(self) -> Optional[str]:
        """The line for the log of a node other than rank 0's (its first process says it), or None."""
        trainer = self.trainer
        if not self.active or trainer.num_nodes <= 1 or trainer.local_rank != 0 or trainer.node_rank == self.reports[0].node:
            return None
        first = self.reports[0]
        return (
            f"note: rank 0 on {first.host} (node {first.node}) writes this run into {first.run}; nothing is written on this node"
        )


def say_everywhere(line: Optional[str]) -> None:
    """A line on this process's stderr (not only rank 0's): each node has a log of its own."""
    if line:
        print(line, file=sys.stderr, flush=True)
