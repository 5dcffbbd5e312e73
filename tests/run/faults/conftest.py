"""Shared pieces of the fault suite: the tiny training run, the CLI run in process with its exit code and
stderr lines, and one small trained run per module to resume, copy and damage."""

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from inr.run.cli import cli_main

ROOT = Path(__file__).resolve().parents[3]
ONE_STEP = ["--model.init_args.inner_steps", "1"]


@pytest.fixture(scope="session")
def fault_run_args(tiny_run_args):
    """The suite's tiny image run (tests/conftest.py), validating every second epoch, with a checkpoint at every
    epoch's end (the command's own cadence is minutes: inr.run.saving): checkpoints at steps 5 and 10. One optimizer
    step per Lightning step: the suite's signal and NaN hooks act at Lightning steps (the faults between inner
    steps: tests/run/test_inner_steps.py)."""

    def args(save_dir, *extra: str) -> list[str]:
        return tiny_run_args(
            save_dir, "--trainer.check_val_every_n_epoch", "2", "--checkpoint.every_n_epochs", "1", *ONE_STEP, *extra
        )

    return args


@dataclass
class Outcome:
    code: int
    stderr: str
    stdout: str

    def lines(self, prefix: str) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith(prefix)]

    @property
    def errors(self) -> list[str]:
        return self.lines("error:")


@pytest.fixture
def run_cli(capsys, cli_run):
    """``run_cli(args)``: tests/conftest.py's ``cli_run`` (train.py's ``cli_main`` in this process) -> Outcome(exit
    code, an exit without a number as 1, stderr, stdout)."""

    def run(args: list[str]) -> Outcome:
        capsys.readouterr()
        code, _ = cli_run(args)
        captured = capsys.readouterr()
        return Outcome(code if isinstance(code, int) else 1, captured.err, captured.out)

    return run


def run_script(args: list[str], timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """The real ``train.py`` in a subprocess."""
    return subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kwargs
    )


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory, fault_run_args):
    """A finished 10-step run (checkpoints at steps 5 and 10); tests copy it with ``copy_run`` before changing it."""
    save_dir = tmp_path_factory.mktemp("trained")
    cli_main(fault_run_args(save_dir))
    return save_dir / "image" / "version_0"


def copy_run(run_dir: Path, save_dir: Path) -> Path:
    """The run copied to ``save_dir/image/version_0``."""
    target = save_dir / "image" / "version_0"
    shutil.copytree(run_dir, target)
    return target


@pytest.fixture(scope="session")
def kit(fault_run_args, tiny_flags, files_under):
    """The helpers above and tests/conftest.py's ``tiny_flags`` and ``files_under``, for the test modules (conftest
    is not importable under --import-mode=importlib)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        root=ROOT, tiny=fault_run_args, flags=tiny_flags, copy_run=copy_run, files_under=files_under, run_script=run_script
    )
