"""The paper's settings table against the notebook's values, the configs and the comparison's rows."""

from pathlib import Path

import pytest
import yaml

from inr.experiments.compare_encoders import VARIANTS, Protocol
from inr.experiments.paper_settings import MAPPINGS, PAPER_SETTINGS, settings_table

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_the_notebooks_values():
    # the "Paper Experiments" cell of Experiments/2d_image_regression.ipynb: params = {'div2k': {...}, 'text': {...}}
    natural, text = PAPER_SETTINGS["natural"], PAPER_SETTINGS["text"]
    assert [natural.lr[m] for m in MAPPINGS] == [1e-2, 1e-2, 1e-3, 1e-3]
    assert [text.lr[m] for m in MAPPINGS] == [1e-3, 1e-3, 1e-3, 1e-3]  # 1e-3 for every mapping on text
    assert (natural.positional_scale, natural.gaussian_sigma, text.positional_scale, text.gaussian_sigma) == (6, 10, 5, 14)
    for s in (natural, text):
        assert (s.num_features, s.steps, s.resolution, s.width, s.depth, s.init) == (256, 2000, 512, 256, 3, "paper")
    assert [text.test_psnr[m] for m in MAPPINGS] == [18.40, 20.48, 27.57, 30.47]
    with pytest.raises(KeyError, match="siren"):
        natural.learning_rate("siren")
    assert settings_table().count("\n") == 3


@pytest.mark.parametrize("kind", ["natural", "text"])
def test_comparison_rows_take_the_kinds_learning_rates_and_scales(kind):
    p = Protocol(kind=kind)
    settings = PAPER_SETTINGS[kind]
    assert [VARIANTS[m].learning_rate(p) for m in MAPPINGS] == [settings.lr[m] for m in MAPPINGS]
    positional = VARIANTS["positional"].encoder(p).b
    assert positional.max().item() == pytest.approx(2**settings.positional_scale - 1)
    gaussian = VARIANTS["gaussian"].encoder(p)
    assert gaussian.out_dim == 2 * settings.num_features
    assert abs(float(gaussian.b.std()) - settings.gaussian_sigma) < 0.1 * settings.gaussian_sigma


def overlay(path):
    args = yaml.safe_load(path.read_text())["model"]["init_args"]
    return args["encoder"], args["optimizer"]["init_args"]["lr"]


@pytest.mark.parametrize("kind,folder", [("natural", CONFIGS / "encoders"), ("text", CONFIGS / "encoders" / "text")])
def test_encoder_overlays_carry_the_table(kind, folder):
    s = PAPER_SETTINGS[kind]
    for mapping in MAPPINGS:
        encoder, lr = overlay(folder / f"{mapping}.yaml")
        assert lr == s.lr[mapping], (kind, mapping)
        if mapping == "positional":
            assert encoder["init_args"]["sigma"] == 2**s.positional_scale
            assert encoder["init_args"]["num_frequencies"] == s.num_features // 2
            assert encoder["init_args"]["endpoint"] and encoder["init_args"]["minus_one"]
        if mapping == "gaussian":
            assert encoder["init_args"]["sigma"] == s.gaussian_sigma
            assert encoder["init_args"]["num_features"] == s.num_features


@pytest.mark.parametrize(
    "name,kind,resolution,steps",
    [("image.yaml", "natural", 256, 300), ("image_paper.yaml", "natural", 512, 2000), ("image_text.yaml", "text", 256, 300)],
)
def test_image_configs_use_the_paper_network_init_and_mapping(name, kind, resolution, steps):
    config = yaml.safe_load((CONFIGS / name).read_text())
    s = PAPER_SETTINGS[kind]
    network = config["model"]["init_args"]["network"]["init_args"]
    assert (network["width"], network["depth"], network["output_activation"], network["init"]) == (
        s.width,
        s.depth,
        "sigmoid",
        "paper",
    )
    encoder = config["model"]["init_args"]["encoder"]["init_args"]
    assert (encoder["sigma"], encoder["num_features"]) == (s.gaussian_sigma, s.num_features)
    assert config["model"]["init_args"]["optimizer"]["init_args"]["lr"] == s.lr["gaussian"]
    assert config["data"]["init_args"]["resolution"] == resolution and config["trainer"]["max_steps"] == steps
    assert config["data"]["init_args"]["split"] == "every_other"
