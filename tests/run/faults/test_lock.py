"""The run lock (``<run>/train.lock``, an flock) on what a user's machine leaves behind: a lock held by another
process is refused naming its pid, a lock file left by a killed run is no obstacle, a lock path that is not a
file is one line, and a failed resume releases the lock. The run's files are unchanged by each refusal."""

import subprocess
import sys

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, f"{os.getpid()}\\n".encode())
print("held", flush=True)
time.sleep(120)
"""


def snapshot(run):
    return {p.relative_to(run): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def test_a_run_locked_by_another_process_is_refused_naming_it(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run / "train.lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = snapshot(run)
        busy = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "15", "--ckpt_path", "last"))
        assert busy.code == 2 and busy.errors == [
            f"error: {run} is in use by another training process (pid {holder.pid}); wait for it to end or stop it first"
        ]
        assert snapshot(run) == before
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_file_left_by_a_killed_run_is_no_obstacle(tmp_path, run_cli, trained_run, kit):
    """A SIGKILLed run leaves train.lock behind, its flock gone with the process."""
    run = kit.copy_run(trained_run, tmp_path)
    (run / "train.lock").write_text("999999999\n")
    outcome = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "12", "--ckpt_path", "last"))
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert not (run / "train.lock").exists()


def test_a_lock_path_that_is_a_folder_is_one_line_and_changes_nothing(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path)
    (run / "train.lock").mkdir()
    before = snapshot(run)
    outcome = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "12", "--ckpt_path", "last"))
    assert outcome.code == 2 and len(outcome.errors) == 1 and str(run / "train.lock") in outcome.errors[0], outcome.stderr
    assert "Traceback" not in outcome.stderr and snapshot(run) == before and (run / "train.lock").is_dir()


def test_a_failed_resume_releases_the_lock(tmp_path, run_cli, trained_run, kit):
    run = kit.copy_run(trained_run, tmp_path)
    failed = run_cli(kit.tiny(tmp_path, "--model.init_args.network.init_args.width", "32", "--ckpt_path", "last"))
    assert failed.code == 2 and not (run / "train.lock").exists()
    resumed = run_cli(kit.tiny(tmp_path, "--trainer.max_steps", "12", "--ckpt_path", "last"))
    assert resumed.code == 0, resumed.stderr[-2000:]
