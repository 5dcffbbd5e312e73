"""Every accepted setting takes effect or is refused in one line: Lightning's own checkpoint time interval saves
on its cadence; a deepinv physics with a negative noise level or no angles, and a command-line override that
cannot reach one setting of a physics, are refused with one line saying what to give instead."""

import itertools
import time

import pytest

# ct_deepinv.yaml at 16², an 8-wide network on 8 features, 2 steps, no progress bar or callbacks (tests/conftest.py)
DEEPINV = ("ct_deepinv.yaml", 16)
SMALL = dict(width=8, features=8, steps=2, bar=False, callbacks="null")


def physics(init_args: str) -> list[str]:
    return ["--data.init_args.operator.init_args.physics", f"{{class_path: deepinv.physics.Tomography, init_args: {init_args}}}"]


class SecondsPerCall:
    """The monotonic clock, moved one more second on each time it is read."""

    def __init__(self) -> None:
        self.calls = itertools.count(1)

    def monotonic(self) -> float:
        return time.monotonic() + next(self.calls)


def saved_steps(run_dir) -> list[int]:
    return sorted(int(p.stem.split("step=")[1]) for p in (run_dir / "checkpoints").glob("epoch=*-step=*.ckpt"))


def test_lightnings_train_time_interval_sets_the_checkpoint_cadence(tmp_path, run_cli, kit, monkeypatch):
    """Each step reads the checkpoint clock once, and each read moves it one second on: with the command's own
    cadence (5 minutes) only the end of training saves; with ``train_time_interval 0:00:00.1`` every step does."""
    import inr.run.saving

    keep_all = ["--checkpoint.save_top_k", "-1", "--trainer.max_steps", "4"]
    monkeypatch.setattr(inr.run.saving, "time", SecondsPerCall())
    outcome = run_cli(kit.tiny(tmp_path / "default", *keep_all))
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert saved_steps(tmp_path / "default" / "image" / "version_0") == [4]
    monkeypatch.setattr(inr.run.saving, "time", SecondsPerCall())
    outcome = run_cli(kit.tiny(tmp_path / "interval", *keep_all, "--checkpoint.train_time_interval", "0:00:00.1"))
    assert outcome.code == 0, outcome.stderr[-2000:]
    assert saved_steps(tmp_path / "interval" / "image" / "version_0") == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "interval, expected",
    [
        ("0:00:00", "checkpoint.train_time_interval must be a positive time (e.g. 0:10:00), got 0:00:00"),
        ("-0:00:01", "checkpoint.train_time_interval: Not of type timedelta"),
    ],
)
def test_a_train_time_interval_of_no_time_is_refused(tmp_path, run_cli, kit, interval, expected):
    outcome = run_cli(kit.tiny(tmp_path, f"--checkpoint.train_time_interval={interval}"))
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert kit.files_under(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra, expected",
    [
        (
            physics(
                "{angles: 8, img_width: 16, noise_model: {class_path: deepinv.physics.GaussianNoise, init_args: {sigma: -1}}}"
            ),
            "deepinv.physics.GaussianNoise: sigma must be ≥ 0, got -1",
        ),
        (physics("{angles: 0, img_width: 16}"), "deepinv.physics.Tomography: angles must be a count ≥ 1"),
        (physics("{angles: [], img_width: 16}"), "deepinv.physics.Tomography: angles must be a count ≥ 1"),
        (
            ["--data.init_args.operator.init_args.physics.init_args.angles", "8"],
            "physics.init_args.angles 8 does not reach the physics (a command-line override lands beside its class_path); "
            "give the whole physics: --data.init_args.operator.init_args.physics "
            "'{class_path: deepinv.physics.Tomography, init_args: {angles: 8, img_width: 128, normalize: false, noise_model: ",
        ),
    ],
)
def test_a_deepinv_physics_setting_that_would_not_take_effect_is_one_line(tmp_path, run_cli, kit, extra, expected):
    outcome = run_cli([*kit.flags(*DEEPINV, **SMALL, save_dir=tmp_path / "runs"), *extra])
    assert outcome.code == 2 and len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.stderr[-2000:]
    assert "Traceback" not in outcome.stderr and kit.files_under(tmp_path / "runs") == []
