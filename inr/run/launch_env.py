"""The variables a launcher gives each process (torchrun's, SLURM's, Lightning's own), checked before Lightning reads
them: one line naming the variable, its value and what it must be, instead of a traceback or a run as the wrong rank.

Lightning reads this process's rank when it is imported (``RANK``, ``LOCAL_RANK``, ``SLURM_PROCID``), so the
commands check first and import it after (``refuse_bad_environment``, called by ``train.py`` and ``inr-train``);
this module imports neither torch nor Lightning. Two kinds of refusal, both exit 2 on every process that has them:

- a value that is no whole number, or out of its range: ``SLURM_NTASKS=abc``, ``MASTER_PORT=99999``;
- a rank at or beyond the count it indexes: ``SLURM_PROCID=5`` of a job of ``SLURM_NTASKS=1`` would train as rank 5
  of a one-process run (writing no summary: only rank 0 prints it), ``RANK=3`` with ``WORLD_SIZE=1`` likewise.

The checks that need the Trainer's ``num_nodes`` and ``devices`` are ``inr.run.cluster.check_launch``'s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Optional

from inr.errors import EXIT_INPUT, InputError

MAX_PORT = 65535

# variable -> what it says
RANKS = {  # counted from 0
    "RANK": "torchrun's rank of this process among all",
    "LOCAL_RANK": "the rank of this process on its node",
    "GROUP_RANK": "torchrun's rank of this node",
    "NODE_RANK": "the rank of this node",
    "SLURM_PROCID": "SLURM's rank of this task in the job",
    "SLURM_LOCALID": "SLURM's rank of this task on its node",
    "SLURM_NODEID": "SLURM's rank of this node in the job",
}
SIZES = {  # counted from 1
    "WORLD_SIZE": "the number of processes of the run",
    "LOCAL_WORLD_SIZE": "torchrun's number of processes on this node",
    "SLURM_NTASKS": "SLURM's number of tasks in the job",
    "SLURM_NTASKS_PER_NODE": "SLURM's number of tasks on each node",
    "SLURM_NNODES": "SLURM's number of nodes in the job",
}
PORT = "MASTER_PORT"
# a rank, the count it indexes (the rank lies below it) and what this process would be with a rank beyond it
PAIRS = (
    ("RANK", "WORLD_SIZE", "rank {rank} of {total}"),
    ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "local rank {rank} of {total} on its node"),
    ("SLURM_PROCID", "SLURM_NTASKS", "rank {rank} of {total}"),
    ("SLURM_LOCALID", "SLURM_NTASKS_PER_NODE", "local rank {rank} of {total} on its node"),
    ("SLURM_NODEID", "SLURM_NNODES", "a process of node {rank} of {total}"),
)
HELP = "(docs/cluster.md)"


class LaunchError(InputError):
    """A launcher variable that is malformed or contradicts another: printed by every process that finds it (each
    node has a log of its own), not by rank 0 alone."""


def _whole(name: str, value: str, low: int, high: Optional[int], meaning: str) -> int:
    text = value.strip()
    number = int(text) if text.lstrip("+-").isdigit() else None
    if number is None or number < low or (high is not None and number > high):
        expected = f"a whole number from {low} to {high}" if high is not None else f"a whole number ≥ {low}"
        raise LaunchError(f"{name}={value!r}: {meaning} must be {expected} {HELP}")
    return number


def _range(count: int) -> str:
    return "0" if count == 1 else f"from 0 to {count - 1}"


def launch_variables(environ: Optional[Mapping[str, str]] = None) -> dict[str, int]:
    """The launcher variables set in ``environ`` (default ``os.environ``) as numbers, checked one by one and against
    each other; ``LaunchError`` with one line for the first that is wrong.

    Example:
        >>> launch_variables({"SLURM_NTASKS": "2", "SLURM_PROCID": "1", "MASTER_PORT": "29500", "HOME": "/root"})
        {'SLURM_PROCID': 1, 'SLURM_NTASKS': 2, 'MASTER_PORT': 29500}
        >>> launch_variables({"SLURM_NTASKS": "abc"})
        Traceback (most recent call last):
        ...
        inr.run.launch_env.LaunchError: SLURM_NTASKS='abc': SLURM's number of tasks in the job must be a whole number ≥ 1 (docs/cluster.md)
        >>> launch_variables({"RANK": "3", "WORLD_SIZE": "1"})
        Traceback (most recent call last):
        ...
        inr.run.launch_env.LaunchError: RANK=3 with WORLD_SIZE=1: RANK must be 0; the launcher's variables disagree, and this process would train as rank 3 of 1 (docs/cluster.md)
    """
    environ = os.environ if environ is None else environ
    found: dict[str, int] = {}
    for name, meaning in RANKS.items():
        if name in environ:
            found[name] = _whole(name, environ[name], 0, None, meaning)
    for name, meaning in SIZES.items():
        if name in environ:
            found[name] = _whole(name, environ[name], 1, None, meaning)
    if PORT in environ:
        found[PORT] = _whole(PORT, environ[PORT], 1, MAX_PORT, "the TCP port where rank 0 meets the other processes")
    for rank, count, role in PAIRS:
        # RANK alone (no WORLD_SIZE) is one process's: Lightning would take it as this process's rank all the same
        total = found.get(count, 1 if rank == "RANK" else None)
        if rank in found and total is not None and found[rank] >= total:
            given = f"{count}={total}" if count in found else f"no {count} (one process)"
            raise LaunchError(
                f"{rank}={found[rank]} with {given}: {rank} must be {_range(total)}; the launcher's variables disagree, "
                f"and this process would train as {role.format(rank=found[rank], total=total)} {HELP}"
            )
    if {"GROUP_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"} <= found.keys() and found["WORLD_SIZE"] % found["LOCAL_WORLD_SIZE"] == 0:
        nodes = found["WORLD_SIZE"] // found["LOCAL_WORLD_SIZE"]
        if found["GROUP_RANK"] >= nodes:
            raise LaunchError(
                f"GROUP_RANK={found['GROUP_RANK']} with WORLD_SIZE={found['WORLD_SIZE']} and LOCAL_WORLD_SIZE="
                f"{found['LOCAL_WORLD_SIZE']} ({nodes} node{'s' if nodes > 1 else ''}): GROUP_RANK must be "
                f"{_range(nodes)}; the launcher's variables disagree {HELP}"
            )
    return found


def refuse_bad_environment() -> None:
    """``launch_variables()``'s refusal as the command's one line (``error: ...`` on stderr, exit 2), for a command
    about to import Lightning; nothing when the variables are sound."""
    try:
        launch_variables()
    except LaunchError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_INPUT) from None
