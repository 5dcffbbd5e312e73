"""python -m inr.experiments.view_synthesis at toy size: every mapping and both baselines in one table, the
baselines scored exactly, the outputs written under --out and nothing in the working directory."""

import json
import math
from pathlib import Path

import pytest
import torch
import yaml

from inr.data import RaysDataModule
from inr.data.cameras import Intrinsics, look_at
from inr.data.posed_images import write_blender
from inr.data.rays import view_nyquist
from inr.experiments.comparison import Context, Member, parse
from inr.experiments.view_synthesis import ENCODINGS, NERF_NYQUIST, Views, main, nerf_setting
from inr.methods.protocols import PROTOCOLS
from inr.methods.registry import METHODS

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
    predictions = {b.name: b.make()[0] for b in VIEWS.baselines(Context(None, Member(None, 0), data=dm))}
    train = posed.images[posed.train_views]
    mean = predictions["mean training colour"]
    assert mean.shape == dm.heldout_images().shape
    torch.testing.assert_close(mean[0, :, 3, 5], train.reshape(-1, 3).mean(0))
    for v, held in enumerate(posed.heldout_views):
        centre = posed.poses[held, :3, 3]
        nearest = min(posed.train_views.tolist(), key=lambda t: float((posed.poses[t, :3, 3] - centre).norm()))  # brute force
        torch.testing.assert_close(predictions["nearest training view"][v], posed.images[nearest].permute(2, 0, 1))


def test_bad_arguments_exit_2_with_one_line(capsys):
    missing = ["--paper", "--override", "--data.init_args.path", "/nonexistent/lego"]  # the scene is fetched, not bundled
    for argv, words in ((["--steps", "0"], "--steps must be ≥ 1"), (missing, "/nonexistent/lego")):
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
    # the rule's lines under the table: the mappings paired per seed, the best against a baseline once per scene
    assert "- gaussian − none: " in out and " dB, 2 pairs from 1 signal: level (a difference needs 3 pairs)" in out
    assert ", one pair from 1 signal, each signal's seeds averaged against " in out


def test_seed_zero_is_the_row_a_single_seed_run_trains():
    assert parse(VIEWS, ["--seeds", "3"]).seed_list == (0, 1, 2) and nerf_setting(seed=0) == nerf_setting()
    args = parse(VIEWS, ["--steps", "2", "--override", "--data.init_args.resolution", "8", "--seeds", "5"])
    assert args.override == ["--data.init_args.resolution", "8", "--seeds", "5"] and args.seeds == 1  # all of it overrides


# NeRF's lego scene: camera_angle_x of its transforms files and its cameras' mean distance from the origin
LEGO_FOV, LEGO_DISTANCE = 0.6911112070083618, 4.031128875572952


def test_nerf_lego_yaml_is_the_registrys_gaussian_method_on_lego_views_at_100_pixels():
    """nerf_lego.yaml: lego's 100 training and 13 test views at 100², on black as the notebook's, with the registry's
    Gaussian method at those views' ν (the images are not bundled: ν from lego's camera)."""
    config = yaml.safe_load((CONFIGS / "nerf_lego.yaml").read_text())
    data = config["data"]["init_args"]
    assert (data["resolution"], data["heldout_split"], data["heldout_views"], data["background"]) == (100, "test", 13, "black")
    nyquist = view_nyquist(0.5 * 100 / math.tan(LEGO_FOV / 2), LEGO_DISTANCE, 1.5)
    expected = METHODS["gaussian"].resolve(nerf_setting(nyquist)).overlay()
    model = config["model"]["init_args"]
    assert model["encoder"]["init_args"]["sigma"] == pytest.approx(expected["encoder"]["init_args"]["sigma"], rel=1e-4)
    assert model["network"] == expected["network"] and model["optimizer"] == expected["optimizer"]


@pytest.mark.slow
def test_paper_runs_the_notebooks_protocol_on_its_views_and_prints_its_row(tmp_path):
    """--paper: 400² views, 1024 rays × 128 samples, 50,000 steps, 3 × 256 and the notebook's rates; on views with the
    notebook's camera (lego's field of view and distance) its frequencies stand as they are (σ = 26 per world unit,
    posenc_new's top 2^8 − 1), and the table's notes carry the paper's row."""
    gen = torch.Generator().manual_seed(0)
    eyes = torch.nn.functional.normalize(torch.randn(3, 3, generator=gen), dim=1) * LEGO_DISTANCE
    poses = look_at(eyes, torch.zeros(3), torch.tensor([0.0, 0.0, 1.0]))
    camera = Intrinsics.from_focal(400, 400, 0.5 * 400 / math.tan(LEGO_FOV / 2))
    scene = write_blender(tmp_path / "lego", torch.rand(3, 400, 400, 3, generator=gen), poses, camera,
                          {"train": torch.arange(2), "test": torch.tensor([2])})  # fmt: skip
    args = parse(VIEWS, ["--paper", "--base-config", "nerf.yaml", "--override", "--data.init_args.path", str(scene)])
    p = VIEWS.protocol(args)
    assert (p.kind, p.steps, p.views, p.nyquist) == ("nerf_paper", 50_000, 1, PROTOCOLS["nerf_paper"].nyquist)
    assert p.overrides[:6] == (
        "--data.init_args.resolution",
        "400",
        "--data.init_args.batch_size",
        "1024",
        "--model.init_args.samples",
        "128",
    )
    specs = {m: VIEWS.spec(Context(p, Member(None, 0), m)) for m in ("none", "basic", "positional", "gaussian")}
    assert {m: s.lr for m, s in specs.items()} == {"none": 1e-2, "basic": 5e-3, "positional": 5e-4, "gaussian": 5e-4}
    gaussian = specs["gaussian"].overlay()
    assert gaussian["network"]["init_args"]["width"] == 256 and gaussian["network"]["init_args"]["depth"] == 3
    assert gaussian["encoder"]["init_args"]["sigma"] == pytest.approx(26 * 3 / (2 * math.pi), rel=1e-9)
    assert "top 122 cycles/unit" in specs["positional"].describe  # (2^8 − 1)·3/2π = 121.8, not the grid rule's 103
    assert "none 22.41, basic 23.16, positional 25.60, gaussian 25.48" in VIEWS.notes(p, [], [])
