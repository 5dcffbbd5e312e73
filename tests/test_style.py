"""The house style is checked, not hoped for: ruff's lint rules and formatter (pyproject.toml) pass on the tree."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(command):
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", str(ROOT)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
