"""The user's own classes reload when the user grants their package (``--trust``, ``INR_TRUSTED_PACKAGES``,
``trust=``, or a class the calling script imported), and a downloaded run still runs no code."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from inr.errors import InputError
from inr.io.trusted import TRUST_ENV, check_trusted_config, granted_packages, trusted_imported_classes
from inr.run import mesh as mesh_command
from inr.run.cli import cli_main
from inr.run.model_loader import load_model
from inr.tasks.base import INRModule

ROOT = Path(__file__).resolve().parents[3]
PAYLOAD = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n\nclass Evil:\n    pass\n"


@pytest.fixture(scope="module")
def sdf_run(tmp_path_factory):
    """A 100-step run (its zero level set exists) of ``examples/sdf_eikonal.py``'s own task and data classes (class paths ``examples.*``)."""
    save_dir = tmp_path_factory.mktemp("sdf")
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(ROOT))
        cli_main(
            ["--config", str(ROOT / "examples" / "sdf_eikonal.yaml"), "--data.init_args.resolution", "8"]
            + ["--trainer.max_steps", "100", "--trainer.enable_progress_bar", "false"]
            + ["--trainer.logger.init_args.save_dir", str(save_dir)]
        )
    return save_dir / "sdf" / "version_0" / "checkpoints" / "last.ckpt"


def run_mesh(capsys, *argv: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    try:
        mesh_command.main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]


def test_the_mesh_command_refuses_the_users_class_in_one_line_that_says_how_to_grant_it(sdf_run, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    out = tmp_path / "sdf.ply"
    code, errors = run_mesh(capsys, "--ckpt", str(sdf_run), "--out", str(out), "--level", "0")
    assert code == 2 and len(errors) == 1, errors
    assert "examples.sdf_eikonal.SDFFitting" in errors[0] and "--trust examples" in errors[0], errors
    assert not out.exists()


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_the_mesh_command_builds_the_users_class_once_its_package_is_granted(sdf_run, tmp_path, capsys, monkeypatch, how):
    monkeypatch.syspath_prepend(str(ROOT))  # as `python -m` from the repository: the working directory on sys.path
    out = tmp_path / "sdf.ply"
    argv = ["--ckpt", str(sdf_run), "--out", str(out), "--resolution", "16", "--level", "0"]
    if how == "flag":
        monkeypatch.delenv(TRUST_ENV, raising=False)
        argv += ["--trust", "examples"]
    else:
        monkeypatch.setenv(TRUST_ENV, "mylab, examples")
    code, errors = run_mesh(capsys, *argv)
    assert code == 0 and not errors, errors
    assert out.stat().st_size > 0


@pytest.mark.slow
def test_the_console_script_finds_the_trusted_package_in_the_working_directory(sdf_run, tmp_path, monkeypatch):
    """``inr-mesh`` (its sys.path lacks the working directory) meshes the examples' run as ``python -m`` does,
    and says where the granted package was found."""
    monkeypatch.delenv(TRUST_ENV, raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    out = tmp_path / "sdf.ply"
    script = Path(sys.executable).parent / "inr-mesh"
    argv = [str(script), "--ckpt", str(sdf_run), "--out", str(out), "--resolution", "16", "--level", "0", "--trust", "examples"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"note: --trust examples: {ROOT / 'examples' / '__init__.py'}" in done.stderr
    assert out.stat().st_size > 0


def test_a_class_the_script_imported_reloads_in_python(sdf_run, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    monkeypatch.syspath_prepend(str(ROOT))
    from examples.sdf_eikonal import SDFFitting

    saved = torch.load(sdf_run, map_location="cpu", weights_only=True)["state_dict"]
    for model in (SDFFitting.load_from_checkpoint(sdf_run), load_model(sdf_run)):
        assert type(model) is SDFFitting
        for name, value in model.state_dict().items():
            torch.testing.assert_close(value, saved[name], rtol=0, atol=0)


@pytest.mark.slow
def test_a_fresh_interpreter_refuses_the_users_run_until_its_package_is_granted(sdf_run, monkeypatch):
    """No import of the user's code in the calling program: refused, naming the opt-in; ``trust=`` loads it."""
    monkeypatch.delenv(TRUST_ENV, raising=False)
    script = (
        "import sys\n"
        "from inr.errors import InputError\n"
        "from inr.tasks.base import INRModule\n"
        "try:\n"
        f"    INRModule.load_from_checkpoint({str(sdf_run)!r})\n"
        "except InputError as exc:\n"
        "    print('refused:', exc)\n"
        "assert 'examples' not in sys.modules, 'the refusal imported the package'\n"
        f"model = INRModule.load_from_checkpoint({str(sdf_run)!r}, trust=['examples'])\n"
        "print('loaded:', type(model).__module__, type(model).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    refused = [line for line in done.stdout.splitlines() if line.startswith("refused:")]
    assert len(refused) == 1 and "trust=" not in refused[0] and "--trust examples" in refused[0], done.stdout
    assert "loaded: examples.sdf_eikonal SDFFitting" in done.stdout


def test_a_grant_of_one_package_never_runs_a_payload_of_another(sdf_run, tmp_path, monkeypatch):
    run = tmp_path / "downloaded"
    shutil.copytree(sdf_run.parent.parent, run)
    marker = tmp_path / "ran"
    (run / "payload.py").write_text(PAYLOAD.format(marker=str(marker)))
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["model"]["init_args"]["encoder"]["class_path"] = "payload.Evil"
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(run))
    monkeypatch.syspath_prepend(str(ROOT))
    with pytest.raises(InputError, match="payload.Evil, outside the trusted packages"):
        load_model(run / "checkpoints" / "last.ckpt", trust="examples")
    assert not marker.exists() and "payload" not in sys.modules


def test_only_imported_classes_of_model_kinds_count_as_granted():
    """A function or a non-module class already in memory (os.system, subprocess.Popen) stays refused."""
    import subprocess as _  # noqa: F401  (in memory, as in any program)

    config = {
        "class_path": "inr.tasks.ImageFitting",
        "init_args": {
            "encoder": {"class_path": "subprocess.Popen"},
            "network": {"class_path": "torch.nn.Linear"},
            "optimizer": {"class_path": "os.system"},
        },
    }
    imported = trusted_imported_classes(config)
    assert imported == {"inr.tasks.ImageFitting", "torch.nn.Linear"}
    with pytest.raises(InputError, match="subprocess.Popen, outside the trusted packages"):
        check_trusted_config(config, "config.yaml", classes=imported)


def test_an_overridden_part_is_not_read_from_the_checkpoint(trained_run, tmp_path):
    """``load_from_checkpoint(encoder=...)``: the recorded encoder config (here an unknown user class) is not read."""
    checkpoint = torch.load(trained_run / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)
    from inr.tasks.parts import build_part

    encoder = build_part(checkpoint["hyper_parameters"]["encoder"], key="encoder")
    checkpoint["hyper_parameters"]["encoder"] = {"class_path": "mylab_unknown.MyEncoder", "init_args": {}}
    path = tmp_path / "user.ckpt"
    torch.save(checkpoint, path)
    with pytest.raises(InputError, match="mylab_unknown.MyEncoder"):
        INRModule.load_from_checkpoint(path)
    model = INRModule.load_from_checkpoint(path, encoder=encoder)
    for name, value in model.state_dict().items():
        torch.testing.assert_close(value, checkpoint["state_dict"][name], rtol=0, atol=0)


def test_granted_names_are_package_names(monkeypatch):
    monkeypatch.setenv(TRUST_ENV, "examples,,mylab")
    assert granted_packages("mylab,other") == ("mylab", "other", "examples")
    monkeypatch.setenv(TRUST_ENV, "../evil")
    with pytest.raises(InputError, match=f"{TRUST_ENV} ../evil: name top-level packages"):
        granted_packages()
