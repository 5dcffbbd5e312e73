"""A comparison over the processes of a launcher (``inr.experiments.ranks``): docs/cluster.md's ``table1`` command
over two CPU processes (torchrun, gloo) writes the results one process writes, from rank 0 alone; under srun's
variables, rows of one model train on rank 0 alone beside a stacked group (their metrics local: an epoch ends in
them) with the same result; the settings that cannot run over the ranks are refused in one line before anything
is written."""

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from inr.experiments.table1 import main

ROOT = Path(__file__).resolve().parents[2]
BOUND = 300  # seconds a launch may take on the loaded 2-core machine; a hang fails the test instead
TINY = ["--resolution", "16", "--steps", "5", "--width", "16"]  # appended: later flags win
TIMES = ("seconds", "ms_per_step")


def documented() -> list[str]:
    """docs/cluster.md's table1 command, as words."""
    text = (ROOT / "docs" / "cluster.md").read_text()
    (block,) = [b for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S) if "inr.experiments.table1" in b]
    return shlex.split(block.replace("\\\n", " "))


def files_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def same_rows(a: list[dict], b: list[dict]) -> None:
    """The same rows in the same order: every value equal, the scores to 1e-5, the timings apart."""
    assert len(a) == len(b) and len(a) > 0
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for key, value in x.items():
            if key in TIMES:
                continue
            if isinstance(value, float):
                assert abs(value - y[key]) <= 1e-5, (x["method"], x.get("signal"), x["seed"], key, value, y[key])
            else:
                assert value == y[key], (key, value, y[key])


@pytest.mark.slow
def test_table1_over_two_processes_writes_the_rows_of_one_process_from_rank_0_alone(tmp_path):
    command = documented()
    assert command[:6] == ["torchrun", "--standalone", "--nproc-per-node", "2", "-m", "inr.experiments.table1"]
    flags = command[6:]
    logs = tmp_path / "logs"  # each rank's stdout and stderr in a file of its own (torchrun's --redirects)
    torchrun = [str(Path(sys.executable).parent / "torchrun"), "--log-dir", str(logs), "--redirects", "3", *command[1:]]
    with open(tmp_path / "torchrun.err", "w") as err:  # --standalone: torchrun picks a free port itself
        launch = subprocess.Popen(
            [*torchrun, *TINY, "--out", str(tmp_path / "two")], cwd=tmp_path, stderr=err, start_new_session=True
        )
    main([*flags, *TINY, "--out", str(tmp_path / "one")])  # the reference, while the ranks start
    try:
        code = launch.wait(BOUND)
    except subprocess.TimeoutExpired:
        os.killpg(launch.pid, signal.SIGKILL)
        launch.wait()
        code = None
    assert code == 0, (tmp_path / "torchrun.err").read_text()[-4000:]

    one, two = (json.loads((tmp_path / name / "results.json").read_text()) for name in ("one", "two"))
    moved = json.dumps(two["protocol"]).replace(str(tmp_path / "two"), str(tmp_path / "one"))  # the images under --out
    assert json.loads(moved) == one["protocol"] and one["protocol"]["resolution"] == 16 and two["seeds"] == [0, 1]
    same_rows(two["rows"], one["rows"])
    models = [r for r in two["rows"] if r["kind"] == "model"]
    assert [(r["method"], r["signal"], r["seed"]) for r in models] == [
        (m, image, seed) for m in ("none", "gaussian") for image in ("astronaut", "camera") for seed in (0, 1)
    ]
    # one writer: the built-in images and the results, as one process writes them
    assert files_under(tmp_path / "two") == files_under(tmp_path / "one") == [
        "images/astronaut.png", "images/camera.png", "results.json", "results.md"
    ]  # fmt: skip

    # rank 0 printed the progress lines and the table; rank 1 nothing at all
    streams = {(p.parent.name, p.name): p.read_text() for p in logs.rglob("*.log")}
    assert set(streams) == {(rank, name) for rank in ("0", "1") for name in ("stdout.log", "stderr.log")}, list(streams)
    assert streams["1", "stdout.log"] == "" and streams["1", "stderr.log"] == ""
    assert "| gaussian |" in streams["0", "stdout.log"] and "[6/6] bicubic: " in streams["0", "stderr.log"]
    assert sum(line.startswith("Table 1, natural") for line in streams["0", "stdout.log"].splitlines()) == 1


def torchrun_environment(monkeypatch, rank: int, world: int, per_node: int) -> None:
    """The variables torchrun gives process ``rank`` of ``world`` (``per_node`` on each node)."""
    for key, value in {
        "TORCHELASTIC_RUN_ID": "test",
        "RANK": rank,
        "WORLD_SIZE": world,
        "LOCAL_RANK": rank % per_node,
        "LOCAL_WORLD_SIZE": per_node,
        "GROUP_RANK": rank // per_node,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "1",  # nothing connects: the refusals come first
    }.items():
        monkeypatch.setenv(key, str(value))


CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    "world, flags, line",
    [
        (2, ["--count", "1", "--seeds", "1"], "every row trains one model (no stacked group of members to share over"),
        (
            4,
            ["--count", "1", "--seeds", "3"],
            "a stacked group of 3 members; each process trains at least one member: give at most 3",
        ),
        (2, ["--count", "2", "--threads", str(CORES)], f"--threads {CORES}: 2 processes on this node × {CORES} threads"),
        (2, ["--count", "2", "--estimate-only"], "--estimate-only: the time probe runs in one process"),
    ],
)
def test_settings_that_cannot_run_over_the_ranks_are_one_line_from_rank_0_and_nothing_is_written(
    tmp_path, monkeypatch, capsys, world, flags, line
):
    out = tmp_path / "out"
    for rank in (0, 1):
        torchrun_environment(monkeypatch, rank, world, 2)
        with pytest.raises(SystemExit) as exc:
            main(["--kind", "natural", "--methods", "gaussian", *flags, *TINY, "--out", str(out)])
        printed = capsys.readouterr()
        assert exc.value.code == 2
        if rank == 0:
            assert printed.out == "" and len(printed.err.strip().splitlines()) == 1 and line in printed.err, printed.err
            assert printed.err.startswith("error: ")
        else:
            assert printed.out == printed.err == ""
    assert not out.exists()


MIXED = '''
import sys
from inr.experiments import comparison
from inr.experiments.table1 import Table1


class Mixed(Table1):
    """table1 whose gaussian rows train one model each (none stays one stacked group)."""

    def groups(self, p, name, members):
        return [[m] for m in members] if name == "gaussian" else [members]


comparison.main(Mixed(), sys.argv[1:])
'''


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def srun_tasks(tmp_path: Path, command: list[str], tag: str) -> list[int]:
    """``command`` as two SLURM tasks on one node with the variables srun sets, each task's stdout and stderr in
    ``<tag>.<rank>.out``/``.err``; their exit codes."""
    port, tasks = str(free_port()), []
    for rank in (0, 1):
        env = {
            **os.environ,
            "SLURM_JOB_ID": "4242",
            "SLURM_JOB_NAME": "table1",
            "SLURM_NTASKS": "2",
            "SLURM_NTASKS_PER_NODE": "2",
            "SLURM_NNODES": "1",
            "SLURM_PROCID": str(rank),
            "SLURM_LOCALID": str(rank),
            "SLURM_NODEID": "0",
            "SLURM_NODELIST": "127.0.0.1",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
        }
        with open(tmp_path / f"{tag}.{rank}.out", "w") as out, open(tmp_path / f"{tag}.{rank}.err", "w") as err:
            tasks.append(subprocess.Popen(command, cwd=tmp_path, stdout=out, stderr=err, env=env, start_new_session=True))
    return tasks


def finished(tasks: list[subprocess.Popen]) -> list[int]:
    for task in tasks:
        try:
            task.wait(BOUND)
        except subprocess.TimeoutExpired:
            os.killpg(task.pid, signal.SIGKILL)
            task.wait()
    return [task.returncode for task in tasks]


@pytest.mark.slow
def test_rows_of_one_model_train_on_rank_0_alone_under_srun_beside_a_stacked_group(tmp_path):
    script = tmp_path / "mixed.py"
    script.write_text(MIXED)
    # 12 steps: an epoch (10 steps) ends in each fit, where the training metrics of the epoch are computed
    flags = ["--kind", "natural", "--count", "2", "--seeds", "2", "--methods", "none,gaussian", *TINY, "--steps", "12"]
    command = [sys.executable, str(script), *flags, "--out", str(tmp_path / "two")]
    tasks = srun_tasks(tmp_path, command, "first")
    reference = subprocess.run([sys.executable, str(script), *flags, "--out", str(tmp_path / "one")], capture_output=True)
    assert reference.returncode == 0, reference.stderr[-4000:]
    assert finished(tasks) == [0, 0], (tmp_path / "first.0.err").read_text()[-4000:]

    one, two = (json.loads((tmp_path / name / "results.json").read_text()) for name in ("one", "two"))
    same_rows(two["rows"], one["rows"])
    assert [r["method"] for r in two["rows"] if r["kind"] == "model"] == ["none"] * 4 + ["gaussian"] * 4
    assert files_under(tmp_path / "two") == files_under(tmp_path / "one")
    assert (tmp_path / "first.1.out").read_text() == (tmp_path / "first.1.err").read_text() == ""
    progress = (tmp_path / "first.0.err").read_text()
    assert "[1/9] none (4 members): " in progress and "[5/9] gaussian (camera, seed 1): " in progress

    # the same command again: rank 0 finds every row done and tells rank 1, which trains nothing either
    assert finished(srun_tasks(tmp_path, command, "again")) == [0, 0], (tmp_path / "again.0.err").read_text()[-4000:]
    kept = [line for line in (tmp_path / "again.0.err").read_text().splitlines() if ": kept from the earlier run; " in line]
    assert len(kept) == 9 and (tmp_path / "again.1.out").read_text() == (tmp_path / "again.1.err").read_text() == ""
    assert json.loads((tmp_path / "two" / "results.json").read_text())["rows"] == two["rows"]
