"""benchmarks/common.py: the hand-written reference step trains exactly as the framework does on a full batch,
the step clock drains a device where it says, its examples hold, and the interleaved probe joins a real
``train.py`` run from the command line and reports both step times."""

from __future__ import annotations

import doctest
import importlib
import json
import sys
from pathlib import Path

import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def tiny(tiny_flags):
    """A 16² image, a 16-wide network on 16 features: a few steps take well under a second."""
    return tiny_flags(None, 16, width=16, features=16)


@pytest.fixture
def common(monkeypatch):
    """benchmarks/common.py imported as the scripts import it (``common``, benchmarks/ on ``sys.path``: the
    interleaved probe's class path names it so), dropped from ``sys.modules`` afterwards."""
    monkeypatch.setattr(sys, "path", [str(BENCHMARKS), *sys.path])
    had = "common" in sys.modules
    yield importlib.import_module("common")
    if not had:
        sys.modules.pop("common", None)


def test_examples_in_common_hold(common):
    result = doctest.testmod(common)
    assert result.attempted >= 4 and result.failed == 0


def test_hand_step_trains_as_the_framework_on_a_full_batch(common, tiny):
    """Both built from image.yaml (seed 0, so the same initial weights), 5 full-batch Adam steps each: the
    framework's ``Trainer.fit`` and ``HandStep``. The same loss on the same batch through the same optimizer
    gives the same weights, to float32 rounding."""
    from inr.methods.training import quiet_trainer

    model, dm, _ = common.instantiate("image.yaml", tiny)
    hand_model, hand_dm, _ = common.instantiate("image.yaml", tiny)
    assert dm.batch_size is None  # the full batch this test is about
    initial = [p.detach().clone() for p in model.network.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(initial, hand_model.network.parameters()))
    quiet_trainer(5).fit(model, datamodule=dm)
    hand = common.HandStep(hand_model, hand_dm)
    assert hand.fixed is not None  # encoded once, as the framework caches it
    for _ in range(5):
        hand.step()
    assert all(not torch.equal(a, b) for a, b in zip(initial, model.network.parameters()))  # both trained
    for after, hand_after in zip(model.network.parameters(), hand_model.network.parameters()):
        torch.testing.assert_close(hand_after, after, rtol=1e-5, atol=1e-6)


def test_hand_step_encoding_every_step_is_the_same_loss(common, tiny):
    model, dm, _ = common.instantiate("image.yaml", tiny)
    cached, every = common.HandStep(model, dm), common.HandStep(model, dm, encode_every_step=True)
    assert every.fixed is None
    torch.testing.assert_close(every.loss(), cached.loss(), rtol=1e-6, atol=0)


def test_random_batches_are_training_points_of_the_configured_size(common):
    model, dm, _ = common.instantiate("volume.yaml", ["--data.init_args.resolution", "16", "--data.init_args.batch_size", "64"])
    hand = common.HandStep(model, dm)
    drawn = []
    hand.encoder = lambda coords: drawn.append(coords) or model.encoder(coords)  # (64, 3) coordinates of one batch
    hand.loss()
    (coords,) = drawn
    assert coords.shape == (64, 3)
    training = dm.grid.coords(dm.train_index)
    assert all(bool((training == point).all(-1).any()) for point in coords)


@pytest.mark.parametrize("per_step, drained_at", [(True, [0, 1, 2, 3, 4]), (False, [1, 4])])
def test_step_clock_drains_every_stamp_or_the_window_ends(common, per_step, drained_at):
    stamps_when_drained = []
    clock = common.StepClock(warmup=1, steps=3, per_step=per_step, sync=lambda: stamps_when_drained.append(len(clock.stamps)))
    for _ in range(clock.runs):
        clock.stamp()
    assert len(clock.stamps) == 5 and stamps_when_drained == drained_at


@pytest.mark.slow
def test_interleaved_probe_joins_a_run_from_its_command_line(common, tmp_path, tiny):
    out = tmp_path / "interleaved.json"
    option = common.interleaved_callback_argument(str(out), every=5, burst=2)
    extra = [*tiny, "--model.init_args.inner_steps", "1", "--trainer.callbacks", "null", option]
    cli = common.run_command("image.yaml", 12, extra, str(tmp_path))
    (probe,) = [cb for cb in cli.trainer.callbacks if type(cb).__name__ == "InterleavedHandLoop"]
    assert len(probe.hand_steps) == 1  # one burst, after step 10 (every 5th from the 10th on, 12 steps)
    measured = json.loads(out.read_text())
    assert measured["run_step"] > 0 and measured["hand_step"] == pytest.approx(probe.hand_steps[0])
