"""The run's budgets on bad values, through the command: the monitoring budget's share of wall time
(``MonitoringBudget.max_share``), given once, and the spectral measurement's memory budget (``max_memory_mb``)
— one line, exit 2, nothing written."""

import pytest

BUDGET = "--trainer.callbacks+=inr.callbacks.MonitoringBudget"
SPECTRAL = "--trainer.callbacks+=inr.callbacks.SpectralBiasCallback"


@pytest.mark.parametrize(
    "extra, expected",
    [
        ([BUDGET, "--trainer.callbacks.init_args.max_share", "0"], "MonitoringBudget.max_share must be in (0, 1], got 0.0"),
        ([BUDGET, "--trainer.callbacks.init_args.max_share", "1.5"], "MonitoringBudget.max_share must be in (0, 1], got 1.5"),
        ([BUDGET, "--trainer.callbacks.init_args.max_share=-0.1"], "MonitoringBudget.max_share must be in (0, 1], got -0.1"),
        (
            [BUDGET, "--trainer.callbacks.init_args.max_share", "0.05", BUDGET, "--trainer.callbacks.init_args.max_share", "0.5"],
            "trainer.callbacks: MonitoringBudget is given 2 times; a run has one monitoring budget (only the first would count)",
        ),
        (
            [SPECTRAL, "--trainer.callbacks.init_args.max_memory_mb", "0"],
            "SpectralBiasCallback.max_memory_mb must be > 0 MiB, got 0",
        ),
        (
            [SPECTRAL, "--trainer.callbacks.init_args.max_memory_mb=-8"],
            "SpectralBiasCallback.max_memory_mb must be > 0 MiB, got -8",
        ),
    ],
)
def test_a_budget_that_would_be_ignored_or_meaningless_is_refused(tmp_path, run_cli, kit, extra, expected):
    outcome = run_cli(kit.tiny(tmp_path, *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert kit.files_under(tmp_path) == []


def test_a_memory_budget_below_the_grid_skips_the_measurement_with_one_warning(tmp_path, run_cli, kit):
    """A positive budget the 16² grid exceeds (its measurement needs about 27 KiB): skipped, said, and trained."""
    extra = [SPECTRAL, "--trainer.callbacks.init_args.max_memory_mb", "0.001", "--trainer.max_steps", "2"]
    with pytest.warns(UserWarning, match="over max_memory_mb=0.001; spectral logging is skipped") as warned:
        outcome = run_cli(kit.tiny(tmp_path, *extra))
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert sum("spectral logging is skipped" in str(w.message) for w in warned) == 1
    assert not (tmp_path / "image" / "version_0" / "spectral_history.npz").exists()
