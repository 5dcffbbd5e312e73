"""The package's floors: imports only go downward (or stay on a floor), and no module imports itself in a cycle.

The floors, lowest first; a module may import from its own floor and the floors below it — at the top of a file,
inside a function or under ``if TYPE_CHECKING:`` alike. ``inr/__init__.py`` (which gathers every subpackage) and
``inr.commands`` (the console-script dispatcher) stand on top. One folder is one floor: a floor holding more than
one package must say in ``REASONS`` why its packages may import each other, and ``inr.codec`` and
``inr.experiments`` never share one (the comparison reads the codec; the codec reads no comparison).

    python tests/test_layering.py        # the house in numbers: rooms, floors, arrows, upward arrows, cycles
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOORS = [
    ("inr.errors", "inr.extras", "inr.sizes", "inr.modes", "inr.resources"),
    ("inr.io",),
    ("inr.encoders", "inr.networks", "inr.operators", "inr.spectral", "inr.geometry", "inr.metrics"),
    ("inr.ntk", "inr.conv_decoders"),
    ("inr.data",),
    ("inr.tasks",),
    ("inr.export",),
    ("inr.callbacks",),
    ("inr.run",),
    ("inr.methods",),
    ("inr.codec",),
    ("inr.experiments",),
    ("inr.commands",),
]
# why each floor of several packages holds them together; a floor widened without a line here fails the test
REASONS = {
    0: "single modules with no inr imports of their own: the error types, the optional-extras check, sizes, modes, "
    "the package's data paths",
    2: "the building blocks (mappings, networks, measurement operators, spectra, geometry, metrics): each is "
    "torch code on tensors, and a network may take an encoder's width or an operator a spectrum's grid",
    3: "the analyses of built networks: the NTK and the conv decoders' transfer matrices, neither imports the other",
}


def floor_of(module: str) -> int:
    for level, names in enumerate(FLOORS):
        if any(module == name or module.startswith(name + ".") for name in names):
            return level
    raise AssertionError(f"{module} lies on no floor: add its package to FLOORS")


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_imports(root: Path) -> dict[str, set[str]]:
    """module -> the ``inr`` modules it imports (anywhere in the file: functions and ``if TYPE_CHECKING:`` blocks
    included, since an annotation-only import still ties the two modules together)."""
    graph = {}
    for path in sorted((root / "inr").rglob("*.py")):
        name = module_name(path, root)
        targets = set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
        graph[name] = {t for t in targets if t.startswith("inr.")}
    return graph


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{src} -> {dst}" for src, dsts in graph.items() if src != "inr" for dst in dsts if floor_of(dst) > floor_of(src)
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles between modules (Tarjan's strongly connected components with more than one module)."""
    known = set(graph)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in filter(None, (resolve(t) for t in graph[v])):
            if w == v or w == "inr":
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v != "inr" and v not in index:
            visit(v)
    return found


def test_every_floor_of_several_packages_says_why():
    unexplained = [names for level, names in enumerate(FLOORS) if len(names) > 1 and not REASONS.get(level, "").strip()]
    assert unexplained == [], f"floors of several packages without a reason in REASONS: {unexplained}"
    assert floor_of("inr.codec") != floor_of("inr.experiments")
    assert floor_of("inr.methods") < min(floor_of("inr.codec"), floor_of("inr.experiments"))


def test_every_import_goes_down_a_floor_or_stays_on_it():
    assert upward_imports(package_imports(ROOT)) == []


def test_no_import_cycles_in_the_package():
    assert cycles(package_imports(ROOT)) == []


def test_the_checks_catch_an_upward_import_and_a_cycle(tmp_path):
    # a copy of two floors with one import added from a lower floor to a higher one, and one cycle
    pkg = tmp_path / "inr"
    for sub, text in {
        "errors.py": "",
        "tasks/__init__.py": "",
        "tasks/base.py": "from inr.run.cli import cli_main\n",  # tasks (floor 5) -> run (floor 8)
        "run/__init__.py": "",
        "run/cli.py": "from inr.run.session import Session\n",
        # cli <-> session, the way back for annotations only: still a cycle
        "run/session.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from inr.run.cli import cli_main\n",
    }.items():
        (pkg / sub).parent.mkdir(parents=True, exist_ok=True)
        (pkg / sub).write_text(text)
    graph = package_imports(tmp_path)
    assert upward_imports(graph) == ["inr.tasks.base -> inr.run.cli"]
    assert cycles(graph) == [["inr.run.cli", "inr.run.session"]]


def house(graph: dict[str, set[str]]) -> dict[str, int]:
    """Rooms (modules), floors, arrows (module -> inr module imports), upward arrows, cycles."""
    return {
        "rooms": len(graph),
        "floors": len(FLOORS),
        "arrows": sum(len(targets) for targets in graph.values()),
        "upward arrows": len(upward_imports(graph)),
        "cycles": len(cycles(graph)),
    }


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT
    graph = package_imports(root)
    print(", ".join(f"{k} {v}" for k, v in house(graph).items()))
    for arrow in upward_imports(graph):
        print("  up:", arrow)
