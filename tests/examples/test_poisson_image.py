"""Gradient supervision (examples/poisson_image.py): the image comes back from its gradient through the command
line; the full batch's encoding cache, which would cut the graph at the coordinates, is off for such a task; a
task whose target is not its field and that gives no ground truth gets one warning from the spectral callback."""

from pathlib import Path

import pytest

from inr.callbacks import SpectralBiasCallback
from inr.run.cli import cli_main

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--config",
    str(ROOT / "examples" / "poisson_image.yaml"),
    "--data.init_args.resolution",
    "32",
    "--model.init_args.network.init_args.width",
    "64",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.callbacks",
    "null",
]


def run(tmp_path, steps: int, *extra: str):
    return cli_main([*TINY, "--trainer.max_steps", str(steps), "--trainer.logger.init_args.save_dir", str(tmp_path), *extra])


@pytest.mark.slow
def test_the_image_comes_back_from_its_gradient(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    untrained = run(tmp_path / "a", 1).model.evaluate()
    trained = run(tmp_path / "b", 150).model.evaluate()
    assert trained["train/gradient_mse"] < 0.5 * untrained["train/gradient_mse"]
    assert trained["full/psnr"] > untrained["full/psnr"] + 3.0  # the field approaches the image (up to a constant)


def test_coordinates_stay_graph_leaves_on_a_full_batch(tmp_path, monkeypatch):
    """With the cache the full batch's Fourier features hold no graph back to v: ∂f/∂v cannot be taken."""
    monkeypatch.syspath_prepend(str(ROOT))
    from examples.poisson_image import GradientFitting

    fourier = [
        "--model.init_args.encoder",
        '{"class_path": "inr.encoders.GaussianEncoding", "init_args": {"in_dim": 2, "sigma": 2.0}}',
    ]
    assert GradientFitting.needs_coordinate_gradients
    assert run(tmp_path / "ok", 2, *fourier).trainer.global_step == 2
    monkeypatch.setattr(GradientFitting, "needs_coordinate_gradients", False)
    with pytest.raises(RuntimeError, match="does not require grad|not have been used in the graph"):
        run(tmp_path / "cut", 2, *fourier)


def test_a_target_that_is_not_the_field_is_not_compared_without_its_truth(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    from examples.poisson_image import GradientFitting, ImageGradient
    from inr.tasks.base import INRModule

    monkeypatch.setattr(GradientFitting, "target_grid", INRModule.target_grid)  # the data's gradient, 2 channels
    callback = SpectralBiasCallback(every_n_epochs=1)
    with pytest.warns(UserWarning, match="target is not its field"):
        import lightning as L

        model = GradientFitting(out_channels=2, encoder=None)
        L.Trainer(max_steps=10, callbacks=[callback], logger=False, enable_checkpointing=False, enable_progress_bar=False).fit(
            model, datamodule=ImageGradient(resolution=16, split="all")
        )
    assert callback.skipped and callback.history["steps"] == []
