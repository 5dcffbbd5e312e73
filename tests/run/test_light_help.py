"""A command's ``--help`` and a refused argument load only the argument parser: ``inr-mesh`` imports neither torch
nor Lightning until its arguments are read (benchmarks/startup.py measures every command's start)."""

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
sys.argv = ["inr-mesh", *{argv!r}]
try:
    from inr.commands import mesh
    mesh()
except SystemExit as stop:
    code = stop.code
print("@@" + json.dumps({{"code": code, "heavy": sorted(n for n in ("torch", "lightning") if n in sys.modules)}}))
"""


def loaded(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, timeout=120)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    return json.loads(line[2:])


@pytest.mark.parametrize(
    "argv, code",
    [(["--help"], 0), (["--ckpt", "x.ckpt"], 2), (["--ckpt", "x.ckpt", "--out", "m.ply", "--no-such-option"], 2)],
)
def test_the_mesh_command_answers_help_and_refusals_without_torch(argv, code):
    assert loaded(argv) == {"code": code, "heavy": []}
