"""Meta-learning through the command line (``train.py --config meta_*.yaml``): the outer loop's held-out scores in
TensorBoard and the closing summary, a checkpoint that records its architecture and inner loop, a resume from
it, its use as ``--model.init_args.init_from`` of an ordinary config, and two gloo processes on the CPU that share
the signals of each step and end where one process ends."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.run.cli import build_cli, cli_main, resolve_config_names
from inr.tasks.init_from import INIT_KEY

ROOT = Path(__file__).resolve().parents[2]
# 8 training and 4 test signals at 16², 4 steps an epoch, a 16-wide network on 16 features, logged every 2 steps
SIGNALS = ("--data.init_args.train_signals", 8, "--data.init_args.test_signals", 4, "--data.init_args.steps_per_epoch", 4)
LOG_EVERY_2 = ("--trainer.log_every_n_steps", 2)


@pytest.fixture(scope="session")
def meta_args(tiny_flags):
    """``meta_args(save_dir, *extra, config="meta_natural.yaml")``: a tiny meta-learning run logged under ``save_dir``."""

    def args(save_dir: Path, *extra: str, config: str = "meta_natural.yaml") -> list[str]:
        return [*tiny_flags(config, 16, *SIGNALS, *LOG_EVERY_2, width=16, features=16, bar=False, save_dir=save_dir), *extra]

    return args


def scalars(run: Path) -> dict[str, list[tuple[int, float]]]:
    (events,) = run.glob("events.out.tfevents.*")
    acc = EventAccumulator(str(events))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.mark.parametrize(
    "config, kind, task, channels, mode",
    [
        ("meta_natural.yaml", "natural", "ImageFitting", 3, None),
        ("meta_text.yaml", "text", "ImageFitting", 3, None),
        ("meta_ct.yaml", "ct", "InverseFitting", 1, None),
        ("meta_shape.yaml", "shape", "VolumeFitting", 1, "occupancy"),
    ],
)
def test_every_meta_config_builds_its_class_and_task(tmp_path, config, kind, task, channels, mode):
    cli = build_cli(resolve_config_names(["--config", config, "--trainer.logger.init_args.save_dir", str(tmp_path)]))
    model, data = cli.model, cli.datamodule
    assert type(model).__name__ == "MetaLearning" and model.task_cls.__name__ == task and model.mode == mode
    assert data.kind == kind and model.out_channels == channels  # linked from the data's signals
    assert data.test_count == 8 and data.signals_per_step == 4 and model.algorithm == "reptile"


@pytest.mark.slow
def test_a_meta_run_logs_its_outer_loop_resumes_and_starts_an_ordinary_fit(tmp_path, capsys, meta_args, tiny_flags):
    cli_main(meta_args(tmp_path, "--trainer.max_steps", "8"))
    out = capsys.readouterr().out
    run = tmp_path / "meta_natural" / "version_0"
    summary = next(line for line in out.splitlines() if line.startswith("summary:"))
    assert all(f"test/psnr@{n} " in summary for n in (0, 1, 2, 5, 10))
    logged = scalars(run)
    assert [step for step, _ in logged["val/psnr@2"]] == [3, 7]  # after each 4-step epoch
    assert {"train/loss", "train/loss@0", "val/psnr@0/std", "val/psnr@10"} <= set(logged)
    checkpoint = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)
    assert checkpoint[INIT_KEY]["encoder"] == "GaussianEncoding(2 -> 32)"
    settings = checkpoint["hyper_parameters"]
    assert (settings["algorithm"], settings["inner_loop_steps"], settings["inner_loop_optimizer"]) == ("reptile", 2, "sgd")

    cli_main(meta_args(tmp_path, "--trainer.max_steps", "12", "--ckpt_path", "last"))  # four more outer steps
    assert torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["global_step"] == 12
    assert [p.name for p in (tmp_path / "meta_natural").iterdir()] == ["version_0"]  # continued in place

    init = ("--model.init_args.encoder.init_args.sigma", "2.6666666666666665", "--model.init_args.inner_steps", 1)
    image = tiny_flags("image.yaml", 16, *init, width=16, features=16, steps=1, callbacks="null", bar=False, save_dir=tmp_path)
    image += ["--model.init_args.init_from", str(run / "checkpoints" / "last.ckpt")]
    cli_main(image)
    assert "summary:" in capsys.readouterr().out  # an ordinary fit from the learned init
    # and from its inner loop first (its 2 SGD steps at 10, as the checkpoint records them), then the config's Adam
    cli_main([*image, "--model.init_args.init_inner_loop", "true", "--trainer.max_steps", "3"])
    assert "summary:" in capsys.readouterr().out


def launch(tmp_path: Path, args: list[str], name: str) -> subprocess.Popen:
    out, err = open(tmp_path / f"{name}.out", "w"), open(tmp_path / f"{name}.err", "w")
    two = ["--trainer.accelerator", "cpu", "--trainer.devices", "2", "--trainer.strategy", "ddp"]
    return subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), *args, *two], cwd=tmp_path, stdout=out, stderr=err, start_new_session=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["reptile", "maml"])
def test_two_processes_share_each_steps_signals_and_end_as_one_process(tmp_path, algorithm, meta_args):
    """Four signals per step: each of two gloo ranks adapts two, and DDP averages their outer gradients, which is
    the mean over the four; after six outer Adam steps θ is the single process's within float32 rounding."""
    extra = ["--trainer.max_steps", "6", "--data.init_args.signals_per_step", "4", "--model.init_args.algorithm", algorithm]
    extra += ["--model.init_args.inner_loop_lr", "1.0", "--model.init_args.optimizer.init_args.lr", "0.001"]
    proc = launch(tmp_path, meta_args(tmp_path / "two", *extra), "two")
    cli_main(meta_args(tmp_path / "one", *extra, "--trainer.accelerator", "cpu", "--trainer.devices", "1"))
    try:
        code = proc.wait(300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        code = None
    assert code == 0, (tmp_path / "two.err").read_text()[-3000:]
    state = lambda d: torch.load(d / "meta_natural" / "version_0" / "checkpoints" / "last.ckpt", weights_only=True)
    one, two = state(tmp_path / "one"), state(tmp_path / "two")
    assert one["global_step"] == two["global_step"] == 6
    difference = max(float((one["state_dict"][k] - two["state_dict"][k]).abs().max()) for k in one["state_dict"])
    assert difference <= 1e-5
    logged_one = scalars(tmp_path / "one" / "meta_natural" / "version_0")
    logged_two = scalars(tmp_path / "two" / "meta_natural" / "version_0")
    for (_, a), (_, b) in zip(logged_one["val/psnr@2"], logged_two["val/psnr@2"], strict=True):
        assert abs(a - b) <= 1e-3  # the test signals scored in shares, gathered: the same mean
