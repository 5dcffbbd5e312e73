"""A downloaded run directory is data: the config.yaml beside a checkpoint never imports or runs a module of its own."""

import shutil
import subprocess
import sys

import pytest
import yaml

from inr.errors import InputError
from inr.io.trusted import check_trusted_config, refuse_untrusted_imports
from inr.run.model_loader import load_model

PAYLOAD = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n\nclass Evil:\n    pass\n\ndef make(*a, **k):\n    pass\n"


def crafted_run(trained_run, tmp_path, edit) -> tuple:
    """A copy of a real run whose config.yaml is changed by ``edit(model_section)``, with payload.py beside it."""
    run = tmp_path / "downloaded"
    shutil.copytree(trained_run, run)
    marker = tmp_path / "ran"
    (run / "payload.py").write_text(PAYLOAD.format(marker=str(marker)))
    config = yaml.safe_load((run / "config.yaml").read_text())
    edit(config["model"])
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    return run, marker


def _as_model(m):
    m["class_path"] = "payload.Evil"


def _as_encoder(m):
    m["init_args"]["encoder"]["class_path"] = "payload.Evil"


def _as_network_callable(m):
    m["init_args"]["network"] = "payload.make"


def _as_included_file(m):
    m["init_args"]["encoder"] = "payload.yaml"


@pytest.mark.slow
@pytest.mark.parametrize("edit", [_as_model, _as_encoder, _as_network_callable, _as_included_file])
def test_the_loader_never_runs_a_payload_beside_the_checkpoint(trained_run, tmp_path, monkeypatch, edit):
    """In process, with the run directory first on sys.path and as the working directory (as ``python -m`` there)."""
    run, marker = crafted_run(trained_run, tmp_path, edit)
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(run))
    with pytest.raises(InputError, match="config.yaml") as exc:
        load_model(run / "checkpoints" / "last.ckpt")
    assert not marker.exists(), "the payload ran"
    assert "trusted packages" in str(exc.value) or "another file" in str(exc.value)
    assert "payload" not in sys.modules


@pytest.mark.slow
@pytest.mark.parametrize("edit,command", [(_as_model, "inr.run.mesh"), (_as_encoder, "inr.run.turntable")])
def test_a_payload_beside_the_checkpoint_never_runs_in_the_commands(trained_run, tmp_path, edit, command):
    run, marker = crafted_run(trained_run, tmp_path, edit)
    out = "out.ply" if command.endswith("mesh") else "out.gif"
    # run from inside the downloaded directory: `python -m` puts the working directory first on sys.path
    done = subprocess.run(
        [sys.executable, "-m", command, "--ckpt", "checkpoints/last.ckpt", "--out", out],
        cwd=run,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not marker.exists(), "the payload ran"
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr[-2000:]
    assert "config.yaml" in errors[0] and ("trusted packages" in errors[0] or "another file" in errors[0]), errors
    assert not (run / out).exists()


def test_the_import_guard_refuses_a_module_outside_the_installed_packages(tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    (tmp_path / "payload_guarded.py").write_text(PAYLOAD.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError, match="would import payload_guarded from"):
        with refuse_untrusted_imports("config.yaml"):
            __import__("payload_guarded")
    assert not marker.exists()
    with refuse_untrusted_imports("config.yaml"):  # installed packages and the standard library still import
        __import__("json.tool")


def test_trusted_names_and_values_pass(tmp_path):
    check_trusted_config(
        {
            "class_path": "inr.tasks.ImageFitting",
            "init_args": {
                "encoder": {"class_path": "inr.encoders.GaussianEncoding", "init_args": {"sigma": 10.0}},
                "network": {"class_path": "inr.networks.MLP", "init_args": {"activation": "relu"}},
                "optimizer": {"class_path": "torch.optim.Adam", "init_args": {"lr": 1e-3}},
            },
        },
        "config.yaml",
    )
    for value in ("os.system", {"class_path": "subprocess.Popen"}):
        with pytest.raises(InputError, match="outside the trusted packages"):
            check_trusted_config({"init_args": {"network": value}}, "config.yaml")
