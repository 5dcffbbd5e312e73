"""Legal but odd settings train with one warning (a learning rate that makes the loss rise, an image too small
for SSIM); settings that would divide by zero are refused in one line."""

import pytest


def test_a_loss_that_rises_and_stays_up_warns_about_the_learning_rate(tmp_path, run_cli, kit):
    with pytest.warns(UserWarning, match=r"the loss rose from .* the learning rate \(1e\+06\) is probably too high") as caught:
        outcome = run_cli(kit.tiny(tmp_path, "--model.init_args.optimizer.init_args.lr", "1e6", "--trainer.max_steps", "12"))
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert len([w for w in caught if "the loss rose from" in str(w.message)]) == 1


def test_a_learning_rate_that_suits_the_task_does_not_warn(tmp_path, run_cli, kit, recwarn):
    outcome = run_cli(kit.tiny(tmp_path, "--model.init_args.optimizer.init_args.lr", "1e-2", "--trainer.max_steps", "12"))
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert not [w for w in recwarn if "the loss rose from" in str(w.message)]


def test_an_image_too_small_for_ssim_trains_and_says_so(tmp_path, run_cli, kit):
    with pytest.warns(UserWarning, match="full/ssim: SSIM needs at least 6×6 pixels and this grid is 2×2"):
        outcome = run_cli(kit.tiny(tmp_path, "--data.init_args.resolution", "2", "--trainer.max_steps", "2"))
    assert outcome.code == 0, outcome.stderr[-2000:]
    [summary] = [line for line in outcome.stdout.splitlines() if line.startswith("summary:")]
    assert "full/psnr" in summary and "ssim" not in summary


@pytest.mark.parametrize("callback", ["inr.callbacks.ImageLogger", "inr.callbacks.MeasurementLogger"])
def test_a_logger_callback_every_zero_epochs_is_refused(tmp_path, run_cli, kit, callback):
    extra = [f"--trainer.callbacks+={callback}", "--trainer.callbacks.init_args.every_n_epochs", "0"]
    outcome = run_cli(kit.tiny(tmp_path, *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert f"{callback.rsplit('.', 1)[1]}.every_n_epochs must be ≥ 1, got 0" in outcome.errors[0]
    assert kit.files_under(tmp_path) == []
