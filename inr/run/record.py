"""What made a run, recorded beside its ``config.yaml``: ``run.json`` holds the exact command line, the package's
version and git commit (and whether the checkout had uncommitted changes), the versions of Python, torch,
Lightning and numpy, the host, the device the Trainer ran on and the thread settings.

A new run writes ``run.json`` when it starts; a resume that continues a run directory writes
``run.resume-N.json`` once its checkpoint has loaded, the N of its ``config.resume-N.yaml``; validate, test and
predict write ``run.json`` into their own new run directories. Never overwritten; written whole or not at all.

    {"command": "python train.py --config image.yaml", "package": {"version": "0.1.0", "git": {"commit": "…",
     "dirty": false}}, "versions": {"torch": "2.14.1", …}, "device": {"accelerator": "cpu", …}, "threads": {…}}
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import lightning as L
import torch

from inr.io.files import atomic_write
from inr.io.run_dir import shared_run_dir
from inr.run.resume import RESUME_CONFIG

RECORD_NAME = "run.json"
RESUME_RECORD = re.compile(r"run\.resume-(\d+)\.json")
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # .../inr
# the environment variables that set a process's thread counts (OpenMP, MKL, OpenBLAS) and its visible GPUs
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES")
GIT_TIMEOUT = 10.0  # seconds; a git that hangs (a network file system) leaves the commit unrecorded


def _git(directory: Path, *args: str) -> Optional[str]:
    try:
        proc = subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def git_state(directory: Path, tracked: Optional[str] = None) -> Optional[dict[str, Any]]:
    """``{"root", "commit", "dirty"}`` of the git checkout holding ``directory``, or None when there is none (an
    installed package). ``tracked``: a file under ``directory`` that the checkout must track (a package installed
    into a virtual environment inside some checkout is not that checkout's code). ``dirty``: tracked files
    differ from the commit (untracked files do not count)."""
    root = _git(directory, "rev-parse", "--show-toplevel")
    if root is None:
        return None
    if tracked is not None and _git(directory, "ls-files", "--error-unmatch", tracked) is None:
        return None
    commit = _git(directory, "rev-parse", "HEAD")
    status = _git(directory, "status", "--porcelain", "--untracked-files=no")
    return {"root": root, "commit": commit, "dirty": None if status is None else bool(status)}


def package_version() -> str:
    """The installed distribution's version, else the package's own ``__version__`` (a source tree on the path)."""
    try:
        return importlib.metadata.version("inr")
    except importlib.metadata.PackageNotFoundError:
        import inr

        return inr.__version__


def versions() -> dict[str, Optional[str]]:
    """Python and the libraries whose versions change what a run computes."""
    import lightning
    import numpy

    found = {"python": platform.python_version(), "torch": torch.__version__, "lightning": lightning.__version__}
    found["numpy"] = numpy.__version__
    for name in ("torchmetrics", "jsonargparse"):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def device_record(trainer: L.Trainer) -> dict[str, Any]:
    """The device the Trainer runs on: accelerator, device count, strategy, precision and, on CUDA, the GPU's name,
    CUDA's and cuDNN's versions."""
    root = trainer.strategy.root_device
    out: dict[str, Any] = {
        "accelerator": root.type,
        "root_device": str(root),
        "num_devices": trainer.num_devices,
        "num_nodes": trainer.num_nodes,
        "strategy": type(trainer.strategy).__name__,
        "precision": str(trainer.precision),
    }
    if root.type == "cuda":
        out["name"] = torch.cuda.get_device_name(root)
        out["cuda"] = torch.version.cuda
        out["cudnn"] = torch.backends.cudnn.version()
    return out


def thread_record() -> dict[str, Any]:
    """torch's intra- and inter-op threads, the cores this process may use, and the variables that set them."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "environment": {name: os.environ.get(name) for name in THREAD_VARIABLES if name in os.environ},
    }


def run_record(trainer: L.Trainer, argv: list[str], seed: Any = None) -> dict[str, Any]:
    """Everything ``run.json`` holds (module docstring); ``argv``: the command as typed, its program first."""
    here = Path.cwd()
    package = {"name": "inr", "version": package_version(), "path": str(PACKAGE_DIR)}
    package["git"] = git_state(PACKAGE_DIR, tracked="__init__.py")
    record = {
        "command": shlex.join(argv),
        "argv": list(argv),
        "python_executable": sys.executable,
        "working_directory": str(here),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "package": package,
        "versions": versions(),
        "host": {"name": socket.gethostname(), "platform": platform.platform(), "machine": platform.machine()},
        "device": device_record(trainer),
        "threads": thread_record(),
    }
    own = git_state(here)  # the user's own code, when the command runs in another checkout
    if own is not None and (package["git"] is None or own["root"] != package["git"]["root"]):
        record["working_directory_git"] = own
    return record


def resume_record_path(directory: Path) -> Path:
    """``run.resume-N.json`` with the N of the newest ``config.resume-N.yaml`` (written just before, when the
    resumed run started), or one above the highest ``run.resume-N.json`` where that one is taken."""
    configs = [int(m.group(1)) for p in directory.glob("config.resume-*.yaml") if (m := RESUME_CONFIG.fullmatch(p.name))]
    path = directory / f"run.resume-{max(configs, default=0)}.json"
    if not configs or path.exists():
        taken = [int(m.group(1)) for p in directory.glob("run.resume-*.json") if (m := RESUME_RECORD.fullmatch(p.name))]
        path = directory / f"run.resume-{max(taken, default=0) + 1}.json"
    return path


def write_record(path: Path, record: dict[str, Any]) -> Path:
    with atomic_write(path, "w") as f:
        f.write(json.dumps(record, indent=1, default=str) + "\n")
    return path


class RunRecorder(L.Callback):
    """Writes ``run.json`` when a command's run directory is set up (``setup``, beside ``config.yaml``), or, for a
    resume that continues a run directory (``resume_in_place``), ``run.resume-N.json`` when training starts."""

    def __init__(self, argv: list[str], seed: Any = None) -> None:
        self.argv, self.seed = list(argv), seed
        self.resume_in_place = False
        self.written: Optional[Path] = None

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        directory = shared_run_dir(trainer)  # a broadcast: every rank calls it
        if self.written is None and not self.resume_in_place and trainer.is_global_zero:
            path = directory / RECORD_NAME
            if not path.exists():
                directory.mkdir(parents=True, exist_ok=True)
                self.written = write_record(path, run_record(trainer, self.argv, self.seed))

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        directory = shared_run_dir(trainer)
        if self.written is None and self.resume_in_place and trainer.is_global_zero:
            self.written = write_record(resume_record_path(directory), run_record(trainer, self.argv, self.seed))
