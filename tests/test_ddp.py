"""Two-process DDP training on CPU (gloo, localhost) through the real CLI: completes and logs once."""
import subprocess
import sys
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

ROOT = Path(__file__).resolve().parents[1]


def test_two_process_ddp_on_cpu(tmp_path):
    cmd = [
        sys.executable, str(ROOT / "train.py"), "--config", "image.yaml",
        "--data.init_args.resolution", "32",
        "--data.init_args.batch_size", "128",
        "--data.init_args.steps_per_epoch", "5",
        "--model.init_args.network.init_args.width", "32",
        "--trainer.max_steps", "10",
        "--trainer.check_val_every_n_epoch", "1",
        "--trainer.enable_progress_bar", "false",
        "--trainer.accelerator", "cpu", "--trainer.devices", "2", "--trainer.strategy", "ddp",
        "--trainer.logger.init_args.save_dir", str(tmp_path),
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "MEMBER: 2/2" in proc.stderr + proc.stdout
    assert sum(line.startswith("summary:") for line in proc.stdout.splitlines()) == 1  # rank 0 only
    assert [p.name for p in (tmp_path / "image").iterdir()] == ["version_0"]  # one set of logs
    (event_file,) = (tmp_path / "image" / "version_0").glob("events.out.tfevents.*")
    acc = EventAccumulator(str(event_file))
    acc.Reload()
    assert {"train/loss", "val/psnr"} <= set(acc.Tags()["scalars"])
    assert len(acc.Scalars("val/psnr")) == 2  # one value per validation, not one per rank
    assert len(acc.Scalars("train/psnr_epoch")) == 2  # one per epoch, from the states of both ranks
    assert "sync_dist" not in proc.stderr  # held-out values are equal on every rank: no advice for them
    assert (tmp_path / "image" / "version_0" / "checkpoints" / "last.ckpt").exists()
