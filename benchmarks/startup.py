"""What each command costs before it does anything: modules imported and seconds of process time for every
command's ``--help`` and for decoding a small codec file, each in a fresh interpreter.

    python benchmarks/startup.py                 # every command, 3 repeats, the median
    python benchmarks/startup.py --repeats 5 --only decode

A row's modules are ``len(sys.modules)`` when the command ends (the interpreter's own ~70 included), how many of them
are the package's own (``inr.*``), and which of torch, Lightning, ``inr.tasks``, ``inr.experiments`` and
``inr.methods`` were among them; its seconds are the child's user + system CPU time
(``resource.getrusage(RUSAGE_CHILDREN)``), which moves less with a shared machine's load than wall time, and its
wall seconds beside. The decode rows decode ``tests/codec/data/siren_v1.inr`` (24 × 20, a format-version-1 file
shipped with the tests) and ``siren_init_v2.inr`` against its learned init ``siren_init.ckpt``
(tests/codec/test_golden.py). No ratio is formed: each row stands alone, and the before/after figures in
benchmarks/README.md and docs/codec.md were measured on one machine in one sitting.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inr.io.command_line import CommandParser

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests/codec/data/siren_v1.inr"
INIT_FILE, INIT = ROOT / "tests/codec/data/siren_init_v2.inr", ROOT / "tests/codec/data/siren_init.ckpt"

# (row name, the Python that runs it): each calls the command's own entry point with its argv, as the console
# script would, then reports what was imported (also when the command exits through SystemExit, as --help does)
COMMANDS = {
    "inr-train --help": ("inr.commands", "train", ["--help"]),
    "inr-mesh --help": ("inr.commands", "mesh", ["--help"]),
    "inr-compare --help": ("inr.commands", "compare", ["--help"]),
    **{
        f"python -m inr.experiments.{name} --help": (f"inr.experiments.{name}", "main", ["--help"])
        for name in ("compare_encoders", "compare_fields", "inverse", "table1", "view_synthesis", "shapes", "learned_init")
    },
    "inr-codec --help": ("inr.commands", "codec", ["--help"]),
    "inr-codec encode --help": ("inr.commands", "codec", ["encode", "--help"]),
    "inr-codec decode --help": ("inr.commands", "codec", ["decode", "--help"]),
    "inr-codec compare --help": ("inr.commands", "codec", ["compare", "--help"]),
    "inr-codec learn-init --help": ("inr.commands", "codec", ["learn-init", "--help"]),
    "decode 32² file": ("inr.commands", "codec", ["decode", str(GOLDEN), "-o", "{tmp}/out.png"]),
    "decode --init": ("inr.commands", "codec", ["decode", str(INIT_FILE), "-o", "{tmp}/out.png", "--init", str(INIT)]),
}

PROBE = """
import atexit, json, sys
def report():
    names = set(sys.modules)
    print("@@" + json.dumps({{
        "modules": len(names),
        "inr": sum(1 for n in names if n == "inr" or n.startswith("inr.")),
        "torch": "torch" in names,
        "lightning": any(n == "lightning" or n.startswith("lightning.") for n in names),
        "inr.tasks": any(n.startswith("inr.tasks") for n in names),
        "inr.experiments": any(n.startswith("inr.experiments") for n in names),
        "inr.methods": any(n.startswith("inr.methods") for n in names),
    }}), file=sys.__stderr__)
atexit.register(report)
sys.argv = ["cmd"] + {argv!r}
import importlib
getattr(importlib.import_module({module!r}), {function!r})()
"""


def measure(module: str, function: str, argv: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        argv = [a.replace("{tmp}", tmp) for a in argv]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", PROBE.format(module=module, function=function, argv=argv)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [line for line in done.stderr.splitlines() if line.startswith("@@")]
    if not lines:
        raise SystemExit(f"error: {' '.join(argv)} printed no report (exit {done.returncode}): {done.stderr[-400:]}")
    report = json.loads(lines[-1][2:])
    report["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report["wall"] = wall
    report["exit"] = done.returncode
    return report


def main() -> None:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="rows whose name contains this text")
    args = parser.parse_args()
    print(
        "| command | modules | inr.* | torch | Lightning | inr.tasks | inr.experiments | inr.methods | CPU s (median) "
        "| wall s (median) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (module, function, argv) in COMMANDS.items():
        if args.only not in name:
            continue
        runs = [measure(module, function, argv) for _ in range(args.repeats)]
        last = runs[-1]
        flags = ["yes" if last[k] else "no" for k in ("torch", "lightning", "inr.tasks", "inr.experiments", "inr.methods")]
        cpu = statistics.median(r["cpu"] for r in runs)
        wall = statistics.median(r["wall"] for r in runs)
        print(f"| {name} | {last['modules']} | {last['inr']} | {' | '.join(flags)} | {cpu:.2f} | {wall:.2f} |", flush=True)


if __name__ == "__main__":
    main()
