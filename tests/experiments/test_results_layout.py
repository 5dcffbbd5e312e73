"""Every comparison is a ``Comparison`` declaration that imports no other comparison, and the results.json of each
of the six validates against the one layout (``inr.experiments.results.load_results``)."""

import ast
import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from inr.experiments import comparison
from inr.experiments.comparison import Comparison
from inr.experiments.results import KINDS, NUMBERS, load_results

PACKAGE = Path(__file__).resolve().parents[2] / "inr" / "experiments"
SIX = ("compare_encoders", "compare_fields", "inverse", "view_synthesis", "shapes", "table1")
COMPARISONS = sorted(
    name
    for name in (p.stem for p in PACKAGE.glob("*.py"))
    if any(
        isinstance(v, type) and issubclass(v, Comparison) and v.__module__ == f"inr.experiments.{name}" and v.name == name
        for v in vars(importlib.import_module(f"inr.experiments.{name}")).values()
    )
)


def test_the_six_and_every_other_comparison_are_declarations_that_import_no_other(monkeypatch):
    assert set(SIX) <= set(COMPARISONS)
    ran = []

    def run(c, args, rows, opened):  # main hands its Comparison to the one run
        ran.append(c)
        return []

    monkeypatch.setattr(comparison, "parse", lambda c, argv: SimpleNamespace(threads=None))
    monkeypatch.setattr(comparison, "run", run)
    for name in COMPARISONS:
        tree = ast.parse((PACKAGE / f"{name}.py").read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {
            f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module for a in n.names
        }
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        others = {f"inr.experiments.{other}" for other in COMPARISONS if other != name}
        assert not imported & others, (name, imported & others)
        module = importlib.import_module(f"inr.experiments.{name}")
        declared = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Comparison) and v.__module__ == module.__name__
        ]
        assert len(declared) == 1, (name, declared)  # one Comparison, and its main runs it
        module.main([])
        assert type(ran[-1]) is declared[0], name


TREFOIL = str(PACKAGE.parents[1] / "data" / "trefoil.obj")
TOY = {
    "compare_encoders": ["--resolution", "16", "--steps", "2", "--width", "8", "--methods", "none,gaussian"],
    "compare_fields": ["--signal", "--resolution", "32", "--steps", "2", "--width", "8", "--methods", "none"],
    "inverse": ["--task", "ct", "--resolution", "16", "--angles", "4", "--steps", "2", "--width", "8", "--solver-iterations", "2", "--tv-weight", "1e-4"],
    "view_synthesis": ["--steps", "2", "--methods", "none", "--override", "--data.init_args.resolution", "8", "--data.init_args.views", "4",
                       "--data.init_args.heldout_views", "2", "--data.init_args.batch_size", "32", "--model.init_args.samples", "4",
                       "--model.init_args.eval_train_views", "1"],
    "shapes": ["--mesh", TREFOIL, "--steps", "2", "--methods", "none", "--batch-size", "256", "--test-points", "256", "--geometry-resolution", "8"],
    "table1": ["--kind", "text", "--count", "1", "--seeds", "2", "--resolution", "16", "--steps", "2", "--width", "8", "--methods", "none"],
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", SIX)
def test_every_comparisons_results_validate_against_the_one_layout(name, tmp_path, capsys):
    module = importlib.import_module(f"inr.experiments.{name}")
    argv = TOY[name]
    cut = argv.index("--override") if "--override" in argv else len(argv)
    rows = module.main([*argv[:cut], "--out", str(tmp_path), *argv[cut:]])
    results = load_results(tmp_path / "results.json")
    assert results.name == name and results.command.endswith(" ".join(argv[cut:])) and results.seeds
    assert len(results.rows) == len(rows) and {r["kind"] for r in results.rows} == set(KINDS)
    assert any(key in NUMBERS for row in results.rows for key in row)
    assert (tmp_path / "results.md").read_text().strip() == capsys.readouterr().out.strip()
