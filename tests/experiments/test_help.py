"""Every ``python -m inr.experiments.<name>`` (and ``python -m inr.methods``) explains itself: usage under its command name, its docstring's first
paragraph whole, every option with a help text; and a bad argument is one line, exit 2."""

import importlib
import pkgutil

import pytest

import inr.experiments
from inr.experiments.comparison import ComparisonParser
from inr.run.command import ExperimentParser

COMMANDS = sorted(
    f"inr.experiments.{m.name}"
    for m in pkgutil.iter_modules(inr.experiments.__path__)
    if m.name not in ("runner", "comparison")
    and not m.ispkg
    and hasattr(importlib.import_module(f"inr.experiments.{m.name}"), "main")
) + ["inr.methods.__main__"]


def test_the_commands_are_found():
    names = {"compare_encoders", "compare_fields", "inverse", "view_synthesis", "ntk_1d", "shapes"}
    assert {f"inr.experiments.{n}" for n in names} | {"inr.methods.__main__"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_names_the_command_and_documents_every_option(name, monkeypatch, capsys):
    module = importlib.import_module(name)
    parsers = []
    for kind in (ExperimentParser, ComparisonParser):  # the toolkit's commands, and the comparisons (jsonargparse)

        def record(self, *args, original=kind.parse_args, **kwargs):
            parsers.append(self)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(kind, "parse_args", record)
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    (parser,) = parsers
    # usage under the command's name: python -m inr.experiments.<name>, or the console command that runs it
    assert parser.prog == f"python -m {name.removesuffix('.__main__')}" or parser.prog.startswith("inr-")
    assert out.startswith(f"usage: {parser.prog}")
    doc = (module.main.__doc__ if name == "inr.methods.__main__" else module.__doc__).strip().split("\n\n")[0]
    assert parser.description == " ".join(doc.split())  # the whole first paragraph, not its first line
    undocumented = [a.dest for a in parser._actions if a.dest != "help" and not (a.help or "").strip()]
    assert undocumented == []


REQUIRED = {"compare_fields": ["--signal"], "inverse": ["--task", "ct"], "shapes": ["--mesh", "data/trefoil.obj"]}


@pytest.mark.parametrize("name", ["compare_encoders", "compare_fields", "inverse", "ntk_1d", "shapes", "view_synthesis"])
def test_an_unknown_option_is_one_line_and_exit_2(name, capsys):
    module = importlib.import_module(f"inr.experiments.{name}")
    with pytest.raises(SystemExit) as exc:
        module.main([*REQUIRED.get(name, []), "--no-such-option", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "no-such-option" in err[0]
