"""The meta-training driver (``inr.methods.meta``): the codec's learn-init and the learned-init study both reach it;
its settings are stated once (the codec's flags default to ``MetaSettings``, the study's rows and
``configs/meta_*.yaml`` are ``META``); an init is written, recorded and kept by what its record states."""

import json
from dataclasses import asdict, replace
from pathlib import Path

import imageio.v3 as iio
import pytest
import torch
import yaml

from inr.codec.architecture import Architecture
from inr.codec.cli import build_parser
from inr.codec.learn import learn_init
from inr.data.signal_sets import SignalSet
from inr.experiments import learned_init
from inr.experiments.comparison import parse
from inr.methods import meta
from inr.methods.meta import META, MetaSettings, inner_loop, meta_train
from inr.methods.registry import METHODS, Setting
from inr.resources import DATA_DIR
from inr.tasks import meta as meta_task

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


class Reached(Exception):
    """Raised by the driver's first step in place of training: who called it, with what."""


def test_the_codec_and_the_study_reach_the_one_driver(tmp_path, monkeypatch):
    def first_step(path, identity):
        raise Reached(path, identity)

    monkeypatch.setattr(meta, "recorded", first_step)
    photos, held = tmp_path / "photos", tmp_path / "held"
    photos.mkdir(), held.mkdir()
    photo = iio.imread(DATA_DIR / "astronaut.png")[:, :, :3]
    iio.imwrite(photos / "top.png", photo[:64, :64])
    iio.imwrite(held / "left.png", photo[64:128, :64])
    settings = MetaSettings(resolution=16, steps=1, inner_steps=1, test_signals=1, train_signals=2)
    with pytest.raises(Reached) as codec:
        learn_init(Architecture("siren", 6, 2), str(photos), str(held), settings, tmp_path / "inits")
    path, identity = codec.value.args
    assert path == tmp_path / "inits" / "siren_2x6.ckpt" and identity["described"]["settings"] == asdict(settings)

    study = learned_init.LearnedInit()
    flags = ["--kind", "natural", "--resolution", "16", "--train-signals", "4", "--test-signals", "1", "--meta-steps", "2"]
    p = study.protocol(parse(study, [*flags, "--out", str(tmp_path / "study")]))
    with pytest.raises(Reached) as studied:
        learned_init.meta_train(study, p, p.maml, Path(p.meta_dir))
    path, identity = studied.value.args
    assert path == Path(p.meta_dir) / "maml.ckpt" and identity["settings"]["inner_lr"] == META["natural"]["maml"].inner_lr


def test_the_study_meta_trains_with_META():
    study = learned_init.LearnedInit()
    for kind in META:
        p = study.protocol(parse(study, ["--kind", kind]))
        for name in ("reptile", "maml"):
            assert getattr(p, name) == META[kind][name]  # the defaults of the study's flags change nothing
        assert learned_init.KINDS[kind].resolution == META[kind]["reptile"].resolution  # its rows at the init's grid
    p = study.protocol(parse(study, ["--kind", "ct", "--meta-steps", "8", "--inner-steps", "3", "--resolution", "16"]))
    assert p.reptile == replace(META["ct"]["reptile"], steps=8, inner_steps=3, resolution=16)
    assert p.maml == replace(META["ct"]["maml"], steps=4, inner_steps=3, resolution=16)


def test_the_codec_flags_default_to_the_settings():
    args = build_parser().parse_args(["learn-init", "photos", "-o", "inits", "--width", "8"])
    defaults = MetaSettings()
    assert (args.resolution, args.steps, args.inner_steps, args.outer_lr, args.seed) == (
        defaults.resolution,
        defaults.steps,
        defaults.inner_steps,
        defaults.outer_lr,
        defaults.seed,
    )
    assert meta.ALGORITHMS == meta_task.ALGORITHMS


@pytest.mark.parametrize("kind", list(META))
def test_each_meta_config_states_META(kind):
    """configs/meta_<kind>.yaml is META[kind]["reptile"] for train.py: the same loops, signals and outer steps."""
    text = (CONFIGS / f"meta_{kind}.yaml").read_text()
    assert "inr.methods.meta.META" in text.split("seed_everything")[0]  # the header says where its settings come from
    config, settings = yaml.safe_load(text), META[kind]["reptile"]
    model, data = config["model"]["init_args"], config["data"]["init_args"]
    assert config["seed_everything"] == settings.seed
    assert (model["algorithm"], model["inner_loop_steps"], model["inner_loop_optimizer"]) == (
        settings.algorithm,
        settings.inner_steps,
        settings.inner_optimizer,
    )
    assert model["inner_loop_lr"] == settings.inner_lr and model["optimizer"]["init_args"]["lr"] == settings.outer_lr
    assert model["optimizer"]["class_path"] == "torch.optim.Adam"
    assert data["kind"] == kind and data["resolution"] == settings.resolution
    assert (data["train_signals"], data["test_signals"], data["signals_per_step"]) == (
        settings.train_signals,
        settings.test_signals,
        settings.signals_per_step,
    )
    assert config["trainer"]["max_steps"] == settings.steps
    assert data["steps_per_epoch"] == settings.steps // settings.validations


def test_the_inner_loop_is_the_settings_or_the_methods_own_fit():
    siren = METHODS["siren"].resolve(Setting(in_dim=2, train_side=8))
    assert inner_loop(siren, MetaSettings()) == ("adam", siren.lr)
    assert inner_loop(siren, MetaSettings(inner_lr=2.0, inner_optimizer="sgd")) == ("sgd", 2.0)


def test_an_init_is_written_recorded_and_kept(tmp_path, capsys):
    spec = Architecture("siren", 6, 2).resolve(8, 2)
    settings = MetaSettings(resolution=8, steps=2, inner_steps=1, signals_per_step=2, train_signals=4, test_signals=1)
    data = lambda: SignalSet(kind="text", train_signals=4, test_signals=1, resolution=8, signals_per_step=2)
    path, kept = tmp_path / "inits" / "siren.ckpt", []
    written = meta_train(spec, data(), settings, path, {"settings": "a"}, label="tiny", parts_only=True, extra={"mine": 1})
    checkpoint = torch.load(written, weights_only=True)
    assert written == path and checkpoint["mine"] == 1 and "hyper_parameters" not in checkpoint
    assert {k.split(".")[0] for k in checkpoint["state_dict"]} == {"network"}  # SIREN's encoder holds no tensors
    record = json.loads(path.with_suffix(".json").read_text())
    assert record["settings"] == "a" and set(record) == {"settings", "seconds", "scores"}
    assert "wrote " in capsys.readouterr().err

    meta_train(spec, data(), settings, path, {"settings": "a"}, label="tiny", check_kept=kept.append)
    assert kept == [path] and "tiny: the learned init in" in capsys.readouterr().err
    meta_train(spec, data(), settings, path, {"settings": "b"}, label="tiny")  # another identity: trained again, whole
    assert "hyper_parameters" in torch.load(path, weights_only=True)
    assert json.loads(path.with_suffix(".json").read_text())["settings"] == "b"
