"""What a command prints is about the run: no advertisement for Lightning's cloud products, no deprecation
notice from inside Lightning, no warning about training callbacks when a checkpoint is only evaluated."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOISE = ("💡 Tip", "LeafSpec", "callbacks used to create the checkpoint")


@pytest.mark.slow
def test_fit_and_validate_print_no_noise(tmp_path, tiny_flags):
    tiny = tiny_flags("image.yaml", 16, width=8, bar=False, callbacks="null")  # 16², an 8-wide network, no callbacks
    outputs = []
    for command in (["--trainer.max_steps", "3"], ["validate", "--ckpt_path", "last"]):
        args = [*command[:1], *tiny, *command[1:]] if command[0] == "validate" else [*tiny, *command]
        done = subprocess.run(
            [sys.executable, str(ROOT / "train.py"), *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout + done.stderr)
    assert "summary:" in outputs[0] and "validate: val/psnr" in outputs[1]
    for text in outputs:
        assert [line for line in text.splitlines() if any(n in line for n in NOISE)] == []
