"""Shared pieces of the fault suite: a tiny training config, the CLI run in process with its exit code and
stderr lines, and one small trained run per module to resume, copy and damage."""

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from inr.cli import cli_main

ROOT = Path(__file__).resolve().parents[2]
# resolution 16, width 16, 5 steps per epoch, no image/spectral callbacks: a run of 10 steps takes about a second
TINY = [
    "--config",
    "image.yaml",
    "--data.init_args.resolution",
    "16",
    "--data.init_args.steps_per_epoch",
    "5",
    "--model.init_args.network.init_args.width",
    "16",
    "--model.init_args.encoder.init_args.num_features",
    "16",
    "--trainer.max_steps",
    "10",
    "--trainer.check_val_every_n_epoch",
    "2",
    "--trainer.num_sanity_val_steps",
    "0",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.callbacks",
    "null",
]


def tiny(save_dir, *extra) -> list[str]:
    return [*TINY, "--trainer.logger.init_args.save_dir", str(save_dir), *extra]


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
def run_cli(capsys):
    """``run_cli(args)``: train.py's ``cli_main`` in this process -> Outcome(exit code, stderr, stdout)."""

    def run(args: list[str]) -> Outcome:
        capsys.readouterr()
        try:
            cli_main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return Outcome(code, captured.err, captured.out)

    return run


def run_script(args: list[str], timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """The real ``train.py`` in a subprocess."""
    return subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kwargs
    )


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A finished 10-step run (checkpoints at steps 5 and 10); tests copy it with ``copy_run`` before changing it."""
    save_dir = tmp_path_factory.mktemp("trained")
    cli_main(tiny(save_dir))
    return save_dir / "image" / "version_0"


def copy_run(run_dir: Path, save_dir: Path) -> Path:
    """The run copied to ``save_dir/image/version_0``."""
    target = save_dir / "image" / "version_0"
    shutil.copytree(run_dir, target)
    return target


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


@pytest.fixture(scope="session")
def kit():
    """The helpers above, for the test modules (conftest is not importable under --import-mode=importlib)."""
    from types import SimpleNamespace

    return SimpleNamespace(root=ROOT, tiny=tiny, copy_run=copy_run, files_under=files_under, run_script=run_script)
