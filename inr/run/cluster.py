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

The launcher's variables are whole numbers that agree (``inr.run.launch_env``, and ``check_launch`` against the
Trainer's counts). The processes wait minutes for each other, not torch's half hour, saying what they wait for, and
stop with one line when a process never came (``bound_the_join``).
"""

from __future__ import annotations

import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Optional

import lightning as L
import torch
from lightning.fabric.plugins.collectives.torch_collective import default_pg_timeout
from lightning.fabric.plugins.environments import SLURMEnvironment, TorchElasticEnvironment

from inr.errors import EXIT_FAILED, InputError
from inr.run.launch_env import HELP, LaunchError, launch_variables

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
        return "torchrun", launch_variables().get("WORLD_SIZE", 1)
    if SLURMEnvironment.detect():
        return "SLURM", launch_variables().get("SLURM_NTASKS", 1)
    return None


def check_node_count(num_nodes: Any) -> None:
    """Refuse ``trainer.num_nodes`` below 1, and without torchrun or SLURM a node rank (``NODE_RANK``, else
    ``GROUP_RANK``, as Lightning reads it) beyond it, in one line before the Trainer is built (Lightning raises on
    the first with a traceback, and takes the second as this process's rank).

    Example:
        >>> check_node_count(0)
        Traceback (most recent call last):
        ...
        inr.errors.InputError: trainer.num_nodes 0: the number of machines the run spans must be a whole number ≥ 1 (1 for one machine) (docs/cluster.md)
    """
    if not isinstance(num_nodes, int) or isinstance(num_nodes, bool):
        return
    if num_nodes < 1:
        raise InputError(
            f"trainer.num_nodes {num_nodes}: the number of machines the run spans must be a whole number ≥ 1 (1 for one "
            f"machine) {HELP}"
        )
    if launcher() is None:
        check_rank_within(("NODE_RANK", "GROUP_RANK"), num_nodes, "trainer.num_nodes")


def check_rank_within(names: tuple[str, ...], count: int, setting: str) -> None:
    """The first of ``names`` that is set (the one Lightning reads) must lie below ``count``, the Trainer's
    ``setting``: a rank beyond it is one no other process would ever meet."""
    found = launch_variables()
    name = next((n for n in names if n in found), None)
    if name is not None and found[name] >= count:
        raise LaunchError(
            f"{name}={found[name]} with {setting} {count}: {name} must be "
            f"{'0' if count == 1 else f'from 0 to {count - 1}'}; give {setting} as the launch counts them, or the rank "
            f"this process has {HELP}"
        )


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
        check_rank_within(("LOCAL_RANK",), devices, "trainer.devices")  # NODE_RANK: check_node_count
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


# --- the meeting of the processes ---------------------------------------------------------------------------------
# How long the processes of a run wait for each other when the process group is set up, unless the strategy's own
# timeout says otherwise. Lightning's default (30 min, torch's) stays the collectives' bound once every process is
# there: a rank may wait that long for rank 0 at a checkpoint or a callback, but a launch that lacks a process is
# told so in minutes.
JOIN_TIMEOUT = timedelta(minutes=5)
NOTE_AFTER = 20.0  # seconds of waiting before a process says what it waits for (a launch's processes meet in seconds)
POLL = 1.0  # seconds between two attempts to reach rank 0


class JoinTimedOut(Exception):
    """The processes of a launch did not all meet within the join timeout: one line, printed by every process that
    waited (each node has a log of its own), exit 1 (the run's environment, not its settings)."""

    code = EXIT_FAILED


def join_timeout(strategy_timeout: Optional[timedelta]) -> timedelta:
    """How long the processes wait for each other: the strategy's timeout where one was given, else ``JOIN_TIMEOUT``
    (Lightning's default is the collectives' 30 minutes, too long to learn that a process was never started).

    Example:
        >>> join_timeout(default_pg_timeout), join_timeout(timedelta(seconds=6)), join_timeout(None)
        (datetime.timedelta(seconds=300), datetime.timedelta(seconds=6), datetime.timedelta(seconds=300))
    """
    if strategy_timeout is None or strategy_timeout == default_pg_timeout:
        return JOIN_TIMEOUT
    return strategy_timeout


def duration(limit: timedelta) -> str:
    """A timeout as the strategy's ``timeout`` takes it (h:mm:ss).

    Example:
        >>> duration(timedelta(minutes=5)), duration(timedelta(seconds=6.5))
        ('0:05:00', '0:00:06')
    """
    return str(timedelta(seconds=round(limit.total_seconds())))


def bound_the_join(trainer: L.Trainer) -> None:
    """The process group of a launch with several processes set up within ``join_timeout`` (the collectives keep the
    strategy's timeout), saying in one line what a process waits for once it has waited ``NOTE_AFTER`` seconds, and
    ending in ``JoinTimedOut`` when the others do not come. Wraps the strategy's ``setup_distributed``, which
    ``Start.connect`` calls for a launcher's processes and ``Trainer.fit`` for those Lightning starts."""
    strategy = trainer.strategy
    setup = getattr(strategy, "setup_distributed", None)
    if setup is None or not hasattr(strategy, "_timeout") or getattr(setup, "bounded", False):
        return

    def setup_distributed() -> None:
        meet(strategy, setup)

    setup_distributed.bounded = True  # type: ignore[attr-defined]
    strategy.setup_distributed = setup_distributed


def meet(strategy: Any, setup: Callable[[], None]) -> None:
    """``setup()`` (Lightning's ``setup_distributed``) with the join bounded, announced and explained (above)."""
    strategy.set_world_ranks()  # as setup() does first: this process's rank, for the lines
    world, rank = strategy.world_size, strategy.global_rank
    if world <= 1 or torch.distributed.is_initialized():
        return setup()
    environment = strategy.cluster_environment
    where = f"{environment.main_address}:{environment.main_port}"
    collectives = strategy._timeout or default_pg_timeout
    limit = join_timeout(strategy._timeout)
    who = f"rank {rank} of {world} (node {strategy.node_rank})"
    knob = "the strategy's timeout: --trainer.strategy DDPStrategy --trainer.strategy.timeout 0:15:00"
    waits_for = f"rank 0 at {where}" if rank else f"the other {world - 1} process{'es' if world > 2 else ''} at {where}"
    note = threading.Timer(
        min(NOTE_AFTER, limit.total_seconds() / 2),
        say_everywhere,
        [f"note: {who} is waiting for {waits_for}; it gives up after {duration(limit)} ({knob}; docs/cluster.md)"],
    )
    note.daemon = True
    note.start()
    deadline = time.monotonic() + limit.total_seconds()
    try:
        if rank:
            reach(environment.main_address, environment.main_port, deadline, who, where, limit)
        strategy._timeout = timedelta(seconds=max(deadline - time.monotonic(), min(limit.total_seconds(), 5.0)))
        try:
            setup()
        except torch.distributed.DistError as exc:
            raise JoinTimedOut(not_joined(str(exc), who, where, limit, world, strategy.num_nodes)) from None
        finally:
            strategy._timeout = collectives
    finally:
        note.cancel()
    torch.distributed.set_timeout(collectives)  # the bound of every collective from here on


def reach(address: str, port: int, deadline: float, who: str, where: str, limit: timedelta) -> None:
    """Wait until rank 0's end of the process group answers at ``address:port`` (torch's own attempts, failing,
    print a C++ stack each time), or raise ``JoinTimedOut`` at ``deadline``."""
    last: Optional[BaseException] = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            why = f"{type(last).__name__}: {last.strerror or last}" if isinstance(last, OSError) else "no answer"
            raise JoinTimedOut(
                f"{who} waited {duration(limit)} for rank 0 at {where} and nothing answered ({why}); start rank 0's "
                f"process (node 0) with the same MASTER_ADDR and MASTER_PORT, or give the strategy a longer timeout {HELP}"
            )
        try:
            with socket.create_connection((address, port), timeout=min(left, 5.0)):
                return
        except OSError as exc:
            last = exc
        time.sleep(min(POLL, max(deadline - time.monotonic(), 0.0)))


def not_joined(message: str, who: str, where: str, limit: timedelta, world: int, nodes: int) -> str:
    """The one line for a process group that was not complete in time (torch's ``DistError`` message in ``message``:
    rank 0's store counts the processes that joined it)."""
    if "address already in use" in message.lower():
        return (
            f"{who}: the port of {where} is in use on this node (another run's?); give the processes another MASTER_PORT {HELP}"
        )
    joined = re.search(r"(\d+)/(\d+) clients joined", message)
    count = (
        f"{joined.group(1)} of {joined.group(2)} processes joined, this one included"
        if joined
        else "the processes did not all join"
    )
    found = launcher()
    start = {
        "torchrun": f"start torchrun on every node (--nnodes × --nproc-per-node = {world})",
        "SLURM": f"start the {world} tasks with one srun (--nodes × --ntasks-per-node = {world})",
    }.get(found[0] if found else "", f"start the command on every node (NODE_RANK 0 to {nodes - 1})")
    return (
        f"{who} waited {duration(limit)} at {where} and {count}; {start} with the same MASTER_ADDR and MASTER_PORT, or "
        f"give the strategy a longer timeout {HELP}"
    )
