"""The GPU check on a machine without CUDA: one line saying nothing was measured, exit 0, nothing written."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_gpu_check_without_cuda_says_so_and_exits_0(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # no device visible even where one exists
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_check.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines() == [
        "gpu_check: no CUDA device on this machine (torch.cuda.device_count() = 0): nothing measured"
    ]
    assert list(tmp_path.iterdir()) == []
