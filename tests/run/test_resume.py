"""A run stopped and resumed from ``--ckpt_path last`` ends with the same parameters as an uninterrupted one."""

from pathlib import Path

import pytest
import torch

from inr.run.cli import cli_main


@pytest.fixture(scope="module")
def run_args(tiny_flags):
    """``run_args(save_dir, steps, batch_size)``: a 24² image run, 5 steps an epoch, validating every second epoch."""

    def args(save_dir: Path, steps: int, batch_size: str) -> list[str]:
        data = ("--data.init_args.batch_size", batch_size, "--data.init_args.steps_per_epoch", 5)
        every_2 = ("--trainer.check_val_every_n_epoch", 2)
        return tiny_flags("image.yaml", 24, *data, *every_2, width=16, features=16, steps=steps, bar=False, save_dir=save_dir)

    return args


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", ["32", "null"])  # random batches (sampler state) and full batch
def test_resume_is_bitwise_equal(tmp_path, batch_size, run_args):
    cli_main(run_args(tmp_path / "straight", 30, batch_size))
    cli_main(run_args(tmp_path / "resumed", 15, batch_size))  # stops at an epoch end, as a kill after a checkpoint
    cli_main(run_args(tmp_path / "resumed", 30, batch_size) + ["--ckpt_path", "last"])
    straight = torch.load(next((tmp_path / "straight").rglob("last.ckpt")), weights_only=True)
    resumed = torch.load(next((tmp_path / "resumed").rglob("last.ckpt")), weights_only=True)
    assert straight["global_step"] == resumed["global_step"] == 30
    for key, value in straight["state_dict"].items():
        assert torch.equal(value, resumed["state_dict"][key]), key
    exp_avg = [s["exp_avg"] for s in straight["optimizer_states"][0]["state"].values()]
    exp_avg_resumed = [s["exp_avg"] for s in resumed["optimizer_states"][0]["state"].values()]
    assert all(torch.equal(a, b) for a, b in zip(exp_avg, exp_avg_resumed))
    # the resumed run continued in its own log directory instead of starting a new version
    assert [p.name for p in (tmp_path / "resumed" / "image").iterdir()] == ["version_0"]


@pytest.mark.slow
def test_resume_from_a_mid_epoch_checkpoint_is_bitwise_equal(tmp_path, run_args):
    # every_n_train_steps saves in on_train_batch_end, before Lightning counts the batch as completed: the
    # loader must still skip it, or the resumed run trains step 8's batch twice
    every_4 = ["--checkpoint.every_n_train_steps", "4"]
    cli_main(run_args(tmp_path / "straight", 12, "32") + every_4)
    cli_main(run_args(tmp_path / "resumed", 8, "32") + every_4)  # step 8 is the third of epoch 1's five batches
    cli_main(run_args(tmp_path / "resumed", 12, "32") + every_4 + ["--ckpt_path", "last"])
    straight = torch.load(next((tmp_path / "straight").rglob("last.ckpt")), weights_only=True)
    resumed = torch.load(next((tmp_path / "resumed").rglob("last.ckpt")), weights_only=True)
    assert straight["global_step"] == resumed["global_step"] == 12
    for key, value in straight["state_dict"].items():
        assert torch.equal(value, resumed["state_dict"][key]), key


def test_missing_checkpoint_is_one_line_error(tmp_path, capsys, run_args):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(run_args(tmp_path, 5, "null") + ["--ckpt_path", str(tmp_path / "nope.ckpt")])
    assert exit_info.value.code == 2
    assert "nope.ckpt: file not found" in capsys.readouterr().err
