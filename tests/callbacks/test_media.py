"""Images and figures reach any logger: PNG files in the run directory whatever the logger (CSVLogger here),
and the loggers that show images (a W&B-style ``log_image`` logger, an MLflow-style client) get them too."""

from functools import partial
from types import SimpleNamespace

import imageio.v3 as iio
import lightning as L
import numpy as np
import torch
from lightning.pytorch.loggers import CSVLogger, Logger

from inr.callbacks import ImageLogger, SpectralBiasCallback
from inr.callbacks.media import image_file, log_figure, log_image
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.tasks import ImageFitting


class ImageCapableLogger(Logger):
    """A logger with WandbLogger's ``log_image(key, images, step)`` and nothing else."""

    def __init__(self, root):
        super().__init__()
        self.root, self.images = str(root), []

    name = property(lambda self: "capable")
    version = property(lambda self: 0)
    log_dir = property(lambda self: self.root)

    def log_metrics(self, metrics, step=None):
        pass

    def log_hyperparams(self, params, *args, **kwargs):
        pass

    def log_image(self, key, images, step=None):
        self.images.append((key, images, step))


def _fit(quiet_trainer, logger, tmp_path, steps=10):
    L.seed_everything(0, verbose=False)
    dm = ImageDataModule(resolution=16, split="every_other")
    model = ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=4.0, seed=0),
        network=partial(MLP, width=16, depth=2, output_activation="sigmoid"),
        optimizer=partial(torch.optim.Adam, lr=1e-2),
    )
    callbacks = [ImageLogger(every_n_epochs=1), SpectralBiasCallback(figure_every_n_epochs=0)]
    trainer = quiet_trainer(steps, logger=logger, callbacks=callbacks, default_root_dir=str(tmp_path))
    trainer.fit(model, datamodule=dm)
    return model, dm


def test_csv_logger_runs_keep_their_images_and_figures_as_png_files(tmp_path, quiet_trainer):
    logger = CSVLogger(str(tmp_path), name="csv")
    model, dm = _fit(quiet_trainer, logger, tmp_path)
    media = tmp_path / "csv/version_0/media"
    pngs = sorted(p.relative_to(media).as_posix() for p in media.rglob("*.png"))
    # ImageLogger every epoch (10 steps) and at the end; the spectral figures when training ends
    assert pngs == [
        "images/abs_error/step_000010.png",
        "images/reconstruction/step_000010.png",
        "images/target/step_000010.png",
        "spectral/heatmap/step_000010.png",
        "spectral/spectra/step_000010.png",
    ]
    model.eval()
    expected = np.round(model.render().clamp(0, 1).permute(1, 2, 0).numpy() * 255).astype(np.uint8)  # (C, H, W) -> (H, W, C)
    assert np.array_equal(iio.imread(media / "images/reconstruction/step_000010.png"), expected)
    target = np.round(dm.values_grid().permute(1, 2, 0).numpy() * 255).astype(np.uint8)
    assert np.array_equal(iio.imread(media / "images/target/step_000010.png"), target)
    heatmap = iio.imread(media / "spectral/heatmap/step_000010.png")
    assert heatmap.ndim == 3 and heatmap.shape[2] == 3 and heatmap.std() > 0  # a drawn figure, not a blank


def test_a_logger_with_log_image_gets_the_images_and_the_files_are_written_too(tmp_path, quiet_trainer):
    logger = ImageCapableLogger(tmp_path / "run")
    _fit(quiet_trainer, logger, tmp_path)
    keys = {key for key, _, _ in logger.images}
    assert {"images/reconstruction", "images/abs_error", "images/target", "spectral/heatmap", "spectral/spectra"} <= keys
    key, images, step = next(item for item in logger.images if item[0] == "images/reconstruction")
    assert step == 10 and images[0].dtype == np.uint8 and images[0].shape == (16, 16, 3)
    assert np.array_equal(images[0], iio.imread(image_file(tmp_path / "run", key, step)))


def test_an_mlflow_style_client_gets_artifact_paths_and_tensorboard_style_writers_get_hwc(tmp_path):
    calls = []
    client = SimpleNamespace(
        log_image=lambda run_id, image, artifact_file: calls.append(("mlflow", run_id, image.shape, artifact_file))
    )
    writer = SimpleNamespace(add_image=lambda tag, image, step, dataformats: calls.append(("tb", tag, image.shape, dataformats)))
    mlflow = SimpleNamespace(experiment=client, run_id="abc")
    tensorboard = SimpleNamespace(experiment=writer)
    trainer = SimpleNamespace(loggers=[mlflow, tensorboard], logger=None, default_root_dir=str(tmp_path))
    path = log_image(trainer, "images/x", torch.full((1, 4, 5), 0.5), step=7)
    assert calls == [("mlflow", "abc", (4, 5, 1), "media/images/x/step_000007.png"), ("tb", "images/x", (4, 5, 1), "HWC")]
    assert path == tmp_path / "media/images/x/step_000007.png" and np.all(iio.imread(path) == 128)

    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 1), dpi=50)
    figure.add_subplot().plot([0, 1], [1, 0])
    path = log_figure(trainer, "spectral/heatmap", figure, step=3)
    assert iio.imread(path).shape == (50, 100, 3) and calls[-1] == ("tb", "spectral/heatmap", (50, 100, 3), "HWC")
