"""InverseFitting through the CLI and in a Trainer: CT and MRI train, log, and refuse bad measurement files."""

import re
from functools import partial

import numpy as np
import pytest
import torch

from inr.data import CTDataModule, InpaintingDataModule, MRIDataModule, SimulatedMeasurementDataModule, SuperResolutionDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.operators import Downsample
from inr.run.cli import cli_main
from inr.tasks import InverseFitting

SMALL_NET = ["--model.init_args.network.init_args.width", "32", "--model.init_args.encoder.init_args.num_features", "32"]


def _summary_line(capsys) -> str:
    return [l for l in capsys.readouterr().out.splitlines() if l.startswith("summary:")][-1]


def _summary(capsys) -> dict[str, float]:
    return {k: float(v) for k, v in re.findall(r"(\w+/\w+) ([-\d.einf]+)", _summary_line(capsys))}


def _cli(config, tmp_path, steps, *extra):
    return cli_main(
        [
            "--config",
            config,
            "--trainer.max_steps",
            str(steps),
            "--trainer.logger.init_args.save_dir",
            str(tmp_path),
            "--trainer.enable_progress_bar",
            "false",
            *SMALL_NET,
            *extra,
        ]
    )


def _tags(run_dir) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return set(acc.Tags()["scalars"]) | set(acc.Tags()["images"])


@pytest.mark.slow
def test_ct_config_trains_through_the_cli_and_improves(tmp_path, capsys):
    args = ["--data.init_args.resolution", "16", "--data.init_args.angles", "8"]
    _cli("ct.yaml", tmp_path, 1, *args)
    start = _summary(capsys)
    _cli("ct.yaml", tmp_path, 40, *args, "--trainer.check_val_every_n_epoch", "2")
    line = _summary_line(capsys)
    end = {k: float(v) for k, v in re.findall(r"(\w+/\w+) ([-\d.einf]+)", line)}
    picture = tmp_path / "ct" / "version_1" / "media" / "images" / "reconstruction" / "step_000040.png"
    assert line.endswith(f" | reconstruction {picture}") and picture.is_file()  # the summary names the final picture
    assert end["train/residual"] < 0.5 * start["train/residual"]
    assert end["full/psnr"] > start["full/psnr"] + 3.0
    tags = _tags(tmp_path / "ct" / "version_1")
    assert {
        "measurements/residual",
        "measurements/predicted",
        "measurements/observed",
        "images/reconstruction",
        "val/psnr",
        "train/residual_step",
        "spectral/rel_err/low",
        "spectral/rel_err/high",
        "spectral/rel_err/dc",
    } <= tags


@pytest.mark.slow
def test_mri_config_trains_through_the_cli_and_improves(tmp_path, capsys):
    args = ["--data.init_args.resolution", "12"]
    _cli("mri.yaml", tmp_path, 1, *args)
    start = _summary(capsys)
    _cli("mri.yaml", tmp_path, 30, *args, "--trainer.check_val_every_n_epoch", "1")
    line = _summary_line(capsys)
    end = {k: float(v) for k, v in re.findall(r"(\w+/\w+) ([-\d.einf]+)", line)}
    picture = tmp_path / "mri" / "version_1" / "media" / "images" / "reconstruction" / "slice_0" / "step_000030.png"
    assert line.endswith(f" | reconstruction {picture}") and picture.is_file()
    assert end["train/residual"] < 0.5 * start["train/residual"]
    assert end["full/psnr"] > start["full/psnr"] + 3.0
    assert {
        "measurements/residual",
        "images/reconstruction/slice_0",
        "val/psnr",
        "spectral/rel_err/low",
        "spectral/rel_err/dc",
    } <= _tags(tmp_path / "mri" / "version_1")


@pytest.mark.slow
@pytest.mark.parametrize("config", ["inpaint.yaml", "superres.yaml"])
def test_image_degradation_configs_log_reconstruction_measurements_and_bands(tmp_path, config):
    """The TensorBoard event file of a short run holds the reconstruction, its error against the ground truth,
    the measurements with their residual and the spectral bands with the DC term apart."""
    _cli(
        config,
        tmp_path,
        40,
        "--data.init_args.resolution",
        "16",
        "--data.init_args.path",
        "null",
        "--trainer.check_val_every_n_epoch",
        "2",
    )
    tags = _tags(tmp_path / config.removesuffix(".yaml") / "version_0")
    assert {
        "images/reconstruction",
        "images/target",
        "images/abs_error",
        "measurements/observed",
        "measurements/predicted",
        "measurements/residual",
        "val/psnr",
        "val/ssim",
        "train/residual_step",
        "spectral/rel_err/low",
        "spectral/rel_err/high",
        "spectral/rel_err/dc",
        "spectral/rel_err/band_15",
    } <= tags


def _bad(tmp_path, capsys, config, *args):
    with pytest.raises(SystemExit) as exc:
        _cli(config, tmp_path / "runs", 2, *args)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and err[0].startswith("error: ")
    assert not list((tmp_path / "runs").glob("*/version_*"))  # nothing half-written
    return err[0]


@pytest.mark.slow
def test_bad_measurement_files_exit_2_with_one_line_and_leave_nothing(tmp_path, capsys):
    def ct(*files):  # the CT config at 16² on the sinogram (and angles) given
        return _bad(tmp_path, capsys, "ct.yaml", "--data.init_args.resolution", "16", *files)

    def mri(kspace, mask):  # the MRI config at 12² on the k-space and mask given
        files = ("--data.init_args.kspace", str(kspace), "--data.init_args.mask", str(mask))
        return _bad(tmp_path, capsys, "mri.yaml", "--data.init_args.resolution", "12", *files)

    sino = tmp_path / "sino.npy"
    np.save(sino, np.zeros((3, 8, 23)))
    assert "must be 2D" in ct("--data.init_args.sinogram", str(sino))
    bad = np.ones((8, 23))
    bad[2, 3] = np.nan
    np.save(sino, bad)
    assert "NaN" in ct("--data.init_args.sinogram", str(sino))
    np.save(sino, np.ones((8, 23)))
    angles = tmp_path / "angles.npy"
    np.save(angles, np.linspace(0, np.pi, 7, endpoint=False))
    assert "8 projections but 7 angles" in ct("--data.init_args.sinogram", str(sino), "--data.init_args.angles_path", str(angles))
    kspace, mask = tmp_path / "k.npy", tmp_path / "m.npy"
    np.save(kspace, np.ones((12, 12, 12), dtype=np.complex64))
    np.save(mask, np.ones((12, 12, 10), dtype=bool))
    assert "does not match the k-space" in mri(kspace, mask)
    assert "file not found" in mri(tmp_path / "missing.npy", mask)


def _model(in_dim=2, channels=1, lr=3e-3):
    torch.manual_seed(0)
    return InverseFitting(
        encoder=GaussianEncoding(in_dim=in_dim, num_features=32, sigma=3.0),
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        out_channels=channels,
        optimizer=partial(torch.optim.Adam, lr=lr),
    )


def test_step_keeps_the_field_for_callbacks_and_holds_out_measurements(fit_steps):
    """The grid prediction the spectral callback reuses is the reconstruction (C, *shape), never the sinogram;
    held-out angles stay out of the loss and are scored as val/residual."""
    dm = CTDataModule(resolution=16, angles=8, heldout_every=4)
    model = _model()
    fit_steps(model, dm, steps=3)
    assert model.last_train_grid_prediction.shape == (1, 16, 16)
    train, held = dm.measurement_split()
    assert held.tolist() == [3, 7] and train.tolist() == [0, 1, 2, 4, 5, 6]
    batch = dm.gather(None, model.device)
    assert batch["values"].shape == (1, 6, dm.operator.detectors)
    metrics = model.evaluate()
    assert {"train/residual", "test/residual", "full/psnr", "full/ssim"} <= set(metrics)


def test_image_degradations_train_and_a_config_operator_is_accepted(fit_steps):
    for dm in (
        InpaintingDataModule(resolution=16, keep=0.3),
        SuperResolutionDataModule(resolution=16, factor=2),
        SimulatedMeasurementDataModule(operator=Downsample((16, 16), factor=4), resolution=16),
    ):
        model = _model(channels=3, lr=1e-2)
        dm.setup("fit")
        fit_steps(model, dm, steps=1)
        start = model.evaluate()["train/residual"]
        fit_steps(model, dm, steps=25)
        assert model.evaluate()["train/residual"] < 0.7 * start, type(dm).__name__


def test_mri_from_files_matches_the_simulated_problem(tmp_path):
    """k-space and mask written to .npy and read back give the same measurements as the simulation."""
    sim = MRIDataModule(resolution=8, ndim=2, samples=30)
    sim.setup("fit")
    full = np.zeros((8, 8), dtype=np.complex64)
    full[sim.operator.mask.numpy()] = sim.measurements[0].numpy()
    np.save(tmp_path / "k.npy", full)
    np.save(tmp_path / "m.npy", sim.operator.mask.numpy())
    np.save(tmp_path / "t.npy", sim.values_grid()[0].numpy())
    read = MRIDataModule(
        resolution=8, ndim=2, kspace=str(tmp_path / "k.npy"), mask=str(tmp_path / "m.npy"), truth=str(tmp_path / "t.npy")
    )
    read.setup("fit")
    torch.testing.assert_close(read.measurements, sim.measurements)
    torch.testing.assert_close(read.values_grid(), sim.values_grid())
    assert read.has_ground_truth and not MRIDataModule(resolution=8, ndim=2, kspace="k.npy", mask="m.npy").has_ground_truth


def _lowres_png(tmp_path, side=8):
    """A smooth side×side RGB image (one cycle across, a different phase per channel), as 8-bit PNG."""
    import imageio.v3 as iio

    u = np.arange(side) / side
    phases = np.array([0.0, 1.0, 2.0])
    image = 0.5 + 0.3 * np.sin(2 * np.pi * u[:, None, None] + phases) * np.cos(2 * np.pi * u[None, :, None])  # (h, w, 3)
    path = tmp_path / "small.png"
    iio.imwrite(path, (image * 255).round().astype(np.uint8))
    return path


@pytest.mark.slow
def test_superres_from_own_lowres_image_is_scored_on_held_out_rows(tmp_path, capsys):
    """A measured low-resolution image, no ground truth: the fit is scored on the low-res rows it never saw."""
    path = _lowres_png(tmp_path, side=16)
    args = [
        "--data.init_args.lowres",
        str(path),
        "--data.init_args.path",
        "null",
        "--data.init_args.resolution",
        "null",
        "--data.init_args.factor",
        "2",
        "--data.init_args.heldout_every",
        "4",
        "--trainer.check_val_every_n_epoch",
        "1",
    ]
    _cli("superres.yaml", tmp_path, 1, *args)
    start = _summary(capsys)
    _cli(
        "superres.yaml",
        tmp_path,
        30,
        *args,
        "--model.init_args.optimizer.init_args.lr",
        "0.01",
        "--model.init_args.encoder.init_args.sigma",
        "1",
    )
    end = _summary(capsys)
    assert "full/psnr" not in end and "full/ssim" not in end  # nothing to compare with
    assert end["test/residual"] < 0.3 * start["test/residual"]  # held-out rows, never in the loss
    assert end["train/residual"] < 0.5 * start["train/residual"]
    tags = _tags(tmp_path / "superres" / "version_1")
    assert {"val/residual", "images/reconstruction", "measurements/observed", "measurements/residual"} <= tags
    assert not {"images/target", "images/abs_error", "val/psnr"} & tags


def test_lowres_file_gives_the_simulated_measurements(tmp_path):
    """The block means of an image, saved as .npy and read back as a measured low-res image: same y, same A."""
    sim = SuperResolutionDataModule(resolution=16, factor=4)
    sim.setup("fit")
    np.save(tmp_path / "y.npy", sim.measurements.permute(1, 2, 0).numpy())  # (C, h, w) -> (h, w, C)
    read = SuperResolutionDataModule(lowres=str(tmp_path / "y.npy"), resolution=None, factor=4, heldout_every=2)
    read.setup("fit")
    torch.testing.assert_close(read.measurements, sim.measurements)
    assert read.shape == (16, 16) and read.out_channels == 3 and not read.has_ground_truth
    train, held = read.measurement_split()
    assert held.tolist() == [1, 3] and train.tolist() == [0, 2]  # every 2nd of the 4 low-res rows


@pytest.mark.slow
def test_bad_lowres_images_exit_2_with_one_line_and_leave_nothing(tmp_path, capsys):
    args = ["--data.init_args.path", "null", "--data.init_args.factor", "2"]
    flat = tmp_path / "flat.npy"
    np.save(flat, np.full((8, 8), 0.5))
    assert "constant" in _bad(
        tmp_path, capsys, "superres.yaml", *args, "--data.init_args.resolution", "null", "--data.init_args.lowres", str(flat)
    )
    nan = tmp_path / "nan.npy"
    bad = np.random.default_rng(0).random((8, 8))
    bad[1, 1] = np.nan
    np.save(nan, bad)
    assert "NaN" in _bad(
        tmp_path, capsys, "superres.yaml", *args, "--data.init_args.resolution", "null", "--data.init_args.lowres", str(nan)
    )
    loud = tmp_path / "loud.npy"
    np.save(loud, np.nan_to_num(bad) * 3)  # finite, out of [0, 1]
    assert "[0, 1]" in _bad(
        tmp_path, capsys, "superres.yaml", *args, "--data.init_args.resolution", "null", "--data.init_args.lowres", str(loud)
    )
    png = _lowres_png(tmp_path)
    message = _bad(tmp_path, capsys, "superres.yaml", *args, "--data.init_args.lowres", str(png))  # superres.yaml: resolution 128
    assert "8×8 image × factor 2 is 16×16, but data.resolution asks for 128×128" in message
    message = _bad(tmp_path, capsys, "superres.yaml", "--data.init_args.lowres", str(png), "--data.init_args.resolution", "null")
    assert "exclude each other" in message  # superres.yaml names a full-resolution path too
