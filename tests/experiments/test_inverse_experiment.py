"""python -m inr.experiments.inverse: several seeds summarised, the notebooks' feature counts, threads restored."""

import json

import numpy as np
import pytest
import torch

from inr.experiments.inverse import METRICS, main, paper_reference, table
from inr.experiments.methods import METHODS, Setting
from inr.experiments.protocols import PROTOCOLS
from inr.experiments.runner import summarise


def test_two_seeds_give_two_phantoms_and_a_mean_with_its_spread(tmp_path, capsys):
    threads = torch.get_num_threads()
    rows = main(
        [
            "--task",
            "ct",
            "--resolution",
            "16",
            "--angles",
            "8",
            "--steps",
            "2",
            "--width",
            "16",
            "--seeds",
            "0",
            "1",
            "--threads",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    assert torch.get_num_threads() == threads  # --threads only inside the run
    assert [r["seed"] for r in rows] == [0] * 6 + [1] * 6
    fbp = [r for r in rows if r["method"] == "filtered back-projection"]
    assert fbp[0]["psnr"] != pytest.approx(fbp[1]["psnr"], abs=1e-3)  # each seed draws its own phantom
    summary = {s["method"]: s for s in summarise(rows, METRICS)}
    assert list(summary) == ["none", "basic", "positional", "gaussian", "filtered back-projection", "grid optimisation"]
    s = summary["filtered back-projection"]
    assert s["psnr"] == pytest.approx(np.mean([r["psnr"] for r in fbp])) and s["n"] == 2
    assert s["psnr_std"] == pytest.approx(np.std([r["psnr"] for r in fbp], ddof=1))  # the sample standard deviation
    printed = capsys.readouterr().out
    assert f"| filtered back-projection | {s['psnr']:.2f} ± {s['psnr_std']:.2f} |" in printed
    # the paper's Table 1 CT row (Shepp–Logan) under the table, in the file as printed
    reference = "Table 1; Shepp–Logan phantoms, 512², 20 angles) reports PSNR (dB): none 16.75, basic 23.31, positional 26.89, gaussian 28.33."
    assert reference in printed
    assert (tmp_path / "results.md").read_text().strip() == table(rows) + "\n\n" + paper_reference("ct")
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results["rows"]) == 12 and len(results["summary"]) == 6
    for seed in (0, 1):
        assert np.load(tmp_path / f"seed_{seed}" / "gaussian.npy").shape == (1, 16, 16)


def test_positional_encoding_has_the_notebooks_feature_count():
    """2d_CT / 3d_MRI: 2^linspace(0, s, embedding_size // d) − 1 on each of the d axes, embedding_size 256."""
    encoder = lambda task, dim, name: METHODS[name].resolve(Setting(in_dim=dim, protocol=PROTOCOLS[task])).build()[0]
    ct, mri = encoder("ct", 2, "positional"), encoder("mri", 3, "positional")
    assert ct.b.shape == (256, 2) and mri.b.shape == (255, 3)
    expected = 2.0 ** np.linspace(0, 3, 128) - 1  # CT: posenc scale 3
    np.testing.assert_allclose(ct.b[:128, 0].double().numpy(), expected, rtol=1e-6)
    assert encoder("ct", 2, "gaussian").b.shape == (256, 2)


def test_bad_threads_exit_2_with_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--task", "ct", "--threads", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and err[0].startswith("error: ")


def test_mri_cites_the_papers_atlas_row_and_image_tasks_cite_nothing():
    assert paper_reference("mri").endswith("none 26.14, basic 28.58, positional 32.23, gaussian 34.51.")
    assert paper_reference("inpaint") is None and paper_reference("superres") is None
