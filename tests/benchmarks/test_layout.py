"""benchmarks/ is a set of scripts beside one shared module: no script imports another script (only ``common``),
``common`` imports no script, and every script answers ``--help``."""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
MODULES = {path.stem for path in BENCHMARKS.glob("*.py")}
SCRIPTS = sorted(path for path in BENCHMARKS.glob("*.py") if path.stem != "common")


def imported_names(source: str) -> set[str]:
    """Top-level names of every module ``source`` imports (in functions too; ``importlib.import_module`` and
    ``__import__`` of a literal name included); a relative import as its dots and name."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module.split(".")[0] if node.level == 0 else "." * node.level + (node.module or ""))
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) == "import_module" or getattr(node.func, "id", None) == "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value).split(".")[0])
    return names


def test_the_import_scan_sees_every_form_of_import():
    source = "import a.b\nfrom c import d\nfrom . import e\ndef f():\n    import g\n    importlib.import_module('h.i')\n"
    assert imported_names(source) == {"a", "c", ".", "g", "h"}


def test_no_script_imports_another_script():
    assert len(SCRIPTS) >= 10 and "common" in MODULES  # the scan looks at the real folder
    offending = {
        path.name: sorted(found)
        for path in SCRIPTS
        if (found := {n for n in imported_names(path.read_text()) if n in MODULES - {"common"} or n.startswith(".")})
    }
    assert offending == {}


def test_common_imports_no_script():
    assert imported_names((BENCHMARKS / "common.py").read_text()) & (MODULES - {"common"}) == set()


@pytest.fixture
def as_script(monkeypatch):
    """Run a script as ``python benchmarks/<script>`` would: benchmarks/ first on ``sys.path``; the ``common`` it
    imports is dropped again afterwards so that no other test sees it."""
    monkeypatch.setattr(sys, "path", [str(BENCHMARKS), *sys.path])
    had_common = "common" in sys.modules
    yield
    if not had_common:
        sys.modules.pop("common", None)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_help_works(script, as_script, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(script), "--help"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    assert stop.value.code == 0, out
    assert out.startswith(f"usage: {script.name}")
    # the description is the docstring's first line (argparse re-wraps it)
    docstring = ast.get_docstring(ast.parse(script.read_text()))
    assert " ".join(docstring.splitlines()[0].split()) in " ".join(out.split())
