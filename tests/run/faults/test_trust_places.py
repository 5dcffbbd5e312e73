"""``--trust mymod`` grants a place, not only a name: it is resolved once, said where from, and never satisfied by a
module the run directory being loaded ships (run from inside it, where ``python -m`` puts it first on sys.path)."""

import os
import shutil
import subprocess
import sys
import uuid

import pytest
import yaml

from inr.errors import InputError
from inr.io.trusted import TRUST_ENV, resolve_grants
from inr.run.model_loader import load_model

USER = "import pathlib\npathlib.Path({marker!r}).write_text('user')\nfrom inr.encoders import GaussianEncoding\n\n\nclass MyEncoding(GaussianEncoding):\n    pass\n"
SHIPPED = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\nfrom inr.encoders import GaussianEncoding\n\n\nclass MyEncoding(GaussianEncoding):\n    pass\n"


def package(folder, name, text):
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(text)
    return folder / name


@pytest.fixture
def shadowed(trained_run, tmp_path, monkeypatch):
    """A downloaded run whose config names ``<mod>.MyEncoding`` and that ships its own ``<mod>``, and the user's own
    ``<mod>`` under home/ (on PYTHONPATH). Returns (run, module name, user's package, user marker, shipped marker)."""
    monkeypatch.delenv(TRUST_ENV, raising=False)
    name = f"mymod_{uuid.uuid4().hex[:8]}"  # one name per test: a module imported once stays in sys.modules
    run = tmp_path / "downloaded"
    shutil.copytree(trained_run, run)
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["model"]["init_args"]["encoder"]["class_path"] = f"{name}.MyEncoding"
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    shipped, user = tmp_path / "shipped_ran", tmp_path / "user_ran"
    package(run, name, SHIPPED.format(marker=str(shipped)))
    home = package(tmp_path / "home", name, USER.format(marker=str(user)))
    yield run, name, home, user, shipped
    sys.modules.pop(name, None)


def test_a_name_found_first_in_the_run_directory_is_refused(shadowed, monkeypatch, capsys):
    run, name, home, user, shipped = shadowed
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(home.parent))
    monkeypatch.syspath_prepend(str(run))  # as `python -m` from inside the run: the working directory first
    with pytest.raises(InputError, match="inside the run directory being loaded") as refusal:
        load_model(run / "checkpoints" / "last.ckpt", trust=name)
    assert f"--trust path/to/{name}" in str(refusal.value)
    assert not shipped.exists() and not user.exists() and name not in sys.modules


def test_the_users_module_given_by_its_path_loads_and_says_where_from(shadowed, monkeypatch, capsys):
    run, name, home, user, shipped = shadowed
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(run))  # the shipped one still comes first on sys.path
    model = load_model(run / "checkpoints" / "last.ckpt", trust=str(home))
    assert type(model.encoder).__module__ == name and sys.modules[name].__file__ == str(home / "__init__.py")
    assert user.exists() and not shipped.exists()
    assert f"note: --trust {name}: {home / '__init__.py'}" in capsys.readouterr().err


@pytest.mark.slow
def test_the_mesh_command_run_from_inside_the_download_refuses_the_shipped_module(shadowed):
    run, name, home, user, shipped = shadowed
    done = subprocess.run(
        [sys.executable, "-m", "inr.run.mesh", "--ckpt", "checkpoints/last.ckpt", "--out", "out.ply", "--trust", name],
        cwd=run,
        env={**os.environ, "PYTHONPATH": str(home.parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr[-2000:]
    assert "inside the run directory being loaded" in errors[0], errors
    assert not shipped.exists() and not user.exists() and not (run / "out.ply").exists()


def test_a_working_directory_holding_the_run_may_not_shadow_another_module(tmp_path, monkeypatch):
    """The project's own layout (the module and runs/ side by side) resolves; a second copy elsewhere makes the
    working directory's a shadow, refused with both places named."""
    name = f"lab_{uuid.uuid4().hex[:8]}"
    project = tmp_path / "project"
    package(project, name, "")
    (project / "runs" / "r").mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    (grant,) = resolve_grants(name, project / "runs" / "r")
    assert grant.origin == project / name / "__init__.py"
    other = package(tmp_path / "site", name, "")
    monkeypatch.setattr(sys, "path", [str(project), str(other.parent), *sys.path])
    with pytest.raises(InputError, match=f"shadows {other / '__init__.py'}"):
        resolve_grants(name, project / "runs" / "r")
    assert resolve_grants(str(other), project / "runs" / "r")[0].origin == other / "__init__.py"


def test_a_console_script_finds_the_working_directorys_module(tmp_path, monkeypatch):
    """A console script's sys.path lacks the working directory; the grant still finds the module there."""
    name = f"lab_{uuid.uuid4().hex[:8]}"
    package(tmp_path, name, "")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert resolve_grants(name)[0].origin == tmp_path / name / "__init__.py"


def test_a_grant_that_names_nothing_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"--trust nosuchlab_zz: no module nosuchlab_zz in the import path"):
        resolve_grants("nosuchlab_zz")
    (tmp_path / "nolab").mkdir()  # a folder without __init__.py
    with pytest.raises(InputError, match="holds no importable module nolab"):
        resolve_grants(str(tmp_path / "nolab"))
    monkeypatch.setenv(TRUST_ENV, "nosuchlab_zz")  # a standing grant in the environment: nothing to find, no refusal
    assert resolve_grants() == ()
