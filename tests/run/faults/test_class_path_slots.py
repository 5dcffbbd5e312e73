"""A downloaded run's config.yaml or checkpoint builds only classes of each slot's kind: no callable of a trusted
package runs (``torch.utils.collect_env.run``, Lightning's ``signal_connector.call`` with a shell, ``torch.hub.load``
of the run's own ``hubconf.py``), whichever slot it is put in and whichever loader reads it."""

import importlib
import inspect
import shutil
import subprocess
import sys

import pytest
import torch
import yaml

from inr.errors import InputError
from inr.io.trusted import refuse_untrusted_imports
from inr.run.model_loader import load_model
from inr.tasks import INRModule
from inr.tasks.buildable import SlotChecker, check_buildable, slots

HUBCONF = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n\ndef evil(*a, **k):\n    return None\n"


def attacks(marker, run) -> dict[str, dict]:
    """Each callable the loaders once called with a crafted run's arguments, set to create ``marker``."""
    return {
        "collect_env.run": {"class_path": "torch.utils.collect_env.run", "init_args": {"command": f"touch {marker}"}},
        "signal_connector.call": {
            "class_path": "lightning.pytorch.trainer.connectors.signal_connector.call",
            "init_args": {"args": f"touch {marker}", "shell": True},
        },
        "torch.hub.load": {
            "class_path": "torch.hub.load",
            "init_args": {"repo_or_dir": ".", "model": "evil", "source": "local", "trust_repo": True},
        },
    }


SLOTS = ["model", "encoder", "network", "optimizer", "scheduler"]


def place(section: dict, slot: str, attack: dict) -> None:
    """``attack`` put in ``slot`` of a model section (class_path + init_args)."""
    if slot == "model":
        section["class_path"] = attack["class_path"]
        section["init_args"] = {**section.get("init_args", {}), **attack["init_args"]}
    else:
        section.setdefault("init_args", {})[slot] = attack


@pytest.fixture
def crafted(trained_run, tmp_path):
    """(run directory copy with a hubconf.py that writes the marker, the marker)."""
    run = tmp_path / "downloaded"
    shutil.copytree(trained_run, run)
    marker = tmp_path / "ran"
    (run / "hubconf.py").write_text(HUBCONF.format(marker=str(marker)))
    return run, marker


@pytest.mark.parametrize("slot", SLOTS)
@pytest.mark.parametrize("name", ["collect_env.run", "signal_connector.call", "torch.hub.load"])
def test_a_callable_in_a_run_config_never_runs(crafted, monkeypatch, slot, name):
    run, marker = crafted
    config = yaml.safe_load((run / "config.yaml").read_text())
    place(config["model"], slot, attacks(marker, run)[name])
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.chdir(run)  # torch.hub's source='local' and the shell both act here
    with pytest.raises(InputError, match="config.yaml") as refusal:
        load_model(run / "checkpoints" / "last.ckpt")
    assert not marker.exists(), "the callable ran"
    assert "slot builds only subclasses of" in str(refusal.value), refusal.value
    assert "\n" not in str(refusal.value)


@pytest.mark.parametrize("slot", SLOTS)
@pytest.mark.parametrize("name", ["collect_env.run", "signal_connector.call", "torch.hub.load"])
def test_a_callable_in_a_checkpoints_hyper_parameters_never_runs(crafted, monkeypatch, slot, name):
    run, marker = crafted
    checkpoint = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)
    attack = attacks(marker, run)[name]
    if slot == "model":
        checkpoint["hyper_parameters"]["_class_path"] = attack["class_path"]
        checkpoint["hyper_parameters"].update(attack["init_args"])
    else:
        checkpoint["hyper_parameters"][slot] = attack
    torch.save(checkpoint, run / "checkpoints" / "crafted.ckpt")
    monkeypatch.chdir(run)
    with pytest.raises(InputError, match="crafted.ckpt") as refusal:
        INRModule.load_from_checkpoint(run / "checkpoints" / "crafted.ckpt")
    assert not marker.exists(), "the callable ran"
    assert "slot builds only subclasses of" in str(refusal.value) or "holds data" in str(refusal.value), refusal.value


@pytest.mark.slow
def test_the_mesh_command_refuses_the_optimizer_that_runs_a_command(crafted):
    """As found: `inr-mesh` exited 0 and the command had run. Now one line, exit 2, no mesh, no marker."""
    run, marker = crafted
    config = yaml.safe_load((run / "config.yaml").read_text())
    place(config["model"], "optimizer", attacks(marker, run)["collect_env.run"])
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [sys.executable, "-m", "inr.run.mesh", "--ckpt", "checkpoints/last.ckpt", "--out", "out.ply"],
        cwd=run,
        capture_output=True,
        text=True,
        timeout=120,
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr[-2000:]
    assert "torch.utils.collect_env.run" in errors[0] and "an optimizer slot" in errors[0], errors
    assert not marker.exists() and not (run / "out.ply").exists()


@pytest.mark.parametrize(
    "section,match",
    [
        (
            {"class_path": "inr.tasks.ImageFitting", "init_args": {"render_chunk": {"class_path": "inr.networks.MLP"}}},
            "holds data",
        ),
        ({"class_path": "inr.tasks.ImageFitting", "init_args": {"network": "torch.utils.collect_env.run"}}, "dotted name"),
        (
            {
                "class_path": "inr.tasks.ImageFitting",
                "init_args": {"encoder": {"class_path": "inr.encoders.GaussianEncoding", "__path__": "x.yaml"}},
            },
            "'__path__'",
        ),
        (
            {"class_path": "inr.tasks.ImageFitting", "init_args": {"network": {"class_path": "torch.nn.Linear"}}},
            "refused before import",
        ),
        (
            {"class_path": "inr.tasks.ImageFitting", "init_args": {"encoder": {"class_path": "inr.encoders.fourier_features"}}},
            "not a class|does not import",
        ),
        (
            {
                "class_path": "inr.tasks.ImageFitting",
                "init_args": {"optimizer": {"class_path": "torch.optim.lr_scheduler.StepLR"}},
            },
            "class of another kind",
        ),
        ({"class_path": "inr.tasks.MetaLearning", "init_args": {"task": "torch.utils.collect_env.run"}}, "a task slot"),
        (
            {
                "class_path": "inr.tasks.ImageFitting",
                "init_args": {
                    "encoder": {
                        "class_path": "inr.encoders.AffineEncoding",
                        "init_args": {"encoder": {"class_path": "inr.networks.MLP"}},
                    }
                },
            },
            "an encoder slot",
        ),
    ],
)
def test_class_paths_outside_their_slots_kind_are_refused(section, match):
    with pytest.raises(InputError, match=match):
        check_buildable(section, "config.yaml")


def test_the_shipped_configs_model_sections_pass():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    checked = 0
    for path in sorted((root / "configs").glob("*.yaml")):
        config = yaml.safe_load(path.read_text()) or {}
        if isinstance(config.get("model"), dict):  # the section the loaders build
            check_buildable(config["model"], str(path), "model")
            checked += 1
        trainer = config.get("trainer") or {}
        for callback in trainer.get("callbacks") or []:
            check_buildable(callback, str(path), "callbacks")
        if isinstance(trainer.get("logger"), dict):
            check_buildable(trainer["logger"], str(path), "logger")
    assert checked >= 20


def _callables() -> list[str]:
    """Every public callable (function, class, builtin) of the modules of torch, lightning and inr in memory."""
    importlib.import_module("inr.run.mesh")
    names = set()
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] not in ("torch", "lightning", "inr") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if attr.startswith("_") or not callable(value):
                continue
            names.add(f"{module_name}.{attr}")
    return sorted(names)


def test_a_fuzz_over_the_callables_of_torch_lightning_and_inr_accepts_only_classes_of_the_slots_kind():
    """Every callable of these packages in every slot: accepted only when it is a class of the slot's kind,
    imported from that kind's modules; nothing the check imports is called (a class of the kind is what the
    slot is for)."""
    names = _callables()
    assert len(names) > 5000, len(names)
    table = slots()
    checker = SlotChecker("config.yaml", table, set(), frozenset())  # check_buildable's own, once for all names
    accepted = {slot: [] for slot in table}
    with refuse_untrusted_imports("config.yaml"):
        outcomes = {}
        for name in names:
            for slot in table:
                try:
                    checker.check_class(name, slot, "model.class_path")
                    outcomes[name, slot] = True
                except InputError:
                    outcomes[name, slot] = False
    for (name, slot), passed in outcomes.items():
        rule = table[slot]
        if passed:
            module, _, attr = name.rpartition(".")
            obj = getattr(sys.modules[module], attr)
            assert inspect.isclass(obj) and issubclass(obj, rule.kind), (slot, name)
            assert any(module == m or module.startswith(m + ".") for m in rule.modules), (slot, name)
            accepted[slot].append(name)
    assert "torch.optim.Adam" in accepted["optimizer"] and "inr.encoders.GaussianEncoding" in accepted["encoder"]
    assert not any("collect_env" in n or "hub" in n.split(".") for group in accepted.values() for n in group)
