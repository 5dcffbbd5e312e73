"""Bad multi-node settings, refused before anything runs: one line, exit 2, nothing written. The launcher's
environment is set here as torchrun and SLURM set it (no process is started: the refusals come first). Launcher
variables that are no whole numbers, or ranks beyond the counts they index, are refused by ``train.py`` before
Lightning is imported (it reads the rank then) and by ``cli_main`` in this process."""

import os
import subprocess
import sys

import pytest

from inr.run.launch_env import PORT, RANKS, SIZES

TORCHRUN = {"TORCHELASTIC_RUN_ID": "job", "RANK": "0", "LOCAL_RANK": "0", "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1"}
SLURM = {"SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NODEID": "0", "SLURM_JOB_ID": "4242", "SLURM_JOB_NAME": "train"}

CASES = {
    "num_nodes without a launcher": (
        {},
        ["--trainer.num_nodes", "2"],
        "trainer.num_nodes 2: no launcher started this process (no torchrun or SLURM environment, no NODE_RANK), so "
        "the other nodes would never join; start every node's processes with torchrun --nnodes 2 --nproc-per-node 1",
    ),
    "torchrun started more processes than the trainer counts": (
        {**TORCHRUN, "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "1"},
        [],
        "trainer.num_nodes 1 × trainer.devices 1 = 1 process, but torchrun started 2 processes; give --trainer.num_nodes "
        "and --trainer.devices as torchrun's --nnodes and --nproc-per-node",
    ),
    "torchrun started fewer processes than the trainer counts": (
        {**TORCHRUN, "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "1"},
        ["--trainer.num_nodes", "4", "--trainer.strategy", "ddp"],
        "trainer.num_nodes 4 × trainer.devices 1 = 4 processes, but torchrun started 2 processes",
    ),
    "SLURM nodes and the trainer's disagree": (
        {**SLURM, "SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "1", "SLURM_NNODES": "2"},
        [],
        "trainer.num_nodes 1 × trainer.devices 1 = 1 process, but SLURM started 2 tasks; give --trainer.num_nodes and "
        "--trainer.devices as the job's --nodes and --ntasks-per-node (one task per device)",
    ),
    "trainer.num_nodes 0": (
        {},
        ["--trainer.num_nodes", "0"],
        "trainer.num_nodes 0: the number of machines the run spans must be a whole number ≥ 1 (1 for one machine)",
    ),
    "trainer.num_nodes -1": (
        {},
        ["--trainer.num_nodes", "-1"],
        "trainer.num_nodes -1: the number of machines the run spans must be a whole number ≥ 1 (1 for one machine)",
    ),
    "a node rank beyond trainer.num_nodes": (
        {"NODE_RANK": "5"},
        ["--trainer.num_nodes", "2", "--trainer.strategy", "ddp"],
        "NODE_RANK=5 with trainer.num_nodes 2: NODE_RANK must be from 0 to 1; give trainer.num_nodes as the launch "
        "counts them, or the rank this process has",
    ),
    "SLURM tasks without tasks per node": (
        {**SLURM, "SLURM_NTASKS": "2"},
        ["--trainer.num_nodes", "2", "--trainer.strategy", "ddp"],
        "trainer: You set `--ntasks=2` in your SLURM bash script, but this variable is not supported. HINT: Use "
        "`--ntasks-per-node=2` instead.",
    ),
}


# malformed values and ranks beyond their counts: what each process says (the whole line, but for its "error: ")
VARIABLES = {
    "SLURM_NTASKS=abc": (
        {**SLURM, "SLURM_NTASKS": "abc", "SLURM_NTASKS_PER_NODE": "1"},
        "SLURM_NTASKS='abc': SLURM's number of tasks in the job must be a whole number ≥ 1 (docs/cluster.md)",
    ),
    "SLURM_PROCID=abc": (
        {**SLURM, "SLURM_PROCID": "abc", "SLURM_NTASKS": "1", "SLURM_NTASKS_PER_NODE": "1"},
        "SLURM_PROCID='abc': SLURM's rank of this task in the job must be a whole number ≥ 0 (docs/cluster.md)",
    ),
    "MASTER_PORT=notanumber": (
        {**TORCHRUN, "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1", "MASTER_PORT": "notanumber"},
        "MASTER_PORT='notanumber': the TCP port where rank 0 meets the other processes must be a whole number from 1 "
        "to 65535 (docs/cluster.md)",
    ),
    "MASTER_PORT=99999": (
        {**SLURM, "SLURM_NTASKS": "1", "SLURM_NTASKS_PER_NODE": "1", "MASTER_PORT": "99999"},
        "MASTER_PORT='99999': the TCP port where rank 0 meets the other processes must be a whole number from 1 to "
        "65535 (docs/cluster.md)",
    ),
    "WORLD_SIZE=notanumber": (
        {**TORCHRUN, "WORLD_SIZE": "notanumber", "LOCAL_WORLD_SIZE": "1"},
        "WORLD_SIZE='notanumber': the number of processes of the run must be a whole number ≥ 1 (docs/cluster.md)",
    ),
    "NODE_RANK=abc": (
        {"NODE_RANK": "abc"},
        "NODE_RANK='abc': the rank of this node must be a whole number ≥ 0 (docs/cluster.md)",
    ),
    "SLURM_PROCID=5 of one task": (
        {**SLURM, "SLURM_PROCID": "5", "SLURM_NTASKS": "1", "SLURM_NTASKS_PER_NODE": "1"},
        "SLURM_PROCID=5 with SLURM_NTASKS=1: SLURM_PROCID must be 0; the launcher's variables disagree, and this "
        "process would train as rank 5 of 1 (docs/cluster.md)",
    ),
    "RANK=3 of WORLD_SIZE=1": (
        {"RANK": "3", "WORLD_SIZE": "1"},
        "RANK=3 with WORLD_SIZE=1: RANK must be 0; the launcher's variables disagree, and this process would train as "
        "rank 3 of 1 (docs/cluster.md)",
    ),
    "SLURM_LOCALID beyond the tasks per node": (
        {**SLURM, "SLURM_LOCALID": "2", "SLURM_NTASKS": "4", "SLURM_NTASKS_PER_NODE": "2", "SLURM_NNODES": "2"},
        "SLURM_LOCALID=2 with SLURM_NTASKS_PER_NODE=2: SLURM_LOCALID must be from 0 to 1; the launcher's variables "
        "disagree, and this process would train as local rank 2 of 2 on its node (docs/cluster.md)",
    ),
    "SLURM_NODEID beyond the nodes": (
        {**SLURM, "SLURM_NODEID": "2", "SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "1", "SLURM_NNODES": "2"},
        "SLURM_NODEID=2 with SLURM_NNODES=2: SLURM_NODEID must be from 0 to 1; the launcher's variables disagree, and "
        "this process would train as a process of node 2 of 2 (docs/cluster.md)",
    ),
    "GROUP_RANK beyond torchrun's nodes": (
        {**TORCHRUN, "GROUP_RANK": "2", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2"},
        "GROUP_RANK=2 with WORLD_SIZE=4 and LOCAL_WORLD_SIZE=2 (2 nodes): GROUP_RANK must be from 0 to 1; the "
        "launcher's variables disagree (docs/cluster.md)",
    ),
}
LAUNCHER_KEYS = ("TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "SLURM_JOB_NAME", *RANKS, *SIZES, PORT)


def no_launcher(monkeypatch) -> None:
    from lightning_utilities.core.rank_zero import rank_zero_only

    for key in LAUNCHER_KEYS:
        monkeypatch.delenv(key, raising=False)  # the suite's own environment is no launcher's
    monkeypatch.setattr(rank_zero_only, "rank", rank_zero_only.rank)  # a Trainer built here may set it: restored after


@pytest.mark.parametrize("name", list(VARIABLES))
def test_bad_launcher_variables_one_line_exit_2_nothing_written(tmp_path, monkeypatch, run_cli, fault_run_args, name):
    environment, expected = VARIABLES[name]
    no_launcher(monkeypatch)
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    outcome = run_cli(fault_run_args(tmp_path / "runs", "--trainer.accelerator", "cpu"))
    assert outcome.code == 2 and outcome.errors == [f"error: {expected}"], outcome.stderr[-3000:]
    assert "Traceback" not in outcome.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("name", ["SLURM_PROCID=abc", "SLURM_PROCID=5 of one task", "RANK=3 of WORLD_SIZE=1"])
@pytest.mark.parametrize("command", ["train.py", "inr-train"])
def test_train_py_refuses_the_rank_before_lightning_reads_it(tmp_path, monkeypatch, kit, name, command):
    # Lightning reads RANK, LOCAL_RANK and SLURM_PROCID when imported: a traceback there, or rank 5's silent run, before
    environment, expected = VARIABLES[name]
    no_launcher(monkeypatch)
    program = [str(kit.root / "train.py")] if command == "train.py" else ["-c", "from inr.commands import train; train()"]
    refused_before_lightning(
        [*program, *kit.tiny(tmp_path / "runs", "--trainer.accelerator", "cpu")], tmp_path, environment, expected
    )
    assert not (tmp_path / "runs").exists()


def refused_before_lightning(arguments: list, cwd, environment: dict, expected: str) -> None:
    """Python run with ``arguments`` in ``cwd`` under the launcher ``environment`` (no other launcher variable) exits 2
    with the one line ``error: expected``."""
    done = subprocess.run(
        [sys.executable, *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**{k: v for k, v in os.environ.items() if k not in LAUNCHER_KEYS}, **environment},
    )
    assert done.returncode == 2 and done.stderr.splitlines() == [f"error: {expected}"], done.stderr[-3000:]


@pytest.mark.parametrize("name", list(CASES))
def test_bad_multinode_settings_one_line_exit_2_nothing_written(tmp_path, monkeypatch, run_cli, fault_run_args, name):
    environment, extra, expected = CASES[name]
    no_launcher(monkeypatch)
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    outcome = run_cli(fault_run_args(tmp_path / "runs", "--trainer.accelerator", "cpu", *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-3000:]
    assert expected in outcome.errors[0] and outcome.errors[0].endswith("(docs/cluster.md)"), outcome.errors
    assert "Traceback" not in outcome.stderr
    assert not (tmp_path / "runs").exists()


def test_members_shard_over_the_ranks_and_fewer_members_than_ranks_are_refused():
    from functools import partial
    from types import SimpleNamespace

    from inr.encoders import GaussianEncoding
    from inr.errors import InputError
    from inr.networks import MLP
    from inr.tasks import ImageFitting

    task = ImageFitting(members=3, encoder=GaussianEncoding(num_features=4), network=partial(MLP, width=8, depth=1))
    data = SimpleNamespace(targets=1)
    trainer = lambda rank, ranks: SimpleNamespace(world_size=ranks, global_rank=rank, gradient_clip_val=None, callbacks=[])
    shares = []
    for rank in range(2):
        task.stack.check_fit(trainer(rank, 2), data)
        shares.append(list(task.stack.mine))
    assert shares == [[0, 1], [2]]  # contiguous, the larger share first
    task.stack.check_fit(trainer(0, 1), data)
    assert list(task.stack.mine) == [0, 1, 2] and task.stack.shard is None
    with pytest.raises(InputError, match=r"model.members 3 over 4 processes: each process trains at least one member"):
        task.stack.check_fit(trainer(0, 4), data)


@pytest.mark.parametrize(
    "program",
    [
        ["-m", "inr.experiments.learned_init", "--kind", "natural", "--estimate-only"],
        ["-m", "inr.codec", "encode", "IMAGE", "-o", "x.inr", "--method", "latents", "--lambda", "0.01"],
        ["-c", "from inr.commands import codec; codec()", "encode", "IMAGE", "-o", "x.inr", "--lambda", "0.01"],
        ["-c", "from inr.commands import compare; compare()", "--help"],
        ["-c", "from inr.commands import mesh; mesh()", "--help"],
    ],
    ids=["python -m a study", "python -m inr.codec", "inr-codec", "inr-compare", "inr-mesh"],
)
def test_the_other_commands_refuse_a_malformed_rank_before_lightning_reads_it(tmp_path, monkeypatch, program):
    environment, expected = VARIABLES["SLURM_PROCID=abc"]
    no_launcher(monkeypatch)
    image = tmp_path / "image.png"
    image.write_bytes(b"")  # never read: the refusal comes first
    refused_before_lightning([str(image) if a == "IMAGE" else a for a in program], tmp_path, environment, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["image.png"]
