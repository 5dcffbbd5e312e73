"""The inverse-problem table's band columns: the DC error apart from the bands, pooled low/high errors."""

import pytest
import torch

from inr.experiments.inverse import COLUMNS
from inr.experiments.problems import score
from inr.experiments.runner import markdown_table
from inr.spectral import dc_relative_error


def test_mean_of_the_truth_has_learned_no_band_and_the_dc_term():
    truth = 0.2 + 0.6 * torch.rand(1, 32, 32, generator=torch.Generator().manual_seed(0))
    s = score(truth.mean().expand_as(truth).clone(), truth)
    assert s["dc"] == pytest.approx(0.0, abs=1e-6)  # float32 mean
    assert s["low"] == pytest.approx(1.0, rel=1e-6) and s["high"] == pytest.approx(1.0, rel=1e-6)
    shifted = score((truth + 0.05).clamp(0, 1), truth)
    assert shifted["dc"] == pytest.approx(float(dc_relative_error((truth + 0.05).double(), truth.double())), rel=1e-6)
    assert shifted["low"] < 1e-6 and shifted["high"] < 1e-6  # a shifted mean moves DC only
    header = markdown_table([{"method": "mean", "seconds": 0.0, **s}], COLUMNS).splitlines()[0]
    assert "DC error" in header and header.index("DC error") < header.index("low-band error")
