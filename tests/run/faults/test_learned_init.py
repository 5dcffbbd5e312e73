"""Learned initialisations given bad values through the command line: every one is one ``error:`` line, exit 2,
and no file written — a missing, damaged or foreign ``init_from``, a checkpoint of another architecture, train and
test signals that overlap, inner steps, inner, log-rate or outer learning rates (Reptile's ε) that are not positive, MAML with
Adam's inner steps, an unknown ``adapt`` or Reptile adapting modulations, a meta-learning run whose data is not a
class of signals."""

import shutil

import numpy as np
import pytest
import torch
from PIL import Image


def meta(kit, *extra: str) -> list[str]:
    """meta_natural.yaml at 16², 4 training and 2 test signals, a 16-wide network on 16 features, 2 steps."""
    signals = ("--data.init_args.train_signals", 4, "--data.init_args.test_signals", 2)
    return [*kit.flags("meta_natural.yaml", 16, *signals, width=16, features=16, steps=2, bar=False), *extra]


def refused(outcome, expected: str, tmp_path, kit) -> None:
    assert outcome.code == 2, outcome.stderr[-2000:]
    assert len(outcome.errors) == 1 and expected in outcome.errors[0], outcome.errors
    assert kit.files_under(tmp_path / "runs") == []


def image_run(tmp_path, kit, *extra: str) -> list[str]:
    return kit.tiny(tmp_path / "runs", *extra)


def test_init_from_a_missing_file(tmp_path, run_cli, kit):
    outcome = run_cli(image_run(tmp_path, kit, "--model.init_args.init_from", str(tmp_path / "none.ckpt")))
    refused(outcome, f"model.init_from {tmp_path / 'none.ckpt'}: file not found", tmp_path, kit)


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"PK\x03\x04 truncated", "not a readable checkpoint"),
        (b"", "not a readable checkpoint"),
        ({"weights": [1, 2]}, "not a training checkpoint (it has no state_dict)"),
    ],
)
def test_init_from_a_damaged_or_foreign_file(tmp_path, run_cli, kit, content, expected):
    path = tmp_path / "init.ckpt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        torch.save(content, path)
    refused(run_cli(image_run(tmp_path, kit, "--model.init_args.init_from", str(path))), expected, tmp_path, kit)


def test_init_from_a_checkpoint_of_another_architecture(tmp_path, run_cli, kit, trained_run):
    checkpoint = trained_run / "checkpoints" / "last.ckpt"  # the tiny run: width 16
    outcome = run_cli(
        image_run(
            tmp_path, kit, "--model.init_args.network.init_args.width", "24", "--model.init_args.init_from", str(checkpoint)
        )
    )
    refused(outcome, "a checkpoint of another architecture (network layer 0 is Linear(32, 16, bias=True) there", tmp_path, kit)


def write_images(folder, seeds):
    folder.mkdir(parents=True)
    for seed in seeds:
        pixels = (np.random.default_rng(seed).random((20, 20, 3)) * 255).astype(np.uint8)
        Image.fromarray(pixels).save(folder / f"{seed}.png")
    return folder


def test_train_and_test_signals_that_overlap(tmp_path, run_cli, kit):
    train, test = write_images(tmp_path / "train", range(3)), write_images(tmp_path / "test", [7])
    shutil.copy(train / "2.png", test / "same.png")
    args = meta(kit, "--data.init_args.kind", "text", "--data.init_args.train", str(train), "--data.init_args.test", str(test))
    outcome = run_cli([*args, "--trainer.logger.init_args.save_dir", str(tmp_path / "runs")])
    refused(outcome, "data.test: 1 of its 2 signals are also training signals (e.g. same.png = 2.png)", tmp_path, kit)
    same = meta(kit, "--data.init_args.train", str(train), "--data.init_args.test", str(train))
    outcome = run_cli([*same, "--trainer.logger.init_args.save_dir", str(tmp_path / "runs")])
    refused(outcome, "is data.train: train and test signals must be disjoint", tmp_path, kit)


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--model.init_args.inner_loop_steps", "0"], "model.inner_loop_steps must be an int from 1"),
        (["--model.init_args.inner_loop_steps", "-3"], "model.inner_loop_steps must be an int from 1"),
        (["--model.init_args.inner_loop_lr", "0"], "model.inner_loop_lr must be a finite number > 0"),
        (["--model.init_args.inner_loop_lr=-1e-3"], "model.inner_loop_lr must be a finite number > 0"),
        (["--model.init_args.inner_log_rate_lr", "0"], "model.inner_log_rate_lr must be a finite number > 0"),
        (["--model.init_args.optimizer.init_args.lr", "0"], "the outer learning rate (Reptile's ε) must be a finite number > 0"),
        (["--model.init_args.optimizer.init_args.lr=-0.5"], "model.optimizer"),
        (
            ["--model.init_args.algorithm", "maml", "--model.init_args.inner_loop_optimizer", "adam"],
            "MAML differentiates through SGD steps",
        ),
        (["--model.init_args.eval_steps", "[-1]"], "model.eval_steps must be a list of ints"),
        (["--data.init_args.signals_per_step", "0"], "data.signals_per_step must be an int ≥ 1"),
        (["--data.init_args.train_signals", "0"], "data.train_signals must be an int from 1"),
        (["--data.init_args.test", "/nowhere/at/all"], "data.test /nowhere/at/all: not a directory"),
        (["--model.init_args.task", "inr.tasks.ShapeFitting"], "model.task inr.tasks.ShapeFitting"),
        (["--model.init_args.adapt", "shifts"], "model.adapt (inr.tasks.MetaLearning): Expected a typing.Literal"),
        (["--model.init_args.adapt", "modulations"], "model.adapt modulations: Reptile steps θ toward the adapted weights"),
    ],
)
def test_bad_meta_learning_settings(tmp_path, run_cli, kit, extra, expected):
    outcome = run_cli(meta(kit, *extra, "--trainer.logger.init_args.save_dir", str(tmp_path / "runs")))
    refused(outcome, expected, tmp_path, kit)


def test_meta_learning_needs_a_class_of_signals(tmp_path, run_cli, kit):
    args = meta(kit, "--data", "inr.data.ImageDataModule", "--data.init_args.resolution", "16")
    outcome = run_cli([*args, "--trainer.logger.init_args.save_dir", str(tmp_path / "runs")])
    assert outcome.code == 2, outcome.stderr[-2000:]
    assert kit.files_under(tmp_path / "runs") == []
