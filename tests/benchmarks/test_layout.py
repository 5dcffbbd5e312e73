"""benchmarks/ is a set of scripts beside one shared module: no script imports another script (only ``common``),
``common`` imports no script, every script answers ``--help``, and every link into a section of benchmarks/README.md
or benchmarks/NOTES.md (from those pages, the project README or docs/) names a heading that exists."""

from __future__ import annotations

import ast
import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
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


def heading_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces to ``-``.

    Example:
        >>> heading_anchor("Hash encoding: forward + backward throughput (`hashgrid.py`)")
        'hash-encoding-forward--backward-throughput-hashgridpy'
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found, seen = set(), {}
    for line in page.read_text().splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            anchor = heading_anchor(match.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")  # GitHub numbers repeated headings
    return found


def section_links() -> list[tuple[str, Path, str]]:
    """(where, target page, anchor) of every link to a section of benchmarks/README.md or NOTES.md."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(BENCHMARKS.glob("*.md"))]
    links = []
    for page in pages:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", page.read_text()):
            resolved = (page.parent / target).resolve() if target else page
            if resolved.parent == BENCHMARKS:
                links.append((page.relative_to(ROOT).as_posix(), resolved, anchor))
    return links


def test_links_into_benchmark_pages_name_real_headings():
    links = section_links()
    assert any(where == "docs/benchmark.md" for where, _, _ in links)  # the scan sees the docs' links too
    broken = [f"{where} -> {target.name}#{anchor}" for where, target, anchor in links if anchor not in anchors(target)]
    assert broken == []
