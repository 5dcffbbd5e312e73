"""The learned-initialisation study's NTK figure (ntk.png, docs/learned_init_ntk.png): the kernel is taken on a
sub-grid of the signals' grid, and the test signals' power beside it is measured in the kernel's bands (cycles per
unit), on the signals' whole grid; numpy's DFT gives the same power; the figure is written as a PNG."""

from dataclasses import replace

import numpy as np
import pytest

from inr.experiments.comparison import parse
from inr.experiments.init_analysis import ntk_figure
from inr.experiments.learned_init import LearnedInit, explain


@pytest.mark.slow
def test_the_ntk_figure_puts_the_signals_power_in_the_kernels_bands(tmp_path):
    study = LearnedInit()
    argv = ["--kind", "natural", "--resolution", "16", "--test-signals", "2", "--train-signals", "4", "--out", str(tmp_path)]
    p = replace(study.protocol(parse(study, argv)), ntk_points=64, num_bands=4)  # the kernel on an 8 × 8 sub-grid
    rows = [{"method": m, "kind": "model", "history": {}} for m in ("paper", "torch")]
    why = explain(study, p, rows)
    assert why["ntk_grid"] == "8×8" and set(why["ntk"]) == {"paper", "torch"}
    edges = np.asarray(why["class_power_edges"])
    assert edges.tolist() == why["ntk"]["paper"]["edges"] == [0.0, 1.0, 2.0, 3.0, 4.0]  # the sub-grid's Nyquist, 4

    # numpy: |c_k|² of every test crop's channels on the whole 16² grid, averaged, then over each of those bands
    dm = study.signal_set(p)
    crops = np.stack([dm.signal_values(k, "test").numpy() for k in range(dm.test_count)]).astype(np.float64)
    power = (np.abs(np.fft.fft2(crops, axes=(1, 2)) / 256.0) ** 2).mean(axis=(0, 3))  # (16, 16)
    f = np.fft.fftfreq(16, 1 / 16)
    radius = np.hypot(*np.meshgrid(f, f, indexing="ij"))
    expected = []
    for b in range(4):
        upper = radius <= edges[b + 1] if b == 3 else radius < edges[b + 1]
        expected.append(power[(radius >= edges[b]) & upper & (radius > 0)].mean())
    np.testing.assert_allclose(why["class_power"], expected, rtol=1e-9)

    figure = ntk_figure(why["ntk"], why["class_power"], "toy")
    figure.savefig(tmp_path / "ntk.png", dpi=50)
    assert (tmp_path / "ntk.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
