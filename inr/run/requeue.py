"""SLURM's warning before a time limit or a preemption: SIGUSR1 saves a checkpoint and requeues the job, as
Lightning's auto-requeue does, and the job SLURM starts again resumes from that checkpoint.

``#SBATCH --signal=USR1@90`` asks SLURM to send SIGUSR1 90 s before the job's end. Under SLURM (Lightning's
``SLURMEnvironment``, whose ``auto_requeue`` is on unless a config turns it off) the command takes SIGUSR1 as it
takes SIGTERM (``inr.run.signals``): every rank stops after the same step, at a point a resume repeats exactly,
and ``last.ckpt`` is saved. Then rank 0 writes ``requeue.json`` into the run directory (the job's id, the
checkpoint, its step) and runs ``scontrol requeue <job id>`` (``<array job id>_<task id>`` for an array task),
and the command exits 138 (128 + SIGUSR1) with one line. When SLURM starts the job again (the same id, the same
command), ``fit`` without ``--ckpt_path`` finds that record under the logger's root and resumes from its
checkpoint in the same run directory, with a note; a job of another id starts a new run, as before.

Lightning's own handler, which saves ``hpc_ckpt_N.ckpt`` into ``default_root_dir`` from inside the signal handler
(a collective there, while another rank may wait in a different one), is never installed: Lightning installs
it only where no SIGUSR1 handler is set, and this command sets its own before the Trainer starts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Optional

from lightning.fabric.plugins.environments import SLURMEnvironment

from inr.io.files import atomic_write

RECORD_NAME = "requeue.json"
SCONTROL_SECONDS = 60  # scontrol waits for the controller; a job near its limit cannot wait longer


def job_id() -> Optional[str]:
    """This SLURM job's id as ``scontrol requeue`` takes it: ``<array job>_<task>`` for an array task.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"SLURM_JOB_ID": "4242"}, clear=True):
        ...     job_id()
        '4242'
        >>> with mock.patch.dict(os.environ, {"SLURM_JOB_ID": "9", "SLURM_ARRAY_JOB_ID": "7", "SLURM_ARRAY_TASK_ID": "3"}):
        ...     job_id()
        '7_3'
    """
    array = os.environ.get("SLURM_ARRAY_JOB_ID")
    job = f"{array}_{os.environ.get('SLURM_ARRAY_TASK_ID', '')}" if array else os.environ.get("SLURM_JOB_ID")
    return job if job and re.fullmatch(r"[0-9_]+", job) else None


def under_slurm() -> bool:
    """Started by SLURM (its task variables set; not an interactive ``bash`` job), as Lightning detects it."""
    return SLURMEnvironment.detect()


def enabled(trainer: Any) -> bool:
    """SIGUSR1 requeues: the Trainer runs under SLURM with auto-requeue on (Lightning's default) and a job id."""
    environment = getattr(getattr(trainer, "_accelerator_connector", None), "cluster_environment", None)
    return isinstance(environment, SLURMEnvironment) and environment.auto_requeue and job_id() is not None


def write_record(run_dir: Path, checkpoint: str, step: int) -> Path:
    """``requeue.json`` of this job in ``run_dir``: what the job resumes from when SLURM starts it again."""
    path = run_dir / RECORD_NAME
    with atomic_write(path, "w") as f:
        json.dump({"job": job_id(), "checkpoint": str(Path(checkpoint).absolute()), "step": int(step)}, f)
    return path


def requeued_checkpoint(root: Path) -> Optional[tuple[str, int]]:
    """(checkpoint, step) this job recorded before it was requeued, under the logger's ``root`` (the newest record
    of this job id whose checkpoint is still there), or None: not under SLURM, or no record of this job."""
    job = job_id() if under_slurm() else None
    if job is None or not root.is_dir():
        return None
    found = []
    for path in root.glob(f"*/{RECORD_NAME}"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("job") == job and Path(str(record.get("checkpoint"))).is_file():
            found.append((path.stat().st_mtime_ns, str(record["checkpoint"]), int(record.get("step", 0))))
    if not found:
        return None
    _, checkpoint, step = max(found)
    return checkpoint, step


def requeue() -> tuple[bool, str]:
    """``scontrol requeue <job id>``: (whether it succeeded, the command and, on failure, why)."""
    job = job_id()
    command = ["scontrol", "requeue", str(job)]
    shown = " ".join(command)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SCONTROL_SECONDS)
    except FileNotFoundError:
        return False, f"{shown}: scontrol not found on PATH"
    except subprocess.TimeoutExpired:
        return False, f"{shown}: no answer in {SCONTROL_SECONDS} s"
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        return False, f"{shown} failed (exit {done.returncode}{': ' + why[-1] if why else ''})"
    return True, shown
