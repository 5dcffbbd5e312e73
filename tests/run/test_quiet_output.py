"""What a command prints is about the run: no advertisement for Lightning's cloud products, no deprecation
notice from inside Lightning, no warning about training callbacks when a checkpoint is only evaluated."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--config",
    "image.yaml",
    "--data.init_args.resolution",
    "16",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.callbacks",
    "null",
    "--model.init_args.network.init_args.width",
    "8",
]
NOISE = ("💡 Tip", "LeafSpec", "callbacks used to create the checkpoint")


@pytest.mark.slow
def test_fit_and_validate_print_no_noise(tmp_path):
    outputs = []
    for command in (["--trainer.max_steps", "3"], ["validate", "--ckpt_path", "last"]):
        args = [*command[:1], *TINY, *command[1:]] if command[0] == "validate" else [*TINY, *command]
        done = subprocess.run(
            [sys.executable, str(ROOT / "train.py"), *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout + done.stderr)
    assert "summary:" in outputs[0] and "validate: val/psnr" in outputs[1]
    for text in outputs:
        assert [line for line in text.splitlines() if any(n in line for n in NOISE)] == []
