"""The package as a user installs it: a wheel (and an editable install) in a fresh environment, whose
console commands find the shipped configs and sample data from an empty directory.

The environments reuse this one's installed packages (torch, lightning, ...) through a path file and get
``inr`` alone, without network access, so the shared environment is left as it is. Each command costs an
interpreter start with the imports of torch and lightning (seconds); ``inr-train`` runs as its own process,
the other commands' ``--help`` share one interpreter.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("inr", "configs", "data", "setup.py", "pyproject.toml", "README.md")


def _copy_sources(target: Path, run_name: str) -> Path:
    """The files a build reads, copied (the build's own files stay out of the checkout), with the logger name
    of ``configs/image.yaml`` changed to ``run_name``: a run directory of that name shows which copy of the
    config a command read."""
    target.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    config = target / "configs" / "image.yaml"
    text = config.read_text()
    assert "name: image}" in text
    config.write_text(text.replace("name: image}", f"name: {run_name}}}"))
    return target


def _fresh_env(path: Path) -> Path:
    """A new virtual environment that sees this one's site-packages but none of its ``inr``."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # a plain path line: the directory is searched after the new environment's own, and its .pth files (this
    # environment's editable install of inr) are not run
    Path(purelib, "shared_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path


def _pip(env: Path, *args: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env / "bin" / "python"),
            *args,
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--ignore-installed",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def _clean_env(env: Path) -> dict[str, str]:
    """This process's environment less PYTHONPATH (which points at the checkout), with ``env``'s commands first."""
    out = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out["PATH"] = f"{env / 'bin'}{os.pathsep}{out.get('PATH', '')}"
    return out


def _start(env: Path, command: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=cwd, env=_clean_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


# Runs each console script named on its command line as ``script --help`` (as ``__main__``, with that argv,
# the way its shebang line would) in this one interpreter, and prints {script: [exit code, stdout]} as JSON.
HELP_OF_EACH_SCRIPT = """
import contextlib, io, json, runpy, sys
results = {}
for script in sys.argv[1:]:
    sys.argv, out = [script, "--help"], io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code
    results[script] = [code, out.getvalue()]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = _copy_sources(work / "src", "from_the_wheel")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(work / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (built,) = (work / "dist").glob("inr-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_ships_configs_and_data_and_its_commands_run_from_an_empty_directory(wheel, tmp_path, tiny_flags):
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {
        p.relative_to(ROOT).as_posix()
        for p in [*ROOT.glob("configs/**/*.yaml"), *ROOT.glob("data/*.png"), *ROOT.glob("data/*.obj")]
    }
    assert {f"inr/share/{name}" for name in shipped} <= names
    assert not any(name.startswith(("configs/", "data/", "tests/")) for name in names)

    env = _fresh_env(tmp_path / "env")
    _pip(env, "install", str(wheel))
    empty = tmp_path / "empty"
    empty.mkdir()
    tiny = tiny_flags("image.yaml", 16, width=16, features=16, steps=2, bar=False)  # 2 steps at 16², a 16-wide network
    train = _start(env, [str(env / "bin" / "inr-train"), *tiny], empty)
    scripts = {name: str(env / "bin" / name) for name in ("inr-mesh", "inr-compare")}
    helps = _start(env, [str(env / "bin" / "python"), "-c", HELP_OF_EACH_SCRIPT, *scripts.values()], empty)

    code, out, err = _finish(train)
    assert code == 0, err[-3000:]
    summary = [ln for ln in out.splitlines() if ln.startswith("summary:")]
    assert len(summary) == 1 and "logs runs/from_the_wheel/version_0" in summary[0], out[-2000:]
    # the wheel's copy of the config (its logger name) and of data/astronaut.png, read from an empty directory
    assert (empty / "runs/from_the_wheel/version_0/checkpoints/last.ckpt").is_file()
    code, out, err = _finish(helps)
    assert code == 0, err[-3000:]
    results = json.loads(out.splitlines()[-1])
    for name, script in scripts.items():
        code, usage = results[script]
        assert code == 0 and usage.startswith(f"usage: {name} "), (name, code, usage[:300], err[-2000:])


@pytest.mark.slow
def test_an_editable_install_resolves_configs_in_its_checkout(tmp_path):
    source = _copy_sources(tmp_path / "src", "from_the_checkout")
    env = _fresh_env(tmp_path / "env")
    _pip(env, "install", "-e", str(source))
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = _finish(_start(env, [str(env / "bin" / "inr-train"), "--config", "image.yaml", "--print_config"], empty))
    assert code == 0 and "inr.encoders.GaussianEncoding" in out, err[-2000:]
    assert "name: from_the_checkout" in out  # the editable install reads the configs of its checkout
    assert not any(empty.iterdir())  # printing the config writes nothing
