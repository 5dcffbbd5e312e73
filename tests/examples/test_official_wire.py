"""examples/official_wire.py: another implementation of a registry method trains under the method's own settings,
seeds and protocol, and is reported beside it; a missing checkout is one line and nothing written."""

import json
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Stands in for the released modules/wire.py: the same constructor, a real network of another structure.
FAKE = textwrap.dedent(
    """
    import torch
    from torch import nn

    class INR(nn.Module):
        def __init__(self, in_features, hidden_features, hidden_layers, out_features, outermost_linear=True,
                     first_omega_0=30, hidden_omega_0=30.0, scale=10.0, **kwargs):
            super().__init__()
            # the registry row's WIRE(width=256, depth=4, ω₀ = 20, s₀ = 10) in the released signature
            assert (hidden_features, hidden_layers, first_omega_0, hidden_omega_0, scale) == (256, 3, 20.0, 20.0, 10.0)
            self.net = nn.Sequential(nn.Linear(in_features, 7), nn.Tanh(), nn.Linear(7, out_features))

        def forward(self, coords):
            assert coords.min() < 0, "the released scripts feed coordinates in [-1, 1]"
            return self.net(coords)
    """
)


def test_the_released_network_trains_beside_the_registry_row(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    from examples.official_wire import OFFICIAL_ROW, main

    (tmp_path / "repo" / "modules").mkdir(parents=True)
    (tmp_path / "repo" / "modules" / "wire.py").write_text(FAKE)
    out = tmp_path / "out"
    rows = main(["--wire-repo", str(tmp_path / "repo"), "--resolution", "16", "--steps", "3", "--seeds", "2", "--out", str(out)])
    assert [r["method"] for r in rows] == ["wire", "wire", OFFICIAL_ROW, OFFICIAL_ROW]
    assert [r["seed"] for r in rows] == [0, 1, 0, 1]
    official = [r for r in rows if r["method"] == OFFICIAL_ROW]
    assert all(r["params"] == 2 * 7 + 7 + 7 * 3 + 3 for r in official)  # the fake's network, not the registry's
    assert all(r["params"] > 1000 for r in rows if r["method"] == "wire")
    assert official[0]["lr"] == rows[0]["lr"] == 1e-3  # the method's optimizer, whatever the network
    saved = json.loads((out / "results.json").read_text())
    assert saved["protocol"]["released"]["first_omega_0"] == 20.0 and saved["protocol"]["released"]["scale"] == 10.0
    assert OFFICIAL_ROW in (out / "results.md").read_text()


def test_a_missing_checkout_is_one_line_and_nothing_written(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    from examples.official_wire import main

    with pytest.raises(SystemExit) as exc:
        main(["--wire-repo", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "modules/wire.py not found" in err[0]
    assert not (tmp_path / "out").exists()
