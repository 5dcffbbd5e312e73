"""No mapping on a text image: it learns at the paper's text learning rate and collapses at the natural one.

A collapsed network outputs one colour: its residual then holds all of the target's energy in every band
above DC, Δ_b = 1 exactly. Sized to run in seconds (64² text image, 32² training pixels, 3 × 64 MLP, 100
full-batch steps); measured there: lr 1e-3 (the paper's for text) ends with Δ = 0.976, 0.871, 0.947 in
bands 1–3 (band 0 holds only DC at this size), lr 1e-2 (the paper's for natural images) with 1.000
in every band.
"""

import numpy as np
import pytest

from inr.experiments.compare_encoders import Encoders
from inr.experiments.comparison import Member, parse, train_row
from inr.methods.protocols import PAPER_SETTINGS

ENCODERS = Encoders()
TEXT = ["--text", "--resolution", "64", "--steps", "100", "--width", "64"]


def final_band_errors(kind, tmp_path):
    """The row "none" on the text image with the learning rate of the paper's ``kind`` settings."""
    protocol = ENCODERS.protocol(parse(ENCODERS, [*TEXT, "--kind", kind]))
    row = train_row(ENCODERS, protocol, "none", Member(None, 0), tmp_path)
    # (15,) training-grid Δ_b of bands 1–15 after the last step, DC apart; band 0 (|k| < 1 on the 32² grid) holds only DC: NaN
    return np.array(row["history"]["errors"][-1])[1:]


@pytest.mark.slow
def test_no_mapping_learns_text_at_the_papers_rate_and_collapses_at_ten_times_it(tmp_path):
    paper = final_band_errors("text", tmp_path / "text_lr")
    assert PAPER_SETTINGS["text"].lr["none"] == 1e-3
    assert paper[:3].min() < 0.95, paper  # low bands are being learned: not a constant
    natural = final_band_errors("natural", tmp_path / "natural_lr")
    assert natural.min() > 0.999, natural  # a constant: no energy in any band above DC
