"""The method registry and the protocols: the notebooks' values, the overlays generated from the registry, the
comparisons reading the same settings, and an overlay training through train.py."""

from dataclasses import replace
from pathlib import Path

import pytest
import torch
import yaml

from inr.encoders import GaussianEncoding, PositionalEncoding
from inr.errors import InputError
from inr.experiments import compare_encoders, compare_fields, view_synthesis
from inr.experiments.comparison import Context, Member, parse
from inr.methods import registry as methods
from inr.methods.protocols import MAPPINGS, PAPER_SETTINGS, PROTOCOLS, paper_row, settings_table
from inr.methods.registry import IMAGE_SETTING, METHODS, OVERLAYS, SHAPE_SETTINGS, Setting, method_names, overlay_text
from inr.networks import MLP, WIRE
from inr.run.cli import cli_main

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
    # 2d_CT / 3d_MRI: scale 3 / 4, σ 4 / 2, 2^linspace(0, s, 256 // d) − 1 per axis
    assert (PROTOCOLS["ct"].positional_scale, PROTOCOLS["ct"].gaussian_sigma, PROTOCOLS["ct"].positional_per_axis) == (3, 4, 128)
    assert (PROTOCOLS["mri"].positional_scale, PROTOCOLS["mri"].gaussian_sigma, PROTOCOLS["mri"].positional_per_axis) == (
        4,
        2,
        85,
    )
    with pytest.raises(KeyError, match="siren"):
        natural.learning_rate("siren")
    assert settings_table().count("\n") == 3
    assert paper_row("mri").endswith("none 26.14, basic 28.58, positional 32.23, gaussian 34.51.")


@pytest.mark.parametrize("kind", ["natural", "text", "ct", "mri"])
def test_the_mappings_take_each_protocols_learning_rates_and_scales(kind):
    # on the protocol's own training grid (512² every other pixel: 256 per axis; CT 512, MRI 96): the paper's values
    s = PROTOCOLS[kind]
    dim = 3 if kind == "mri" else 2
    setting = Setting(in_dim=dim, train_side=int(2 * s.nyquist), protocol=s)
    specs = {m: METHODS[m].resolve(setting) for m in MAPPINGS}
    assert [specs[m].lr for m in MAPPINGS] == [s.lr[m] for m in MAPPINGS]
    positional, _, _ = specs["positional"].build()
    assert isinstance(positional, PositionalEncoding) and positional.b.shape == (dim * s.positional_per_axis, dim)
    per_axis = positional.b[: s.positional_per_axis, 0].double()  # the notebooks' 2^linspace(0, s, n) − 1
    expected = 2.0 ** torch.linspace(0, s.positional_scale, s.positional_per_axis, dtype=torch.float64) - 1
    torch.testing.assert_close(per_axis, expected, rtol=1e-6, atol=1e-6)  # B is float32
    gaussian, network, _ = specs["gaussian"].build()
    assert isinstance(gaussian, GaussianEncoding) and gaussian.out_dim == 2 * s.num_features
    assert abs(float(gaussian.b.std()) - s.gaussian_sigma) < 0.1 * s.gaussian_sigma
    mlp = network(gaussian.out_dim, 3)
    assert isinstance(mlp, MLP) and (mlp.depth, mlp.init) == (3, "paper")


@pytest.mark.parametrize(
    "kind,side,top,sigma",
    [
        ("natural", 64, 16.0, 16 / 3),  # compare_encoders' default 128²: 64² training pixels, ν = 32: both capped at ν/2
        ("natural", 128, 32.0, 10.0),  # image.yaml, 256²: ν = 64; the top 63 capped at 32, 3σ = 30 already below
        ("natural", 256, 63.0, 10.0),  # the paper's 512²: its values
        ("text", 64, 16.0, 16 / 3),
        ("ct", 128, 7.0, 4.0),  # 128² CT, ν = 64: the paper's 7 and 3σ = 12 are below 32: its values
        ("mri", 16, 4.0, 4 / 3),  # 16³, ν = 8: top 15 and 3σ = 6 capped at 4
        ("mri", 96, 15.0, 2.0),
    ],
)
def test_the_grid_rule_keeps_the_papers_bands_below_half_the_nyquist(kind, side, top, sigma):
    setting = Setting(in_dim=3 if kind == "mri" else 2, train_side=side, protocol=PROTOCOLS[kind])
    positional, _, _ = METHODS["positional"].resolve(setting).build()
    gaussian, _, _ = METHODS["gaussian"].resolve(setting).build()
    n = PROTOCOLS[kind].positional_per_axis
    assert float(positional.b[:n, 0].max()) == pytest.approx(top, rel=1e-5)  # the top frequency, cycles per unit
    assert float(positional.b[0, 0]) == 0.0  # still 2^linspace(0, s', n) − 1: the low end stays at 0
    assert METHODS["gaussian"].resolve(setting).encoder.init_args["sigma"] == pytest.approx(sigma)
    assert gaussian.b.std().item() == pytest.approx(sigma, rel=0.1)
    # no band edge above half the training Nyquist
    assert top <= setting.nyquist / 2 + 1e-9 and 3 * sigma <= setting.nyquist / 2 + 1e-9


def test_the_grid_rule_refuses_a_positional_band_under_one_cycle():
    # three training samples per axis: ν = 1.5, so the band would end at 0.75 cycles per unit
    setting = Setting(in_dim=2, train_side=3, protocol=PROTOCOLS["ct"])
    with pytest.raises(InputError, match=r"leave the positional band 0.75 cycles .*below the basic mapping's 1") as exc:
        METHODS["positional"].resolve(setting)
    assert "\n" not in str(exc.value)
    assert METHODS["basic"].resolve(setting).lr == 1e-2  # the other mappings are unaffected


def test_mfn_input_scale_and_finer_decay_follow_the_setting():
    # GaborNet's released 256 on its 256² grid (ν 128), scaled down on coarser grids only; FINER's learning rate
    # reaches 0.1× at the run's last step
    assert METHODS["mfn"].resolve(Setting(in_dim=2, train_side=256)).network.init_args["input_scale"] == 256.0
    assert METHODS["mfn"].resolve(Setting(in_dim=2, train_side=1024)).network.init_args["input_scale"] == 256.0
    assert METHODS["mfn"].resolve(Setting(in_dim=2, train_side=64)).network.init_args["input_scale"] == 64.0
    spec = METHODS["finer"].resolve(Setting(in_dim=1, train_side=512, output_activation="none", steps=1000))
    _, network, optimizer = spec.build()
    opt = optimizer(network(1, 1).parameters())
    scheduler = spec.build_scheduler()(opt)
    for _ in range(1000):
        opt.step()
        scheduler.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(5e-5, rel=1e-9)
    assert spec.overlay()["scheduler"]["class_path"] == "torch.optim.lr_scheduler.ExponentialLR"
    assert "scheduler" not in METHODS["siren"].resolve(IMAGE_SETTING).overlay()
    assert METHODS["siren"].resolve(IMAGE_SETTING).network.init_args["bias_init"] == "torch"  # the reference code's


def test_the_rotated_positional_frame_is_the_notebooks():
    # 3d_simple_nerf.ipynb: bvals @ rot_z.T, then @ rot_x.T (45° each)
    h = 0.5**0.5
    rot_z = torch.tensor([[h, -h, 0], [h, h, 0], [0, 0, 1]], dtype=torch.float64)
    rot_x = torch.tensor([[1, 0, 0], [0, h, -h], [0, h, h]], dtype=torch.float64)
    setting = Setting(in_dim=3, train_side=32, protocol=PROTOCOLS["mri"])
    plain, _, _ = METHODS["positional"].resolve(setting).build()
    rotated, _, _ = METHODS["positional_rotated"].resolve(setting).build()
    expected = plain.b.double() @ rot_z.T @ rot_x.T
    torch.testing.assert_close(rotated.b.double(), expected, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="3-D coordinates only"):
        METHODS["positional_rotated"].resolve(IMAGE_SETTING)


def test_settings_that_follow_the_grid_and_the_dimension():
    # BACON's band limit is the training grid's Nyquist; the hash grid's finest level is the training grid
    wide, narrow = Setting(in_dim=2, train_side=128), Setting(in_dim=2, train_side=256)
    assert METHODS["bacon"].resolve(wide).network.init_args["bandwidth"] == 64
    assert METHODS["bacon"].resolve(narrow).network.init_args["bandwidth"] == 128
    assert METHODS["hashgrid"].resolve(wide).encoder.init_args["finest_resolution"] == 128
    hashed, _, _ = METHODS["hashgrid_hashed"].resolve(wide).build()
    dense, _, _ = METHODS["hashgrid"].resolve(wide).build()
    assert dense.dense_levels == 16 and hashed.dense_levels == 10
    assert METHODS["hashgrid_hashed"].resolve(wide).describe == "T = 2^12: levels 0–9 dense (N 16–55), 10–15 hashed (N 64–128)"
    _, wire, optimizer = METHODS["wire"].resolve(Setting(in_dim=1, train_side=512, output_activation="none")).build()
    assert isinstance(wire(1, 1), WIRE) and optimizer([torch.zeros(1, requires_grad=True)]).defaults["lr"] == 1e-3
    with pytest.raises(ValueError, match="2-D coordinates only"):
        METHODS["mfn"].resolve(Setting(in_dim=3))
    assert method_names("none, wire") == ["none", "wire"]
    with pytest.raises(ValueError, match="unknown fancy"):
        method_names("none,fancy")


@pytest.mark.parametrize("relative", sorted(OVERLAYS))
def test_every_overlay_file_is_generated_from_the_registry(relative):
    # a hand edit of configs/methods/*.yaml (or a registry change without regenerating) fails here
    assert (CONFIGS / "methods" / relative).read_text() == overlay_text(relative), (
        "regenerate with: python -m inr.methods --write-configs configs"
    )


def test_no_overlay_is_left_without_a_method():
    on_disk = {str(p.relative_to(CONFIGS / "methods")) for p in (CONFIGS / "methods").rglob("*.yaml")}
    assert on_disk == set(OVERLAYS)


@pytest.mark.parametrize("name,kind", [("image.yaml", "natural"), ("image_paper.yaml", "natural"), ("image_text.yaml", "text")])
def test_the_image_configs_model_is_the_registrys_gaussian_method(name, kind):
    config = yaml.safe_load((CONFIGS / name).read_text())
    side = config["data"]["init_args"].get("resolution", 256) // 2
    setting = Setting(in_dim=2, train_side=side, protocol=PROTOCOLS[kind], steps=config["trainer"]["max_steps"])
    expected = METHODS["gaussian"].resolve(setting).overlay()
    model = config["model"]["init_args"]
    assert {k: model[k] for k in ("encoder", "network", "optimizer")} == expected


def test_the_shape_notebooks_values():
    # Experiments/3d_shape_occupancy.ipynb: lr 5e-4 decayed ×0.1 per 5,000 of 10,000 steps, posenc scale 6 with
    # 256 // 3 per axis, Gaussian σ 12, make_network(8, 256); Table 1's "3D Shape (IoU)" row
    shape = PAPER_SETTINGS["shape"]
    assert [shape.lr[m] for m in MAPPINGS] == [5e-4] * 4 and shape.lr_decay == 0.1 and shape.steps == 10_000
    assert (shape.positional_scale, shape.positional_per_axis, shape.gaussian_sigma, shape.num_features) == (6, 85, 12, 256)
    assert (shape.width, shape.depth, shape.init, shape.sampling) == (256, 7, "paper", "fresh")
    assert shape.centred_input and shape.normalised_features
    assert paper_row("shape").endswith("reports IoU: none 0.864, basic 0.892, positional 0.960, gaussian 0.973.")
    cpu = PROTOCOLS["shape_cpu"]  # this package's CPU size (docs/shapes.md): a constant 1e-3, 4 × 128
    assert "shape_cpu" not in PAPER_SETTINGS and cpu.lr_decay is None and [cpu.lr[m] for m in MAPPINGS] == [1e-3] * 4
    assert (cpu.width, cpu.depth, cpu.steps) == (128, 4, 400)


def test_the_shape_protocol_decays_the_mappings_rate_tenfold_per_half_run():
    setting = replace(SHAPE_SETTINGS["shape"], protocol=replace(PROTOCOLS["shape"], steps=40))
    weight = torch.zeros(1, requires_grad=True)
    for name in MAPPINGS:
        spec = METHODS[name].resolve(setting)
        _, _, optimizer_factory = spec.build()
        optimizer = optimizer_factory([weight])
        scheduler = spec.build_scheduler()(optimizer)
        rates = [optimizer.param_groups[0]["lr"]]
        for _ in range(40):
            optimizer.step()
            scheduler.step()
            rates.append(optimizer.param_groups[0]["lr"])
        # lr_t = 5e-4 · 0.1^(t / 20): ×0.1 at the half run, ×0.01 at its end
        assert rates[0] == 5e-4 and rates[20] == pytest.approx(5e-5, rel=1e-9) and rates[40] == pytest.approx(5e-6, rel=1e-9)
    for name in ("siren", "hashgrid"):  # not the paper's mappings: a constant rate, and the overlay says so
        spec = METHODS[name].resolve(setting)
        assert spec.build_scheduler() is None and spec.overlay()["scheduler"] is None
    assert all(METHODS[m].resolve(SHAPE_SETTINGS["shape_cpu"]).build_scheduler() is None for m in MAPPINGS)
    # no other protocol decays: its overlays name no scheduler
    assert "scheduler" not in METHODS["gaussian"].resolve(IMAGE_SETTING).overlay()


def test_siren_and_the_hash_grid_on_fresh_points():
    # SIREN: the MLP's size and SIREN's shape rate 1e-4 on fresh points; 4 × width and 5e-4 on a grid
    cpu, paper = SHAPE_SETTINGS["shape_cpu"], SHAPE_SETTINGS["shape"]
    for setting, depth in ((cpu, 4), (paper, 7)):
        siren = METHODS["siren"].resolve(setting)
        assert (siren.network.init_args["depth"], siren.network.init_args["width"], siren.lr) == (depth, setting.width, 1e-4)
    assert (METHODS["siren"].resolve(IMAGE_SETTING).network.init_args["depth"], METHODS["siren"].resolve(IMAGE_SETTING).lr) == (
        4,
        5e-4,
    )
    # the hash grid: N 16 -> 512 without a training grid; T = 2^19, capped at 2^17 at CPU size
    hashed = {k: METHODS["hashgrid"].resolve(s).encoder.init_args for k, s in (("cpu", cpu), ("paper", paper))}
    assert [(h["base_resolution"], h["finest_resolution"], h["log2_hashmap_size"]) for h in hashed.values()] == [
        (16, 512, 17),
        (16, 512, 19),
    ]
    assert (
        METHODS["hashgrid_hashed"].resolve(replace(IMAGE_SETTING, hash_log2_cap=17)).encoder.init_args["log2_hashmap_size"] == 12
    )


@pytest.mark.parametrize("name,kind", [("shape.yaml", "shape_cpu"), ("shape_paper.yaml", "shape")])
def test_the_shape_configs_model_is_the_registrys_gaussian_method(name, kind):
    config = yaml.safe_load((CONFIGS / name).read_text())
    protocol = replace(PROTOCOLS[kind], steps=config["trainer"]["max_steps"])
    expected = METHODS["gaussian"].resolve(replace(SHAPE_SETTINGS[kind], protocol=protocol)).overlay()
    model = config["model"]["init_args"]
    assert {k: model.get(k) for k in ("encoder", "network", "optimizer", "scheduler")} == {"scheduler": None, **expected}


@pytest.mark.parametrize("name", ["siren", "positional"])
def test_a_shape_overlay_replaces_the_paper_configs_scheduler(name, capsys):
    # shape_paper.yaml decays its Gaussian row's rate; SIREN's overlay removes the scheduler, positional's keeps its own
    with pytest.raises(SystemExit) as exc:
        cli_main(["--config", "shape_paper.yaml", "--config", f"methods/shape/{name}.yaml", "--print_config"])
    assert exc.value.code in (0, None)
    model = yaml.safe_load(capsys.readouterr().out)["model"]["init_args"]
    expected = METHODS[name].resolve(SHAPE_SETTINGS["shape"]).overlay()
    assert model["network"]["class_path"] == expected["network"]["class_path"]
    if name == "siren":
        assert model["scheduler"] is None and expected["scheduler"] is None
    else:  # the printed config adds the class's defaults (last_epoch)
        assert model["scheduler"]["init_args"]["gamma"] == expected["scheduler"]["init_args"]["gamma"] == 0.1 ** (1 / 5000)


def test_wire_is_read_from_one_place_by_every_comparison():
    # compare_encoders, compare_fields and configs/methods/wire.yaml all resolve the registry's entry
    def spec(c, *argv):
        return c.spec(Context(c.protocol(parse(c, list(argv))), Member(None, 0), "wire"))

    image = spec(compare_encoders.Encoders(), "--resolution", "256")
    assert image.overlay() == METHODS["wire"].resolve(IMAGE_SETTING).overlay()
    assert yaml.safe_load((CONFIGS / "methods" / "wire.yaml").read_text())["model"]["init_args"] == image.overlay()
    field = spec(compare_fields.Fields(), "--signal", "--methods", "wire")
    assert field.network == image.network and field.lr == image.lr
    assert "network" in METHODS["gaussian"].resolve(view_synthesis.nerf_setting()).overlay()  # view_synthesis' overrides
    assert methods.METHODS is METHODS


@pytest.mark.slow
def test_an_overlay_trains_through_train_py(tmp_path, tiny_run_args):
    cli_main(
        [
            *tiny_run_args(tmp_path),
            "--config",
            "methods/wire.yaml",
            "--model.init_args.network.init_args.width",
            "16",
            "--trainer.max_steps",
            "2",
        ]
    )
    run = tmp_path / "image_wire" / "version_0"  # the overlay names the run after its method
    saved = yaml.safe_load((run / "config.yaml").read_text())["model"]["init_args"]
    assert saved["network"]["class_path"] == "inr.networks.WIRE" and saved["optimizer"]["init_args"]["lr"] == 1e-3
