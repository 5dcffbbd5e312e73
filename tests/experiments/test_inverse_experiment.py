"""python -m inr.experiments.inverse: several seeds summarised, the notebooks' feature counts, the paper's runs, a
grid too large for memory refused before anything is allocated, threads restored."""

import json

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from inr.experiments import comparison
from inr.experiments.comparison import Member, parse
from inr.experiments.inverse import Inverse, main
from inr.experiments.results import load_results
from inr.methods.protocols import PROTOCOLS, paper_row
from inr.methods.registry import METHODS, Setting

INVERSE = Inverse()


def test_two_seeds_give_two_phantoms_and_a_mean_with_its_spread(tmp_path, capsys):
    threads = torch.get_num_threads()
    argv = ["--task", "ct", "--resolution", "16", "--angles", "8", "--steps", "2", "--width", "16", "--seeds", "2"]
    rows = main([*argv, "--threads", "1", "--solver-iterations", "5", "--out", str(tmp_path)])
    assert torch.get_num_threads() == threads  # --threads only inside the run
    assert sorted(r["seed"] for r in rows) == [0] * 8 + [1] * 8
    fbp = [r for r in rows if r["method"] == "filtered back-projection"]
    assert fbp[0]["psnr"] != pytest.approx(fbp[1]["psnr"], abs=1e-3)  # each seed draws its own phantom
    summary = {s["method"]: s for s in load_results(tmp_path / "results.json").summary}
    assert list(summary) == [
        "none",
        "basic",
        "positional",
        "gaussian",
        "filtered back-projection",
        "box-constrained least squares",
        "TV-regularised least squares",
        "grid optimisation",
    ]
    s = summary["filtered back-projection"]
    assert s["psnr"] == pytest.approx(np.mean([r["psnr"] for r in fbp])) and s["n"] == 2
    assert s["psnr_std"] == pytest.approx(np.std([r["psnr"] for r in fbp], ddof=1))  # the sample standard deviation
    printed = capsys.readouterr().out
    assert f"| filtered back-projection | {s['psnr']:.2f} ± {s['psnr_std']:.2f} |" in printed
    # the paper's Table 1 CT row (Shepp–Logan) under the table, in the file as printed
    reference = "Table 1; Shepp–Logan phantoms, 512², 20 angles) reports PSNR (dB): none 16.75, basic 23.31, positional 26.89, gaussian 28.33."
    assert reference in printed
    written = (tmp_path / "results.md").read_text().strip()
    assert written == printed.strip() and paper_row("ct") in written
    # the paired differences under the table: neighbouring mappings, then the best mapping against each baseline
    assert "\n- basic − none: " in written and "\n- gaussian − positional: " in written
    assert " dB, 2 pairs from 2 signals: level (a difference needs 3 pairs)" in written  # seed s: phantom s
    assert "TV weight λ = " in written and "(chosen on phantom seed 1000)" in written  # held out: not a test phantom
    assert "init paper (each seed's own draw), output bias init" in written  # the paper's stax initialisation
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results["rows"]) == 16 and len(results["summary"]) == 8 and results["seeds"] == [0, 1]
    for seed in (0, 1):
        assert np.load(tmp_path / f"seed_{seed}" / "gaussian.npy").shape == (1, 16, 16)
    grid = iio.imread(tmp_path / "reconstructions.png")  # 2 seeds × (ground truth + 8 methods): wider than tall
    assert grid.shape[1] > 3 * grid.shape[0] and grid.std() > 10
    tv = [r for r in rows if r["method"] == "TV-regularised least squares"]
    assert all(0 <= r["psnr"] < 100 for r in tv) and tv[0]["steps"] == 5


def test_the_old_seed_list_and_rows_still_run_with_a_note(tmp_path, capsys):
    rows = main(
        ["--task", "ct", "--resolution", "16", "--angles", "4", "--steps", "1", "--width", "8", "--seeds", "2", "3"]
        + ["--rows", "gaussian,classical", "--out", str(tmp_path)]
    )
    assert [(r["method"], r["seed"]) for r in rows] == [
        ("gaussian", 2),
        ("gaussian", 3),
        ("filtered back-projection", 2),
        ("filtered back-projection", 3),
    ]
    err = capsys.readouterr().err
    assert "note: --seeds 2 3 is the old list form: --seed 2 --seeds 2" in err
    assert "note: --rows is an old name of --methods: --methods gaussian,classical" in err


def test_paper_runs_print_their_expected_time_and_stop(tmp_path, capsys):
    """--paper sets the paper's size and test set; --estimate-only times a short probe of each network row on the
    first seed's problem and prints the total (here at a tiny size on the CPU), writing nothing."""
    ct = INVERSE.protocol(parse(INVERSE, ["--task", "ct", "--paper"]))
    assert ct.measurement.resolution == 512 and ct.seeds == tuple(range(8))
    mri = INVERSE.protocol(parse(INVERSE, ["--task", "mri", "--paper"]))
    assert mri.measurement.resolution == 96 and mri.seeds == tuple(range(6)) and mri.width == 256
    assert INVERSE.protocol(parse(INVERSE, ["--task", "ct", "--paper", "--seeds", "2"])).seeds == (0, 1)  # as given
    rows = main(
        ["--task", "ct", "--paper", "--estimate-only", "--resolution", "16", "--angles", "4", "--steps", "1000", "--width", "8"]
        + ["--seeds", "2", "--threads", "1", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert rows == [] and not (tmp_path / "out").exists()
    line = next(x for x in err.splitlines() if x.startswith("expected time: about "))
    assert "for 4 methods × 2 members × 1000 steps at 16 per axis" in line and "measured ms/step none " in line


def test_a_grid_beyond_memory_is_one_line_with_the_estimate_before_anything_is_allocated(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--task", "mri", "--resolution", "500", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1, err
    assert err[0].startswith("error: --task mri --resolution 500: a network's step on 125,000,000 grid points needs an estimated")
    assert "choose a smaller --resolution" in err[0] and not (tmp_path / "out").exists()


def test_the_paper_ran_ct_and_mri_only(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--task", "inpaint", "--paper"])
    assert exc.value.code == 2 and "the paper ran CT and MRI only" in capsys.readouterr().err


def test_positional_encoding_has_the_notebooks_feature_count():
    """2d_CT / 3d_MRI: 2^linspace(0, s, embedding_size // d) − 1 on each of the d axes, embedding_size 256 (on
    the notebooks' grids, 512² and 96³, the paper's scales)."""
    side = {"ct": 512, "mri": 96}
    encoder = lambda task, dim, name: (
        METHODS[name].resolve(Setting(in_dim=dim, train_side=side[task], protocol=PROTOCOLS[task])).build()[0]
    )
    ct, mri = encoder("ct", 2, "positional"), encoder("mri", 3, "positional")
    assert ct.b.shape == (256, 2) and mri.b.shape == (255, 3)
    expected = 2.0 ** np.linspace(0, 3, 128) - 1  # CT: posenc scale 3
    np.testing.assert_allclose(ct.b[:128, 0].double().numpy(), expected, rtol=1e-6)
    assert encoder("ct", 2, "gaussian").b.shape == (256, 2)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--threads", "0"], "--threads must be ≥ 1"),
        (["--width", "0"], "--width must be ≥ 1"),
        (["--tv-weight", "-1"], "--tv-weight must be positive"),
        (["--task", "pet"], "--task"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        main(["--task", "ct", *argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and words in err[0], err
    assert not (tmp_path / "out").exists()


def test_mri_cites_the_papers_atlas_row_and_image_tasks_cite_nothing(tmp_path, capsys):
    assert paper_row("mri").endswith("none 26.14, basic 28.58, positional 32.23, gaussian 34.51.")
    main(["--task", "inpaint", "--resolution", "16", "--methods", "classical", "--out", str(tmp_path)])
    assert "The paper" not in capsys.readouterr().out


def test_each_seed_draws_its_own_network_unless_an_init_seed_is_given(tmp_path):
    """--seeds varies the network's initialisation (the MLP's weights and the Gaussian B) with the problem;
    --init-seed N starts every network from seed N."""

    def first_layers(argv, seed):
        p = INVERSE.protocol(parse(INVERSE, ["--task", "ct", "--resolution", "16", "--angles", "4", "--width", "8", *argv]))
        model = INVERSE.model(comparison.context(INVERSE, p, "gaussian", Member(None, seed)))
        return model.network[0].weight.detach().clone(), model.encoder.b.detach().clone()

    (w0, b0), (w1, b1) = first_layers([], 0), first_layers([], 1)
    assert not torch.equal(w0, w1) and not torch.equal(b0, b1)
    (f0, c0), (f1, c1) = first_layers(["--init-seed", "0"], 0), first_layers(["--init-seed", "0"], 1)
    assert torch.equal(f0, f1) and torch.equal(c0, c1) and torch.equal(f0, w0)


def test_inpainting_is_scored_on_the_pixels_it_never_saw(tmp_path, capsys):
    """Inpainting's PSNR is the unobserved pixels'; the whole image's stands beside it (numpy on the saved
    reconstruction and the data's mask, independently)."""
    rows = main(
        ["--task", "inpaint", "--resolution", "16", "--methods", "classical,grid", "--steps", "3", "--out", str(tmp_path)]
    )
    p = INVERSE.protocol(parse(INVERSE, ["--task", "inpaint", "--resolution", "16"]))
    data = INVERSE.data(comparison.Context(p, Member(None, 0)))
    truth, mask = data.values_grid().double().numpy(), data.operator.mask.numpy()
    for row in rows:
        recon = np.load(tmp_path / "seed_0" / f"{row['method'].replace(' ', '_')}.npy").astype(np.float64)
        psnr = lambda sel, recon=recon: -10 * np.log10(np.mean((recon[:, sel] - truth[:, sel]) ** 2))
        assert row["psnr"] == pytest.approx(psnr(~mask), abs=1e-4)
        assert row["full_psnr"] == pytest.approx(psnr(mask | ~mask), abs=1e-4)
    cubic = next(r for r in rows if r["method"] == "cubic interpolation")  # exact on the observed pixels, so
    assert cubic["full_psnr"] - cubic["psnr"] == pytest.approx(10 * np.log10(mask.size / (~mask).sum()), abs=1e-4)
    out = capsys.readouterr().out
    assert "| method | held-out PSNR (dB) | whole-image PSNR (dB) | SSIM |" in out and "PSNR: the unobserved pixels" in out


def test_a_collapsed_fit_is_named_and_left_out_of_the_means(tmp_path, capsys):
    """A network that outputs a constant (here: its last layer zeroed by the test) is named under the table with its
    score and counted out of its method's means ("1 of 2"), not averaged in."""
    inverse = Inverse()
    original = inverse.model

    def model(ctx):
        m = original(ctx)
        if ctx.seed == 1:  # seed 1's network cannot leave its constant start: no weight reaches the output
            last = m.network[-2]
            torch.nn.init.zeros_(last.weight)
            last.weight.requires_grad_(False)
            last.bias.requires_grad_(False)
        return m

    inverse.model = model
    argv = ["--task", "ct", "--resolution", "16", "--angles", "4", "--steps", "2", "--width", "8", "--seeds", "2"]
    rows = comparison.main(inverse, [*argv, "--methods", "gaussian", "--out", str(tmp_path)])
    assert [r["collapsed"] for r in rows] == [0.0, 1.0]
    out = capsys.readouterr().out
    assert f"| gaussian | {rows[0]['psnr']:.2f} (1 of 2) |" in out
    assert (
        f"Collapsed to a constant, left out of the means and the paired differences: gaussian (seed 1; {rows[1]['psnr']:.2f} dB)."
        in out
    )
