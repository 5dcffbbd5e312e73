"""run.json beside config.yaml: the command line, the package's version and git commit (dirty or not), the library
versions, the device and the thread settings; a resume in place adds run.resume-N.json, the N of its config."""

import json
import re
import subprocess
from pathlib import Path

import lightning
import numpy
import pytest
import torch

import inr
from inr.run.cli import cli_main
from inr.run.record import git_state

ROOT = Path(__file__).resolve().parents[2]


def git(directory: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.slow
def test_a_run_records_what_made_it(tmp_path, tiny_run_args):
    before = git(ROOT, "rev-parse", "HEAD") if (ROOT / ".git").exists() else None
    args = tiny_run_args(tmp_path)
    cli = cli_main(args)
    run = Path(cli.trainer.log_dir)
    record = json.loads((run / "run.json").read_text())
    assert record["argv"] == ["python", "train.py", *args] and record["command"].startswith("python train.py --config image.yaml")
    assert record["package"]["version"] == inr.__version__ and record["seed"] == 0
    versions = record["versions"]
    assert (versions["torch"], versions["lightning"], versions["numpy"]) == (
        torch.__version__,
        lightning.__version__,
        numpy.__version__,
    )
    assert record["device"]["accelerator"] == "cpu" and record["device"]["precision"] == "32-true"
    assert record["threads"]["torch_threads"] == torch.get_num_threads() and record["threads"]["usable_cpus"] >= 1
    if before is not None:  # a checkout (CI clones one): its commit, and whether tracked files differed from it
        package_git = record["package"]["git"]
        assert package_git["root"] == str(ROOT)
        assert package_git["commit"] in {before, git(ROOT, "rev-parse", "HEAD")}  # others may commit meanwhile
        assert isinstance(package_git["dirty"], bool)
    assert sorted(p.name for p in run.iterdir() if p.suffix in (".json", ".yaml")) == [
        "config.yaml",
        "hparams.yaml",
        "metrics.json",
        "run.json",
    ]


@pytest.mark.slow
def test_a_resume_in_place_records_itself_beside_its_config(tmp_path, tiny_run_args):
    first = cli_main(tiny_run_args(tmp_path))
    run = Path(first.trainer.log_dir)
    original = (run / "run.json").read_text()
    cli_main(tiny_run_args(tmp_path, "--trainer.max_steps", "15", "--ckpt_path", "last"))
    assert (run / "config.resume-1.yaml").is_file()
    resumed = json.loads((run / "run.resume-1.json").read_text())
    assert resumed["argv"][-4:] == ["--trainer.max_steps", "15", "--ckpt_path", "last"]
    assert (run / "run.json").read_text() == original  # never overwritten


def test_git_state_of_a_checkout_clean_dirty_and_untracked(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("x = 1\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"]):
        git(repo, *args)
    state = git_state(repo / "pkg", tracked="__init__.py")
    assert state == {"root": str(repo.resolve()), "commit": git(repo, "rev-parse", "HEAD"), "dirty": False}
    assert re.fullmatch(r"[0-9a-f]{40}", state["commit"])
    (repo / "notes.txt").write_text("untracked files do not make a checkout dirty")
    assert git_state(repo / "pkg")["dirty"] is False
    (repo / "pkg" / "__init__.py").write_text("x = 2\n")
    assert git_state(repo / "pkg")["dirty"] is True
    (repo / "pkg" / "extra.py").write_text("")
    assert git_state(repo / "pkg", tracked="extra.py") is None  # a file the checkout does not track: not its code
    assert git_state(tmp_path / "elsewhere") is None


@pytest.mark.slow
def test_the_command_line_is_recorded_as_typed(tmp_path, tiny_run_args):
    import sys

    args = tiny_run_args(tmp_path / "runs")
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), *args], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads((tmp_path / "runs" / "image" / "version_0" / "run.json").read_text())
    assert record["argv"] == ["python", str(ROOT / "train.py"), *args]
    assert record["working_directory"] == str(tmp_path) and record["python_executable"] == sys.executable
