"""Bad multi-node settings, refused before anything runs: one line, exit 2, nothing written. The launcher's
environment is set here as torchrun and SLURM set it (no process is started: the refusals come first)."""

import pytest

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
    "SLURM tasks without tasks per node": (
        {**SLURM, "SLURM_NTASKS": "2"},
        ["--trainer.num_nodes", "2", "--trainer.strategy", "ddp"],
        "trainer: You set `--ntasks=2` in your SLURM bash script, but this variable is not supported. HINT: Use "
        "`--ntasks-per-node=2` instead.",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_multinode_settings_one_line_exit_2_nothing_written(tmp_path, monkeypatch, run_cli, fault_run_args, name):
    environment, extra, expected = CASES[name]
    for key in ("TORCHELASTIC_RUN_ID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE", "NODE_RANK", "GROUP_RANK"):
        monkeypatch.delenv(key, raising=False)  # the suite's own environment is no launcher's
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
