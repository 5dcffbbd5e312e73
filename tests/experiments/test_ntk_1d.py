"""The 1D NTK experiment end to end at toy size: figures, table, and the kernels it plots."""

import json

import pytest
import torch

from inr.experiments import ntk_1d


@pytest.mark.slow
def test_runs_writes_figures_and_table(tmp_path, capsys):
    runs = ntk_1d.main(["--out", str(tmp_path), "--length", "32", "--steps", "30", "--width", "64", "--log-every", "10"])
    for name in ("ntk_1d_kernels.png", "ntk_1d_dynamics.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    printed = capsys.readouterr().out
    assert sum(line.startswith("|") for line in printed.splitlines()) == 8  # header, separator, six encodings
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [r["encoding"] for r in rows] == list(runs) and len(rows) == 6
    for run in runs.values():
        assert run["steps"] == [0, 10, 20, 30]
        assert run["observed"]["train"][-1] < run["observed"]["train"][0]  # GD trained
        # at step 0 both predictions are the network's own initial outputs
        assert abs(run["empirical"]["train"][0] - run["observed"]["train"][0]) < 1e-4 * run["observed"]["train"][0]
        assert abs(run["analytic"]["test"][0] - run["observed"]["test"][0]) < 1e-4 * run["observed"]["test"][0]
    # the widest-band kernel fits the even samples fastest and generalises worst (Tancik et al. 2020, Fig. 3)
    by = {r["encoding"]: r for r in rows}
    assert by["gaussian σ=100"]["test_observed"] > 3 * by["gaussian σ=1"]["test_observed"]


def test_fourier_kernel_spectrum_is_its_eigenvalues():
    s = ntk_1d.Setup(length=32)
    view = ntk_1d.kernel_views(ntk_1d.make_encoders(s)["basic"], s)  # integer frequency: K is circulant
    # arccos near ρ = 1 turns round-off of 1e-16 into ~1e-8 (θ ≈ √(2(1 − ρ))): K is circulant to that level
    lam = view["eigenvalues"]
    torch.testing.assert_close(view["spectrum"].sort(descending=True).values, lam, rtol=1e-6, atol=1e-7 * float(lam[0]))
    none = ntk_1d.kernel_views(ntk_1d.make_encoders(s)["none"], s)  # raw coordinates: not stationary
    assert (none["spectrum"].sort(descending=True).values - none["eigenvalues"]).abs().max() > 1e-3 * none["eigenvalues"][0]
