"""Every command line the README and docs show still parses: so documentation cannot rot.

A documented line (indented 4 spaces, starting with ``python``, ``.venv/bin/python`` or an ``inr-`` command) is
run in a dry form: ``train.py`` / ``inr-train`` lines with ``--print_config`` appended (the config, its keys and
classes are all resolved and checked; nothing trains); ``python -m ...``, ``inr-mesh``, benchmark and example
scripts up to their argument parsing (every documented option must exist and its value parse). Synopsis lines
(``[--seed S | --seeds ...]``) and commands reading a config an earlier command wrote (``--config runs/...``, or a
file an earlier line of the page redirected its output to) are skipped; a redirection (``> options.yaml``) is not
part of the command.
"""

import argparse
import importlib
import json
import os
import re
import runpy
import shlex
import sys
from pathlib import Path

import jsonargparse
import pytest

from inr.run.cli import cli_main

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]
COMMAND = re.compile(r"^ {4}(?:\.venv/bin/)?(python |inr-(?:train|mesh|compare)\b)")
SCRIPTS = {"inr-mesh": "inr.run.mesh", "inr-compare": "inr.experiments.compare_encoders"}


def documented_commands() -> list[tuple[str, str]]:
    """(where, command line) for every documented command, comments removed and continuations joined."""
    found = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        written: set[str] = set()  # files the page's commands redirect their output to
        i = 0
        while i < len(lines):
            line = lines[i]
            if COMMAND.match(line):
                text, start = line, i
                while text.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    text = text.rstrip()[:-1] + " " + lines[i].strip()
                text = re.sub(r"\s+#.*$", "", text).strip()
                if " > " in text:
                    text, _, target = text.partition(" > ")
                    written.add(target.strip())
                reads_written = any(f"--config {name}" in text for name in written)
                # a synopsis, or a command reading what an earlier documented command wrote (a run's own config)
                if "[--" not in text and " | " not in text and "--config runs/" not in text and not reads_written:
                    found.append((f"{path.relative_to(ROOT)}:{start + 1}", text))
            i += 1
    return found


class Parsed(Exception):
    """Raised by the patched parser once the arguments have parsed."""


COMMANDS = documented_commands()


def test_the_docs_hold_commands():
    assert len(COMMANDS) > 40


@pytest.mark.parametrize("where,command", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_command_parses(where, command, monkeypatch, tmp_path, capsys):
    words = shlex.split(command)
    if words[0].endswith("python"):
        words = words[1:]
    monkeypatch.chdir(ROOT)  # documented paths are relative to the repository
    if words[0] in ("train.py", "inr-train"):
        with pytest.raises(SystemExit) as exc:
            cli_main([*words[1:], "--print_config"])
        assert exc.value.code in (0, None), capsys.readouterr().err[-2000:]
        return

    def parse_and_stop(self, args=None, namespace=None):
        parsed = original(self, args, namespace)
        raise Parsed(parsed)

    original = argparse.ArgumentParser.parse_args
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_and_stop)
    original_config = jsonargparse.ArgumentParser.parse_args  # the comparisons' parser (train.py's kind)

    def config_parse_and_stop(self, args=None, namespace=None, **kwargs):
        raise Parsed(original_config(self, args, namespace, **kwargs))

    monkeypatch.setattr(jsonargparse.ArgumentParser, "parse_args", config_parse_and_stop)
    monkeypatch.setattr(sys, "argv", [words[0], *words[1:]])
    # --print_config prints the parsed options and stops (exit 0) inside the parse: parsed too
    with pytest.raises(SystemExit if "--print_config" in words else Parsed) as stopped:
        if words[0] == "-m" or words[0] in SCRIPTS:
            module, argv = (words[1], words[2:]) if words[0] == "-m" else (SCRIPTS[words[0]], words[1:])
            importlib.import_module(module).main(argv)
        else:  # a script: benchmarks/*.py, examples/*.py (an example may hand its arguments to train.py's CLI)

            def print_config_and_stop(args=None):
                with pytest.raises(SystemExit) as exc:
                    cli_main([*(args or []), "--print_config"])
                raise Parsed(exc.value.code)

            monkeypatch.setattr("inr.run.cli.cli_main", print_config_and_stop)
            monkeypatch.setattr(sys, "argv", words)
            monkeypatch.syspath_prepend(str(ROOT / Path(words[0]).parent))
            runpy.run_path(str(ROOT / words[0]), run_name="__main__")
    if isinstance(stopped.value, SystemExit):
        assert stopped.value.code == 0, capsys.readouterr().err[-2000:]


def documented(fragment: str) -> list[str]:
    """The arguments of the one documented ``train.py`` / ``inr-train`` line that contains ``fragment``."""
    (line,) = [command for _, command in COMMANDS if fragment in command]
    words = shlex.split(line)
    program = next(i for i, w in enumerate(words) if w in ("train.py", "inr-train"))
    return words[program + 1 :]


@pytest.mark.slow
def test_the_fastmri_line_trains_a_2d_slice(tmp_path, capsys):
    """docs/inverse.md's fastMRI line, on a small fastMRI-style file (its ``reconstruction_rss``), shortened: the
    3-D config's encoder takes the 2-D slice's coordinates."""
    import h5py
    import numpy as np

    scan = tmp_path / "file_brain_AXT2_200_2000019.h5"
    with h5py.File(scan, "w") as f:
        f["reconstruction_rss"] = (np.random.default_rng(0).random((3, 20, 20)) + 0.1).astype(np.float32)
    args = [str(scan) if a == scan.name else a for a in documented("file_brain_AXT2_200_2000019.h5")]
    short = ["--data.init_args.resolution", "16", "--trainer.max_steps", "3", "--trainer.enable_progress_bar", "false"]
    cli = cli_main([*args, *short, "--trainer.logger.init_args.save_dir", str(tmp_path / "runs")])
    assert cli.model.encoder.in_dim == 2 and cli.datamodule.shape == (16, 16)
    assert "full/psnr" in capsys.readouterr().out


# 5 steps an epoch, 5 optimizer steps per Lightning step
INNER_STEPS = ("--data.init_args.steps_per_epoch", 5, "--model.init_args.inner_steps", 5)


@pytest.mark.slow
def test_the_mlflow_line_keeps_each_run_in_one_directory(tmp_path, monkeypatch, tiny_flags):
    """docs/usage.md's MLflow line (sqlite store, the trackers extra), shortened: the database and every file of
    a run under runs/mlflow/ (the run directory is the MLflow run's artifact directory), nothing in the working
    directory, the closing metrics and the parameters in MLflow, a second run beside the first."""
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    args = [*documented("--trainer.logger MLFlowLogger"), *tiny_flags(None, 16, *INNER_STEPS, width=8, steps=10, bar=False)]
    cli = cli_main(args)
    logger = cli.trainer.logger
    run = Path(cli.trainer.checkpoint_callback.dirpath).parent
    assert run == tmp_path / "runs" / "mlflow" / "artifacts" / logger.run_id / "artifacts"
    assert sorted(os.listdir(tmp_path)) == ["runs"] and sorted(os.listdir(tmp_path / "runs")) == ["mlflow"]
    assert sorted(os.listdir(tmp_path / "runs" / "mlflow")) == ["artifacts", "mlflow.db"]
    for name in ("config.yaml", "run.json", "metrics.json", "spectral_history.npz", "checkpoints/last.ckpt"):
        assert (run / name).is_file(), name
    assert list((run / "media" / "images" / "reconstruction").glob("step_*.png"))
    client = MlflowClient(logger._tracking_uri)
    record = client.get_run(logger.run_id)
    assert record.info.status == "FINISHED"
    closing = json.loads((run / "metrics.json").read_text())["metrics"]
    for key, value in closing.items():
        assert record.data.metrics[key] == pytest.approx(value, rel=1e-6), key
    assert record.data.params["encoder/init_args/sigma"] == "10.0"
    assert {"config.yaml", "metrics.json", "run.json", "checkpoints", "media"} <= {
        a.path for a in client.list_artifacts(logger.run_id)
    }
    before = {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()}
    second = cli_main(args)
    assert second.trainer.logger.run_id != logger.run_id
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()} == before
    assert sorted(os.listdir(tmp_path)) == ["runs"]


def test_the_python_fit_lines_run_as_written(monkeypatch, capsys):
    """docs/usage.md's "Fitting in Python" block, executed as written, with each ``inr.fit`` call shortened (16²,
    10 steps, a narrower network) so that it runs in a second."""
    import inr
    from inr.methods.fitting import fit

    usage = (ROOT / "docs" / "usage.md").read_text().split("## Fitting in Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", usage, re.S).group(1)
    calls = []

    def short_fit(signal, **kwargs):
        calls.append((signal, kwargs))
        return fit(signal, **{**kwargs, "steps": 10, "resolution": 16, "width": 16})

    monkeypatch.setattr(inr, "fit", short_fit, raising=False)
    namespace: dict = {}
    exec(compile(code, "docs/usage.md", "exec"), namespace)
    assert calls == [("data/astronaut.png", {"method": "gaussian", "steps": 300})]
    assert tuple(namespace["image"].shape) == (3, 512, 512)
    assert "test/psnr" in capsys.readouterr().out
