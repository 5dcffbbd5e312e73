"""Modules that were commands before the re-layout (documented as ``python -m inr.export.mesh`` and ``python -m
inr.export.radiance_turntable``) do not exit 0 doing nothing: one line naming the command that replaced them,
exit 2, nothing written. Their successors still run."""

import subprocess
import sys

import pytest

MOVED = {
    "inr.export.mesh": "inr-mesh (python -m inr.run.mesh)",
    "inr.export.radiance_turntable": "python -m inr.run.turntable",
}


@pytest.mark.slow
@pytest.mark.parametrize("module", list(MOVED))
def test_an_old_command_path_names_its_successor_and_exits_2(tmp_path, kit, module):
    out = tmp_path / "out.ply"
    proc = subprocess.run(
        [sys.executable, "-m", module, "--ckpt", str(tmp_path / "last.ckpt"), "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == "", (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.splitlines() == [
        f"error: python -m {module} is no longer a command; run {MOVED[module]} with the same options"
    ]
    assert kit.files_under(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("module", ["inr.run.mesh", "inr.run.turntable"])
def test_the_successors_run(tmp_path, module):
    proc = subprocess.run([sys.executable, "-m", module, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "--ckpt" in proc.stdout
