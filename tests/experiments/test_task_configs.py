"""Every task config's model block is the registry's gaussian method at that config's own grid
(inr/methods/registry.py), or its header says where and why it differs: each differing setting named as
``<key> <config value> (registry <registry value>)``, and nothing else named so. Settings left out of a block are
compared at their class's defaults."""

import importlib
import inspect
import itertools
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from inr.experiments.problems import Measurement
from inr.methods.protocols import PROTOCOLS
from inr.methods.registry import METHODS, SHAPE_SETTINGS, Setting

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def own_grid(name: str, config: dict) -> Setting:
    """Where the config trains, as the comparison of the same task sets it: the training grid (or, for an inverse
    problem, what its loss sees: ``problems.Measurement.nyquist``), the task's protocol, output and step count."""
    data, steps = config["data"]["init_args"], config["trainer"]["max_steps"]
    if name in ("inpaint", "superres", "ct", "mri"):
        m = Measurement(name, data["resolution"], keep=data.get("keep", 0.2), factor=data.get("factor", 4))
        return Setting(in_dim=m.ndim, train_side=m.resolution, resolvable=m.nyquist(), protocol=PROTOCOLS[name], steps=steps)
    if name == "image":  # every other pixel
        return Setting(in_dim=2, train_side=data["resolution"] // 2, protocol=PROTOCOLS["natural"], steps=steps)
    if name == "signal":  # the even samples, a linear output
        return Setting(
            in_dim=1, train_side=data["length"] // 2, protocol=PROTOCOLS["signal"], output_activation="none", steps=steps
        )
    if name == "volume":  # the even voxels, logits
        return Setting(
            in_dim=3, train_side=data["resolution"] // 2, protocol=PROTOCOLS["volume"], output_activation="none", steps=steps
        )
    # shape: fresh points, the CPU-sized shape protocol over this config's steps
    return replace(SHAPE_SETTINGS["shape_cpu"], protocol=replace(PROTOCOLS["shape_cpu"], steps=steps))


def leaves(block: Any, prefix: str = "") -> dict[str, Any]:
    """{setting name: value} of a ``class_path``/``init_args`` block, nested blocks flattened, with the class's
    defaults for what the block leaves out."""
    if not (isinstance(block, dict) and "class_path" in block):
        return {prefix: block}
    module, _, name = block["class_path"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    args = dict(block.get("init_args") or {})
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name != "self" and p.default is not inspect.Parameter.empty:
            args.setdefault(p.name, p.default)
    out = {f"{prefix}class_path": block["class_path"]}
    for key, value in args.items():
        out.update(leaves(value, f"{key}.") if isinstance(value, dict) and "class_path" in value else {key: value})
    return out


def shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def differences(name: str) -> tuple[set[tuple[str, str, str]], str]:
    """(key, config value, registry value) of every setting that differs, and the config's header."""
    text = (CONFIGS / f"{name}.yaml").read_text()
    config = yaml.safe_load(text)
    expected = METHODS["gaussian"].resolve(own_grid(name, config)).overlay()
    model = config["model"]["init_args"]
    found = set()
    for part in ("encoder", "network", "optimizer"):
        ours, theirs = leaves(model[part]), leaves(expected[part])
        for key in sorted(set(ours) | set(theirs)):
            if ours.get(key) != theirs.get(key):
                found.add((key.rpartition(".")[2], shown(ours.get(key)), shown(theirs.get(key))))
    if "scheduler" in expected:
        assert model.get("scheduler") == expected["scheduler"], name
    header = " ".join(line.lstrip("# ") for line in itertools.takewhile(lambda l: l.startswith("#"), text.splitlines()))
    return found, header


@pytest.mark.parametrize("name", ["image", "inpaint", "superres", "ct", "mri", "signal", "volume", "shape"])
def test_the_model_is_the_registrys_or_the_header_says_why_not(name):
    found, header = differences(name)
    named = set(re.findall(r"(\w+) (\S+) \(registry ([^)\s]+)\)", header))
    assert named == found, f"{name}.yaml: differs in {sorted(found)}; its header names {sorted(named)}"
    if found:  # and says why, next to them
        assert "differs on purpose" in header, name
