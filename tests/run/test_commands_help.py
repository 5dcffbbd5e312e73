"""Every command the documentation shows takes --help, --config FILE and --print_config (and --estimate-only where it
runs long); the command floor's own tools (inr-mesh, the turntable, the member export) explain every option in --help."""

import argparse
import importlib
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


@pytest.mark.parametrize("module", ["inr.run.mesh", "inr.run.turntable", "inr.run.export_member"])
def test_every_option_is_documented(module, monkeypatch, capsys):
    parsers = []
    original = argparse.ArgumentParser.parse_args

    def record(self, *args, **kwargs):
        parsers.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", record)
    with pytest.raises(SystemExit) as exc:
        importlib.import_module(module).main(["--help"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("usage: ")
    (parser,) = parsers
    assert parser.description and [a.dest for a in parser._actions if a.dest != "help" and not a.help] == []


# --- one convention for every command the documentation shows ------------------------------------------------
# --help, --config FILE and --print_config (the options as YAML, read back by --config), and --estimate-only where
# the command runs long (the comparisons' own tests run theirs: tests/experiments/test_comparison.py)

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# the documented name -> (module of its main, the arguments before the user's); train.py is LightningCLI's
COMMANDS = {
    "python train.py": ("inr.run.cli:cli_main", []),
    "inr-train": ("inr.run.cli:cli_main", []),
    "inr-mesh": ("inr.run.mesh:main", []),
    "inr-compare": ("inr.experiments.compare_encoders:main", []),
    "python -m inr.codec": ("inr.codec.cli:main", []),
    "inr-codec encode": ("inr.codec.cli:main", ["encode"]),
    "inr-codec decode": ("inr.codec.cli:main", ["decode"]),
    "inr-codec learn-init": ("inr.codec.cli:main", ["learn-init"]),
    "inr-codec compare": ("inr.commands:codec", ["compare"]),
    "python -m inr.methods": ("inr.methods.__main__:main", []),
    **{
        f"python -m {m}": (f"{m}:main", [])
        for m in [
            "inr.run.mesh",
            "inr.run.turntable",
            "inr.run.export_member",
            "inr.data.text",
            "inr.callbacks.ntk_figure",
            "inr.experiments.codec_sizes",
            "inr.experiments.rd",
            "inr.experiments.rd_merge",
            "inr.experiments.results_merge",
            "inr.codec.latent_prior_learn",
            "inr.codec.latent_estimate",
            *(
                f"inr.experiments.{name}"
                for name in (
                    "compare_encoders inverse compare_fields view_synthesis shapes learned_init table1 codec "
                    "conv_autoencoder baselines conv_bottlenecks band_timeline ntk_1d conv_shift false_calls"
                ).split()
            ),
        ]
    },
}
# the old paths, which exit 2 naming the new ones (tests/run/faults/test_old_commands.py)
OLD = {"python -m inr.export.mesh", "python -m inr.export.radiance_turntable"}


def documented_commands() -> set[str]:
    """Every ``python -m inr....``, ``python train.py`` and ``inr-<tool> [subcommand]`` the pages show."""
    found = set()
    for page in PAGES:
        text = page.read_text()
        found |= {f"python -m {m}" for m in re.findall(r"python -m (inr(?:\.\w+)+)", text)}
        found |= {c.strip() for c in re.findall(r"(?<![\w/-])(inr-(?:train|mesh|compare)|inr-codec [a-z][\w-]*)", text)}
        found |= {"python train.py"} if "python train.py" in text else set()
    return found


def test_every_documented_command_is_checked_here():
    found = documented_commands()
    assert {"python train.py", "inr-mesh", "python -m inr.experiments.baselines", "inr-codec encode"} <= found
    assert found - OLD - set(COMMANDS) == set()


def call(command: str, args: list[str]) -> int:
    module, _, function = COMMANDS[command][0].partition(":")
    with pytest.raises(SystemExit) as exc:
        getattr(importlib.import_module(module), function)([*COMMANDS[command][1], *args])
    return exc.value.code


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_answers_help(command, capsys):
    assert call(command, ["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: ")


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"python train.py", "inr-train"}))
def test_every_command_prints_its_config_and_reads_it_back(command, tmp_path, capsys):
    """--print_config is a YAML mapping of the options; given back as --config, it prints the same."""
    assert call(command, ["--print_config"]) == 0
    printed = capsys.readouterr().out
    assert isinstance(yaml.safe_load(printed), dict) and printed.strip()
    (tmp_path / "options.yaml").write_text(printed)
    assert call(command, ["--config", str(tmp_path / "options.yaml"), "--print_config"]) == 0
    assert capsys.readouterr().out == printed


def test_train_prints_its_config(capsys):
    assert call("python train.py", ["--config", "image.yaml", "--print_config"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["model"]["class_path"] == "inr.tasks.ImageFitting"


def test_a_config_sets_options_and_a_later_flag_overrides_it(tmp_path, capsys):
    (tmp_path / "text.yaml").write_text("size: 32\nseed: 3\nout: a.png\n")
    assert call("python -m inr.data.text", ["--config", str(tmp_path / "text.yaml"), "--seed", "5", "--print_config"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == {"out": "a.png", "size": 32, "seed": 5}
    (tmp_path / "bad.yaml").write_text("size: 32\nsede: 3\n")
    assert call("python -m inr.data.text", ["--config", str(tmp_path / "bad.yaml")]) == 2
    err = capsys.readouterr().err
    assert "unknown option 'sede'" in err and len(err.strip().splitlines()) == 1


def test_inr_mesh_takes_a_config_of_its_options_and_still_a_runs_config(tmp_path, capsys):
    (tmp_path / "mesh.yaml").write_text("ckpt: last.ckpt\nout: mesh.ply\nresolution: 64\n")
    assert call("inr-mesh", ["--config", str(tmp_path / "mesh.yaml"), "--print_config"]) == 0
    options = yaml.safe_load(capsys.readouterr().out)
    assert options["resolution"] == 64 and options["ckpt"] == "last.ckpt" and options["config"] is None
    (tmp_path / "config.yaml").write_text("model:\n  class_path: inr.tasks.VolumeFitting\n")  # a run's config
    assert (
        call("inr-mesh", ["--ckpt", "last.ckpt", "--out", "m.ply", "--config", str(tmp_path / "config.yaml"), "--print_config"])
        == 0
    )
    assert yaml.safe_load(capsys.readouterr().out)["config"] == str(tmp_path / "config.yaml")


BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "common")


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_every_benchmark_prints_its_config_and_reads_it_back(script, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "path", [str(script.parent), *sys.path])
    had_common = "common" in sys.modules
    outputs = []
    try:
        for argv in (["--print_config"], ["--config", str(tmp_path / "options.yaml"), "--print_config"]):
            monkeypatch.setattr(sys, "argv", [str(script), *argv])
            with pytest.raises(SystemExit) as stop:
                runpy.run_path(str(script), run_name="__main__")
            assert stop.value.code == 0
            outputs.append(capsys.readouterr().out)
            (tmp_path / "options.yaml").write_text(outputs[0])
    finally:
        if not had_common:
            sys.modules.pop("common", None)
    assert isinstance(yaml.safe_load(outputs[0]), (dict, type(None))) and outputs[1] == outputs[0]


def test_the_kodak_script_answers_help_and_refuses_an_unknown_option():
    script = str(ROOT / "benchmarks" / "codec_kodak.sh")
    shown = subprocess.run(["bash", script, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "usage: " in shown.stdout and "--estimate-only" in shown.stdout
    bad = subprocess.run(["bash", script, "--estimate", "a", "b"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_kodak_script_estimates_without_running(tmp_path):
    """benchmarks/codec_kodak.sh --estimate-only at toy sizes: a probe of the inits' learning scaled to its steps and
    the comparison's own estimate, nothing left in OUT."""
    import imageio.v3 as iio
    import numpy as np

    rng = np.random.default_rng(0)
    for folder, shapes in (("kodak", [(16, 24), (24, 16)]), ("photos", [(40, 48)] * 2)):
        (tmp_path / folder).mkdir()
        for i, (h, w) in enumerate(shapes):
            iio.imwrite(tmp_path / folder / f"image{i}.png", (rng.random((h, w, 3)) * 255).astype(np.uint8))
    env = {**os.environ, "PYTHON": sys.executable, "RATES": "4", "STEPS": "50", "META_STEPS": "40", "INNER_STEPS": "1"}
    out = tmp_path / "out"
    run = subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "codec_kodak.sh"), "--estimate-only", str(tmp_path / "kodak"), str(tmp_path / "photos"), str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    text = run.stdout + run.stderr
    assert "expected time of learning the inits: about" in text and "for 40 outer steps" in text
    assert "expected time: about" in text and not out.exists()


EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if p.stem != "__init__")
# the examples that are LightningCLI's train.py with a config of their own: --print_config is the whole run config
AS_TRAIN = {"sdf_eikonal.py", "poisson_image.py"}


def test_every_documented_script_is_checked_here():
    shown = set()
    for page in PAGES:
        shown |= set(re.findall(r"python (examples/\w+\.py|benchmarks/\w+\.py)", page.read_text()))
    checked = {f"examples/{p.name}" for p in EXAMPLES} | {f"benchmarks/{p.name}" for p in BENCHMARKS}
    assert shown and shown - checked == set()


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_every_example_answers_help_and_prints_its_config(script, monkeypatch, capsys, tmp_path):
    monkeypatch.syspath_prepend(str(ROOT))
    printed = []
    for argv in (["--help"], ["--print_config"], ["--config", str(tmp_path / "options.yaml"), "--print_config"]):
        if script.name in AS_TRAIN and argv[0] == "--config":
            break  # a run config: train.py's own reading of it is tested with train.py
        monkeypatch.setattr(sys, "argv", [str(script), *argv])
        with pytest.raises(SystemExit) as stop:
            runpy.run_path(str(script), run_name="__main__")
        assert stop.value.code in (0, None)
        printed.append(capsys.readouterr().out)
        if argv == ["--print_config"]:
            (tmp_path / "options.yaml").write_text(printed[-1])
    assert printed[0].startswith("usage: ") and isinstance(yaml.safe_load(printed[1]), dict)
    assert script.name in AS_TRAIN or printed[2] == printed[1]
