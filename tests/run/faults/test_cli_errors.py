"""Bad settings and files: one line on stderr, exit 2, no traceback, and no run directory left behind."""

import re
from pathlib import Path

import pytest
import torch

from inr.experiments.compare_encoders import main as compare_main

UNAVAILABLE_ACCELERATOR = "mps" if torch.cuda.is_available() else "gpu"  # an accelerator this machine lacks

CASES = {
    "negative lr": (
        ["--model.init_args.optimizer.init_args.lr", "-0.001"],
        "model.init_args.optimizer: Invalid learning rate: -0.001",
    ),
    "max_steps below -1": (["--trainer.max_steps", "-5"], "`max_steps` must be a non-negative integer or -1"),
    "batch beyond memory": (["--data.init_args.batch_size", "100000000000"], "choose a smaller data.batch_size"),
    "missing accelerator": (["--trainer.accelerator", UNAVAILABLE_ACCELERATOR], "trainer: "),
    "eval chunk 0": (["--data.init_args.eval_chunk", "0"], "data.eval_chunk must be ≥ 1"),
    "render chunk -1": (["--model.init_args.render_chunk", "-1"], "model.render_chunk must be ≥ 1"),
    "duplicate callback": (
        ["--trainer.callbacks+=inr.callbacks.SpectralBiasCallback", "--trainer.callbacks+=inr.callbacks.SpectralBiasCallback"],
        "SpectralBiasCallback is given twice",
    ),
    "output under a file": (["--trainer.logger.init_args.save_dir", "{file}/runs"], "is a file, not a directory"),
    "not a checkpoint": (["--ckpt_path", "{file}"], "not a readable checkpoint"),
    "truncated checkpoint": (["--ckpt_path", "{truncated}"], "not a readable checkpoint"),
    "another architecture": (
        ["--model.init_args.encoder.init_args.num_features", "8", "--ckpt_path", "{checkpoint}"],
        "made by another model: encoder.b is [16, 2] there and [8, 2] in this config",
    ),
    "negative sigma": (
        ["--model.init_args.encoder.init_args.sigma", "-3"],
        "GaussianEncoding.sigma must be a finite number > 0, got -3",
    ),
    "empty config": (["--config", "{empty}"], "empty.yaml: the config file is empty"),
}
if Path("/proc").is_dir():  # Linux: a location no process can create files in, whoever runs the suite
    CASES["read-only output"] = (
        ["--trainer.logger.init_args.save_dir", "/proc/inr-runs"],
        "output location /proc/inr-runs: cannot write in /proc",
    )


@pytest.mark.parametrize("name", list(CASES))
def test_bad_settings_one_line_exit_2_nothing_written(tmp_path, run_cli, trained_run, kit, name):
    files = {
        "file": tmp_path / "notes.txt",
        "truncated": tmp_path / "half.ckpt",
        "empty": tmp_path / "empty.yaml",
        "checkpoint": trained_run / "checkpoints" / "last.ckpt",
    }
    files["file"].write_text("not a checkpoint")
    files["truncated"].write_bytes(files["checkpoint"].read_bytes()[:3000])
    files["empty"].write_text("# nothing but a comment\n")
    extra, expected = CASES[name]
    outcome = run_cli(kit.tiny(tmp_path / "runs", *[a.format(**files) for a in extra]))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-3000:]
    assert "Traceback" not in outcome.stderr
    assert kit.files_under(tmp_path / "runs") == []


def test_malformed_yaml_is_named_by_file_line_and_column(tmp_path, run_cli, kit):
    bad = tmp_path / "bad.yaml"
    bad.write_text("trainer:\n  max_steps: 3\n  callbacks: [a, b\n")
    outcome = run_cli(kit.tiny(tmp_path / "runs", "--config", str(bad)))
    assert outcome.code == 2 and len(outcome.errors) == 1
    assert re.fullmatch(rf"error: {re.escape(str(bad))}:\d+:\d+: .+", outcome.errors[0]), outcome.errors


@pytest.mark.slow
def test_a_config_that_multiplies_itself_is_refused_at_once(tmp_path, kit):
    """Nine levels of nine aliases: 9⁹ ≈ 3.9·10⁸ values from 400 bytes. A subprocess, so that a regression
    shows as a timeout instead of exhausting this process's memory."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    laughs = tmp_path / "laughs.yaml"
    laughs.write_text("\n".join(lines) + "\n")
    proc = kit.run_script(kit.tiny(tmp_path / "runs", "--config", str(laughs)), timeout=120)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and len(errors) == 1 and "aliases expand to more than 100,000 values" in errors[0], proc.stderr[
        -2000:
    ]
    assert kit.files_under(tmp_path / "runs") == []


@pytest.mark.parametrize("width", ["0", "-4"])
def test_compare_encoders_refuses_a_width_below_1(tmp_path, capsys, width):
    with pytest.raises(SystemExit) as exit_info:
        compare_main(["--width", width, "--out", str(tmp_path / "out")])
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert exit_info.value.code == 2 and len(errors) == 1 and f"--width must be ≥ 1, got {width}" in errors[0]
    assert not (tmp_path / "out").exists()


def test_a_config_file_beyond_the_bound_is_refused_before_it_is_read(tmp_path, run_cli, kit):
    """A 64 MiB config (sparse: its size is what the parser would take in) is refused from its size; read first, a
    2 GiB one took 28 s and 5 GB of memory before the same refusal."""
    import tracemalloc

    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.write(b"# a comment\n")
        f.truncate(64 * 2**20)
    tracemalloc.start()
    try:
        outcome = run_cli(kit.tiny(tmp_path / "runs", "--config", str(big)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert outcome.code == 2 and outcome.errors == [f"error: {big}: 67,108,864 bytes, over the 1,048,576 a config may have"]
    assert peak < 16 * 2**20, peak
    assert kit.files_under(tmp_path / "runs") == []
