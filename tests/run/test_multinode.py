"""Two nodes × one process on 127.0.0.1 (CPU, gloo), through the launchers clusters use: ``torchrun --nnodes 2``
(two launcher processes, c10d rendezvous) and SLURM (two tasks with the environment ``srun`` gives them).

Each node runs in a directory of its own with its own ``trainer.default_root_dir`` and logger ``save_dir`` (a
node-local disk): rank 0 writes the run, the other node's directory stays empty, and a line on each says where the
run is. The sharded full batch trains as one process does (to rounding: the ranks' gradients are summed in
another order), one copy of each log and checkpoint is written, and a checkpoint of the two-node run resumes in
one process. A refusal on rank 0 before training stops both ranks at once with its one line.

Stacked members sharded over the ranks (``inr.tasks.members``): 2 ranks × K/2 members end bit for bit as 1 rank ×
K, and a checkpoint of either resumes in the other, bit for bit.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.run.cli import cli_main

ROOT = Path(__file__).resolve().parents[2]
BOUND = 300  # seconds a launch may take on the loaded 2-core machine; a hang fails the test instead


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def tiny(tiny_flags):
    """``tiny(node, *extra)``: a 16² image run of 20 full-batch steps (64 training points, 32 per rank), epochs of
    10 steps taken 5 per Lightning step, logged every 5 steps, checkpoints at steps 10 and 20, writing under ``node``."""
    steps = ("--data.init_args.steps_per_epoch", 10, "--model.init_args.inner_steps", 5, "--trainer.log_every_n_steps", 5)
    run = tiny_flags("image.yaml", 16, *steps, width=16, features=16, steps=20, quiet=True)
    checkpoints = ["--checkpoint.every_n_train_steps", "10", "--checkpoint.save_top_k", "-1", "--trainer.accelerator", "cpu"]

    def args(node: Path, *extra: str) -> list[str]:
        written = ["--trainer.default_root_dir", str(node), "--trainer.logger.init_args.save_dir", str(node / "runs")]
        return [*run, *checkpoints, *written, *extra]

    return args


TWO_NODES = ["--trainer.num_nodes", "2", "--trainer.devices", "1", "--trainer.strategy", "ddp"]


class Node:
    """One node's process (torchrun's launcher, or a SLURM task), started now in its own directory."""

    def __init__(self, command: list[str], directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.out, self.err = directory.parent / f"{directory.name}.out", directory.parent / f"{directory.name}.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:  # files, not pipes: nothing blocks on a full pipe
            self.proc = subprocess.Popen(
                command, cwd=directory, stdout=out, stderr=err, env={**os.environ, **env}, start_new_session=True
            )

    def finish(self, timeout: float = BOUND) -> tuple[int, str, str]:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            code = None
        return code, self.out.read_text(), self.err.read_text()


def documented(marker: str) -> str:
    """The bash block of docs/cluster.md that holds ``marker``, continuation lines joined."""
    text = (ROOT / "docs" / "cluster.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    (block,) = [b for b in blocks if marker in b][:1]
    return block.replace("\\\n", " ")


def with_train_py(directory: Path) -> None:
    """The documented commands name ``train.py`` from the repository root: a link to it in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "train.py").symlink_to(ROOT / "train.py")


def torchrun_nodes(tmp_path: Path, extra_of) -> list[Node]:
    """docs/cluster.md's torchrun command on two nodes of 127.0.0.1 (``HEAD_NODE``), one launcher per node directory
    holding a link to train.py, with another port than the page's (tests may run side by side) and the options
    ``extra_of(node)`` appended."""
    command = documented("torchrun --nnodes").strip().replace(":29500", f":{free_port()}")
    nodes = []
    for name in ("node_a", "node_b"):
        node = tmp_path / name
        with_train_py(node)
        script = f'{command} "$@"'
        env = {"HEAD_NODE": "127.0.0.1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        nodes.append(Node(["bash", "-c", script, "torchrun", *extra_of(node)], node, env))
    return nodes


def slurm_nodes(tmp_path: Path, args_of, job: str = "4242", names=("node_a", "node_b"), extra_env=None) -> list[Node]:
    """Two SLURM tasks, one per node (``--nodes 2 --ntasks-per-node 1``), with the variables srun sets."""
    port = str(free_port())
    nodes = []
    for rank, name in enumerate(names):
        env = {
            "SLURM_JOB_ID": job,
            "SLURM_JOB_NAME": "train",
            "SLURM_NTASKS": "2",
            "SLURM_NTASKS_PER_NODE": "1",
            "SLURM_NNODES": "2",
            "SLURM_PROCID": str(rank),
            "SLURM_LOCALID": "0",
            "SLURM_NODEID": str(rank),
            "SLURM_NODELIST": "127.0.0.1",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
            **(extra_env or {}),
        }
        node = tmp_path / name
        nodes.append(Node([sys.executable, str(ROOT / "train.py"), *args_of(node)], node, env))
    return nodes


def finish_all(nodes: list[Node]) -> list[tuple[int, str, str]]:
    done = [node.finish() for node in nodes]
    for code, _, err in done:
        assert code == 0, f"exit {code}: {err[-4000:]}"
    assert sum(line.startswith("summary:") for _, out, _ in done for line in out.splitlines()) == 1  # rank 0 only
    return done


def files_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file() and not p.is_symlink())


def scalars(run: Path) -> dict[str, list[tuple[int, float]]]:
    (event_file,) = run.glob("events.out.tfevents.*")
    acc = EventAccumulator(str(event_file))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def checkpoint(path: Path) -> dict:
    return torch.load(path, weights_only=True)


def max_difference(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float((a[k].float() - b[k].float()).abs().max()) for k in a)


def stopped_copy(run: Path, step: int, node: Path) -> Path:
    """``run`` as it stood right after its step-``step`` checkpoint, copied into ``node``'s logger directory
    (modification times kept: that checkpoint is the newest ``--ckpt_path last`` finds there)."""
    copy = node / "runs" / run.parent.name / run.name
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("events.out.tfevents.*", "metrics.json"))
    for path in (copy / "checkpoints").glob("*.ckpt"):
        if checkpoint(path)["global_step"] > step:
            path.unlink()
    return copy


def writer_and_idle(nodes: list[Node]) -> tuple[Node, Node]:
    """The node rank 0 ran on (c10d gives ranks in the order the launchers join) and the other one."""
    writers = [node for node in nodes if (node.directory / "runs").exists()]
    assert len(writers) == 1, [files_under(node.directory) for node in nodes]
    (idle,) = [node for node in nodes if node is not writers[0]]
    return writers[0], idle


@pytest.mark.slow
def test_torchrun_two_nodes_train_as_one_process_write_once_and_resume_in_one(tmp_path, tiny):
    nodes = torchrun_nodes(tmp_path, lambda node: tiny(node)[2:])  # the page's config; a tiny run of it, on each node
    cli_main(tiny(tmp_path / "one", "--trainer.devices", "1"))  # the reference, while the launchers start
    done = finish_all(nodes)
    writer, idle = writer_and_idle(nodes)
    run = writer.directory / "runs" / "image" / "version_0"
    one = tmp_path / "one" / "runs" / "image" / "version_0"

    # one run directory, one copy of each log and checkpoint, nothing on the other node
    assert [p.name for p in (writer.directory / "runs" / "image").iterdir()] == ["version_0"]
    assert {p.name for p in (run / "checkpoints").iterdir()} == {"epoch=0-step=10.ckpt", "epoch=1-step=20.ckpt", "last.ckpt"}
    assert len(list(run.glob("events.out.tfevents.*"))) == 1
    assert files_under(idle.directory) == []
    err_of = {node.directory: err for node, (_, _, err) in zip(nodes, done)}
    lines = [line for line in err_of[writer.directory].splitlines() if line.startswith("note: 2 nodes")]
    assert lines == [
        f"note: 2 nodes × 1 process (torchrun): rank 0 on {socket.gethostname()} writes the run into {run}; the other "
        f"ranks write nothing; not used: node 1 ({socket.gethostname()}) {idle.directory / 'runs'}"
    ], err_of[writer.directory][-3000:]
    assert f"writes this run into {run}; nothing is written on this node" in err_of[idle.directory]

    # the losses and parameters of one process, to rounding (the two shares' gradients are summed in another order)
    logs, reference = scalars(run), scalars(one)
    for tag in ("train/loss", "val/psnr"):
        assert [s for s, _ in logs[tag]] == [s for s, _ in reference[tag]] and len(logs[tag]) >= 2, tag
        for (step, x), (_, y) in zip(logs[tag], reference[tag]):
            assert abs(x - y) <= 1e-5 * abs(y), (tag, step, x, y)
    final = checkpoint(run / "checkpoints" / "last.ckpt")
    assert max_difference(final["state_dict"], checkpoint(one / "checkpoints" / "last.ckpt")["state_dict"]) <= 1e-5

    # the two-node run's step-10 checkpoint resumes in one process, in place, and ends where the two nodes ended
    resumed = stopped_copy(run, 10, tmp_path / "resumed")
    cli_main(tiny(tmp_path / "resumed", "--trainer.devices", "1", "--ckpt_path", "last"))
    assert [p.name for p in resumed.parent.iterdir()] == ["version_0"] and (resumed / "config.resume-1.yaml").is_file()
    ended = checkpoint(resumed / "checkpoints" / "last.ckpt")
    assert ended["global_step"] == 20 and max_difference(ended["state_dict"], final["state_dict"]) <= 1e-5


@pytest.mark.slow
def test_a_refusal_on_rank_0_stops_both_nodes_at_once_with_its_line(tmp_path, tiny):
    # --ckpt_path last with no checkpoint: rank 0 alone looks for it; rank 1 learns of the refusal instead of waiting
    start = time.monotonic()
    nodes = slurm_nodes(tmp_path, lambda node: tiny(node, *TWO_NODES, "--ckpt_path", "last"))
    done = [node.finish() for node in nodes]
    assert time.monotonic() - start < BOUND
    assert [code for code, _, _ in done] == [2, 2], [err[-2000:] for _, _, err in done]
    errors = [line for _, _, err in done for line in err.splitlines() if line.startswith("error:")]
    assert errors == [f"error: ckpt_path last: no checkpoint under {tmp_path / 'node_a' / 'runs' / 'image'} (a run writes "
                      "checkpoints/last.ckpt every few minutes and when training ends)"], errors  # fmt: skip
    assert all("Traceback" not in err for _, _, err in done)
    assert files_under(tmp_path / "node_a") == [] and files_under(tmp_path / "node_b") == []


MEMBERS = ["--model.init_args.members", "3"]  # network seeds 0, 1, 2 on one target: shares of 2 and 1 over 2 ranks


@pytest.mark.slow
def test_members_sharded_over_two_nodes_end_bit_for_bit_as_one_process_and_resume_both_ways(
    tmp_path, tiny, assert_same_training_state
):
    same = assert_same_training_state  # bit for bit: parameters, Adam's moments and the step
    two_nodes = slurm_nodes(tmp_path / "two", lambda node: tiny(node, *TWO_NODES, *MEMBERS))
    cli_main(tiny(tmp_path / "one", "--trainer.devices", "1", *MEMBERS))
    finish_all(two_nodes)
    two = tmp_path / "two" / "node_a" / "runs" / "image" / "version_0"  # SLURM_PROCID 0 ran on node_a
    one = tmp_path / "one" / "runs" / "image" / "version_0"
    assert files_under(tmp_path / "two" / "node_b") == []

    # rank 0 trained members 0 and 1, rank 1 member 2: one checkpoint holds all three, equal to one process's
    for name in ("epoch=0-step=10.ckpt", "last.ckpt"):
        same(checkpoint(two / "checkpoints" / name), checkpoint(one / "checkpoints" / name))
    assert checkpoint(two / "checkpoints" / "last.ckpt")["state_dict"]["network.0.weight"].shape[0] == 3
    logs_two, logs_one = scalars(two), scalars(one)
    assert (
        logs_two.keys() == logs_one.keys()
        and {"train/loss/m2", "train/psnr/m2", "val/psnr/m2", "val/ssim/std"} <= logs_two.keys()
    )
    for tag, series in logs_one.items():  # every member's losses, metrics and held-out scores, gathered from both ranks
        assert logs_two[tag] == series, tag

    # a checkpoint of either resumes in the other, bit for bit
    to_one = stopped_copy(two, 10, tmp_path / "to_one")
    cli_main(tiny(tmp_path / "to_one", "--trainer.devices", "1", *MEMBERS, "--ckpt_path", "last"))
    same(checkpoint(to_one / "checkpoints" / "last.ckpt"), checkpoint(one / "checkpoints" / "last.ckpt"))
    to_two = stopped_copy(one, 10, tmp_path / "to_two" / "node_a")
    finish_all(slurm_nodes(tmp_path / "to_two", lambda node: tiny(node, *TWO_NODES, *MEMBERS, "--ckpt_path", "last")))
    assert [p.name for p in to_two.parent.iterdir()] == ["version_0"] and (to_two / "config.resume-1.yaml").is_file()
    same(checkpoint(to_two / "checkpoints" / "last.ckpt"), checkpoint(two / "checkpoints" / "last.ckpt"))


FAKE_SRUN = """#!{python}
# srun as SLURM runs it inside a batch job, on one host: its own options dropped, one task per node × task per node,
# each with the variables srun sets
import os, subprocess, sys
args = [a for a in sys.argv[1:]]
while args and args[0].startswith("--"):
    args.pop(0)
nodes, per_node = int(os.environ["SLURM_JOB_NUM_NODES"]), int(os.environ["SLURM_NTASKS_PER_NODE"])
tasks = []
for rank in range(nodes * per_node):
    env = dict(os.environ, SLURM_NTASKS=str(nodes * per_node), SLURM_NNODES=str(nodes), SLURM_PROCID=str(rank),
               SLURM_LOCALID=str(rank % per_node), SLURM_NODEID=str(rank // per_node), SLURM_NODELIST="127.0.0.1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["FAKE_SRUN_PORT"])
    tasks.append(subprocess.Popen(args, env=env))
sys.exit(max((task.wait() for task in tasks), key=abs))
"""


@pytest.mark.slow
def test_the_documented_sbatch_script_trains_on_two_nodes_through_srun(tmp_path, tiny):
    script = documented("#SBATCH")
    options = dict(re.findall(r"^#SBATCH --([\w-]+)=(\S+)", script, flags=re.M))
    assert options["signal"] == "USR1@90" and "#SBATCH --requeue" in script
    submit = tmp_path / "submit"  # the directory sbatch is called from
    with_train_py(submit)
    (submit / "inr.sbatch").write_text(script)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(FAKE_SRUN.format(python=sys.executable))
    (bin_dir / "srun").chmod(0o755)
    batch = {  # what sbatch sets from the #SBATCH lines
        "SLURM_JOB_ID": "777",
        "SLURM_JOB_NAME": options["job-name"],
        "SLURM_JOB_NUM_NODES": options["nodes"],
        "SLURM_NNODES": options["nodes"],
        "SLURM_NTASKS_PER_NODE": options["ntasks-per-node"],
        "FAKE_SRUN_PORT": str(free_port()),
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]),  # srun, python
    }
    code, out, err = Node(["bash", "inr.sbatch", *tiny(submit)[2:]], submit, batch).finish()  # sbatch inr.sbatch <options>
    assert code == 0, err[-4000:]
    run = submit / "runs" / "image" / "version_0"
    assert sum(line.startswith("summary:") for line in out.splitlines()) == 1
    assert f"note: 2 nodes × 1 process (SLURM): rank 0 on {socket.gethostname()} writes the run into {run}" in err
    assert [p.name for p in (submit / "runs" / "image").iterdir()] == ["version_0"]
    assert checkpoint(run / "checkpoints" / "last.ckpt")["global_step"] == 20


# a short join timeout through the strategy's own setting (the default is JOIN_TIMEOUT, minutes)
SHORT_JOIN = ["--trainer.strategy", "DDPStrategy", "--trainer.strategy.timeout", "0:00:06"]
TWO_NODES_SHORT_JOIN = ["--trainer.num_nodes", "2", "--trainer.devices", "1", *SHORT_JOIN]


def alone(tmp_path: Path, env: dict[str, str], tiny) -> tuple[int, str, float]:
    """One node's process of a two-node run whose other node never starts: its exit code, stderr and seconds."""
    start = time.monotonic()
    code, _, err = Node([sys.executable, str(ROOT / "train.py"), *tiny(tmp_path / "node", *TWO_NODES_SHORT_JOIN)],
                        tmp_path / "node", env).finish()  # fmt: skip
    return code, err, time.monotonic() - start


def waited(err: str) -> tuple[list[str], list[str]]:
    lines = err.splitlines()
    return [line for line in lines if line.startswith("note:")], [line for line in lines if line.startswith("error:")]


@pytest.mark.slow
def test_slurm_task_whose_peer_never_starts_says_what_it_waits_for_and_stops_at_the_timeout(tmp_path, tiny):
    # SLURM's two tasks, started as one: rank 0 waits for rank 1 at its port
    port = str(free_port())
    env = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NAME": "train", "SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "1",
           "SLURM_NNODES": "2", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NODEID": "0",
           "SLURM_NODELIST": "127.0.0.1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}  # fmt: skip
    code, err, seconds = alone(tmp_path, env, tiny)
    assert code == 1 and "Traceback" not in err, err[-3000:]
    notes, errors = waited(err)
    assert notes == [
        f"note: rank 0 of 2 (node 0) is waiting for the other 1 process at 127.0.0.1:{port}; it gives up after 0:00:06 "
        "(the strategy's timeout: --trainer.strategy DDPStrategy --trainer.strategy.timeout 0:15:00; docs/cluster.md)"
    ], err[-3000:]
    assert errors == [
        f"error: rank 0 of 2 (node 0) waited 0:00:06 at 127.0.0.1:{port} and 1 of 2 processes joined, this one "
        "included; start the 2 tasks with one srun (--nodes × --ntasks-per-node = 2) with the same MASTER_ADDR and "
        "MASTER_PORT, or give the strategy a longer timeout (docs/cluster.md)"
    ], err[-3000:]
    assert 6 <= seconds < BOUND
    assert files_under(tmp_path / "node") == []


@pytest.mark.slow
def test_node_1_without_node_0_says_what_it_waits_for_and_stops_at_the_timeout(tmp_path, tiny):
    # NODE_RANK=1 (Lightning's own variables, no launcher) and nothing at MASTER_ADDR:MASTER_PORT
    port = str(free_port())
    code, err, seconds = alone(tmp_path, {"NODE_RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}, tiny)
    assert code == 1 and "Traceback" not in err and "c10d" not in err, err[-3000:]
    notes, errors = waited(err)
    assert notes == [
        f"note: rank 1 of 2 (node 1) is waiting for rank 0 at 127.0.0.1:{port}; it gives up after 0:00:06 (the "
        "strategy's timeout: --trainer.strategy DDPStrategy --trainer.strategy.timeout 0:15:00; docs/cluster.md)"
    ], err[-3000:]
    assert errors == [
        f"error: rank 1 of 2 (node 1) waited 0:00:06 for rank 0 at 127.0.0.1:{port} and nothing answered "
        "(ConnectionRefusedError: Connection refused); start rank 0's process (node 0) with the same MASTER_ADDR and "
        "MASTER_PORT, or give the strategy a longer timeout (docs/cluster.md)"
    ], err[-3000:]
    assert 6 <= seconds < BOUND
    assert files_under(tmp_path / "node") == []  # the run directory this process had made is removed again
