"""Trainer settings Lightning accepts but that would end in a traceback are refused in one line before a run
directory is made: a precision that casts the weights off float32, validation or accumulation every 0, a seed
numpy cannot take."""

import pytest


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--trainer.precision", "64-true"], "trainer.precision 64-true: the tasks compute in float32"),
        (["--trainer.precision", "bf16-true"], "trainer.precision bf16-true: the tasks compute in float32"),
        (["--trainer.check_val_every_n_epoch", "0"], "trainer.check_val_every_n_epoch must be ≥ 1"),
        (["--trainer.accumulate_grad_batches", "0"], "trainer.accumulate_grad_batches must be ≥ 1, got 0"),
        (["--seed_everything", "-1"], "seed_everything must be between 0 and 4294967295"),
    ],
)
def test_settings_that_break_the_task_are_refused(tmp_path, run_cli, kit, extra, expected):
    outcome = run_cli(kit.tiny(tmp_path, *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert "Traceback" not in outcome.stderr
    assert kit.files_under(tmp_path) == []


def test_mixed_precision_still_trains(tmp_path, run_cli, kit):
    outcome = run_cli(kit.tiny(tmp_path, "--trainer.precision", "bf16-mixed", "--trainer.max_steps", "2"))
    assert outcome.code == 0, outcome.stderr[-2000:]
