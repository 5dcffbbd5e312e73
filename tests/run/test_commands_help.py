"""The command floor's own tools (inr-mesh, the turntable, the member export) explain every option in --help."""

import argparse
import importlib

import pytest


@pytest.mark.parametrize("module", ["inr.run.mesh", "inr.run.turntable", "inr.run.export_member"])
def test_every_option_is_documented(module, monkeypatch, capsys):
    parsers = []
    original = argparse.ArgumentParser.parse_args

    def record(self, *args, **kwargs):
        parsers.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", record)
    with pytest.raises(SystemExit) as exc:
        importlib.import_module(module).main(["--help"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("usage: ")
    (parser,) = parsers
    assert parser.description and [a.dest for a in parser._actions if a.dest != "help" and not a.help] == []
