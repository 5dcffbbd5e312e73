"""python -m inr.experiments.view_synthesis at toy size: every mapping and both baselines in one table, the
baselines scored exactly, the outputs written under --out and nothing in the working directory."""

import json
import math
from pathlib import Path

import pytest
import torch
import yaml

from inr.data import RaysDataModule
from inr.experiments.comparison import parse
from inr.experiments.methods import METHODS
from inr.experiments.view_synthesis import ENCODINGS, NERF_NYQUIST, Views, main, nerf_setting

VIEWS = Views()

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

# 16×16 views, 8 samples per ray, 3 steps: the experiment's plumbing, not its result
TOY = [
    "--steps",
    "3",
    "--threads",
    "1",
    "--override",
    "--data.init_args.resolution",
    "16",
    "--data.init_args.views",
    "6",
    "--data.init_args.heldout_views",
    "2",
    "--data.init_args.batch_size",
    "64",
    "--model.init_args.samples",
    "8",
    "--model.init_args.eval_train_views",
    "2",
]


@pytest.mark.slow
def test_every_mapping_and_the_baselines_in_one_table_written_under_out_only(tmp_path, monkeypatch, capsys):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # a stray config.yaml, lightning_logs/ or runs/ would land here
    threads = torch.get_num_threads()
    rows = main(["--out", str(tmp_path / "out"), *TOY])
    assert torch.get_num_threads() == threads  # --threads applies to the experiment only
    assert [r["method"] for r in rows] == [*ENCODINGS, "mean training colour", "nearest training view"]
    assert list(cwd.iterdir()) == []
    out = capsys.readouterr().out
    for name in (*ENCODINGS, "mean training colour", "nearest training view"):
        assert f"| {name} |" in out
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [r["method"] for r in saved["rows"]] == [r["method"] for r in rows]
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"results.md", "results.json", "renders.npz", "views.png"}
    for row in rows[: len(ENCODINGS)]:
        assert row["params"] > 0 and row["seconds"] > 0 and 0 < row["psnr"] < 60


def test_baselines_are_the_mean_colour_and_the_nearest_camera_s_image():
    dm = RaysDataModule(resolution=8, views=5, heldout_views=2)
    dm.setup("fit")
    posed = dm.posed
    predictions = {b.name: b.make()[0] for b in VIEWS.baselines(None, dm)}
    train = posed.images[posed.train_views]
    mean = predictions["mean training colour"]
    assert mean.shape == dm.heldout_images().shape
    torch.testing.assert_close(mean[0, :, 3, 5], train.reshape(-1, 3).mean(0))
    for v, held in enumerate(posed.heldout_views):
        centre = posed.poses[held, :3, 3]
        nearest = min(posed.train_views.tolist(), key=lambda t: float((posed.poses[t, :3, 3] - centre).norm()))  # brute force
        torch.testing.assert_close(predictions["nearest training view"][v], posed.images[nearest].permute(2, 0, 1))


def test_bad_arguments_exit_2_with_one_line(capsys):
    for argv, words in ((["--steps", "0"], "--steps must be ≥ 1"), (["--paper"], "--paper: view_synthesis runs")):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and words in err[0], err


def test_nerf_yaml_is_the_registrys_gaussian_method_on_its_views():
    """nerf.yaml's field is the registry's Gaussian method at the views' ν (the grid rule from the notebook's 400²
    lego views), which ``data_nyquist`` measures from the data; 13 held-out views as the notebook's test set."""
    nyquist = VIEWS.protocol(parse(VIEWS, [])).nyquist
    assert nyquist == pytest.approx(NERF_NYQUIST, rel=1e-4)
    config = yaml.safe_load((CONFIGS / "nerf.yaml").read_text())
    model = config["model"]["init_args"]
    expected = METHODS["gaussian"].resolve(nerf_setting(nyquist)).overlay()
    assert model["encoder"]["init_args"]["sigma"] == pytest.approx(expected["encoder"]["init_args"]["sigma"], rel=1e-4)
    assert {k: v for k, v in model["encoder"]["init_args"].items() if k != "sigma"} == {
        k: v for k, v in expected["encoder"]["init_args"].items() if k != "sigma"
    }
    assert model["network"] == expected["network"] and model["optimizer"] == expected["optimizer"]
    assert config["data"]["init_args"]["heldout_views"] == 13
    # the notebook's σ = 26 per world unit on its 3-unit cube (12.41 cycles per unit), capped at 3σ = ν/2 here
    assert 26 * 3 / (2 * math.pi) > nyquist / 6
    assert expected["encoder"]["init_args"]["sigma"] == pytest.approx(nyquist / 6, rel=1e-3)


@pytest.mark.slow
def test_seeds_train_every_network_row_per_seed_and_report_mean_and_std_over_them(tmp_path, capsys):
    rows = main(["--seeds", "2", "--methods", "none,gaussian", "--out", str(tmp_path), *TOY])
    models = [r for r in rows if r["kind"] == "model"]
    assert [(r["method"], r["seed"]) for r in models] == [("none", 0), ("none", 1), ("gaussian", 0), ("gaussian", 1)]
    # the seed reaches the run: initialisation (and the Gaussian draw) differ between seeds, so the scores do
    assert models[0]["psnr"] != models[1]["psnr"] and models[2]["psnr"] != models[3]["psnr"]
    out = capsys.readouterr().out
    assert "mean ± std over seeds 0–1" in out
    mean = sum(r["psnr"] for r in models[2:]) / 2
    std = abs(models[2]["psnr"] - models[3]["psnr"]) / math.sqrt(2)  # sample std of two values
    line = next(ln for ln in out.splitlines() if ln.startswith("| gaussian |"))
    assert f"{mean:.2f} ± {std:.2f}" in line


def test_seed_zero_is_the_row_a_single_seed_run_trains():
    assert parse(VIEWS, ["--seeds", "3"]).seed_list == (0, 1, 2) and nerf_setting(seed=0) == nerf_setting()
    args = parse(VIEWS, ["--steps", "2", "--override", "--data.init_args.resolution", "8", "--seeds", "5"])
    assert args.override == ["--data.init_args.resolution", "8", "--seeds", "5"] and args.seeds == 1  # all of it overrides
