"""InverseFitting through the CLI and in a Trainer: CT and MRI train, log, and refuse bad measurement files."""
import re
from functools import partial

import lightning as L
import numpy as np
import pytest
import torch

from inr.cli import cli_main
from inr.data import CTDataModule, InpaintingDataModule, MRIDataModule, SimulatedMeasurementDataModule, SuperResolutionDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.operators import Downsample
from inr.tasks import InverseFitting

SMALL_NET = ["--model.init_args.network.init_args.width", "32", "--model.init_args.encoder.init_args.num_features", "32"]


def _summary(capsys) -> dict[str, float]:
    line = [l for l in capsys.readouterr().out.splitlines() if l.startswith("summary:")][-1]
    return {k: float(v) for k, v in re.findall(r"(\w+/\w+) ([-\d.einf]+)", line)}


def _cli(config, tmp_path, steps, *extra):
    return cli_main(["--config", config, "--trainer.max_steps", str(steps), "--trainer.logger.init_args.save_dir", str(tmp_path),
                     "--trainer.enable_progress_bar", "false", *SMALL_NET, *extra])


def _tags(run_dir) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return set(acc.Tags()["scalars"]) | set(acc.Tags()["images"])


def test_ct_config_trains_through_the_cli_and_improves(tmp_path, capsys):
    args = ["--data.init_args.resolution", "16", "--data.init_args.angles", "8"]
    _cli("ct.yaml", tmp_path, 1, *args)
    start = _summary(capsys)
    _cli("ct.yaml", tmp_path, 40, *args, "--trainer.check_val_every_n_epoch", "2")
    end = _summary(capsys)
    assert end["train/residual"] < 0.5 * start["train/residual"]
    assert end["full/psnr"] > start["full/psnr"] + 3.0
    tags = _tags(tmp_path / "ct" / "version_1")
    assert {"measurements/residual", "measurements/predicted", "measurements/observed", "images/reconstruction",
            "val/psnr", "train/residual_step", "spectral/rel_err/low"} <= tags


def test_mri_config_trains_through_the_cli_and_improves(tmp_path, capsys):
    args = ["--data.init_args.resolution", "12"]
    _cli("mri.yaml", tmp_path, 1, *args)
    start = _summary(capsys)
    _cli("mri.yaml", tmp_path, 30, *args, "--trainer.check_val_every_n_epoch", "1")
    end = _summary(capsys)
    assert end["train/residual"] < 0.5 * start["train/residual"]
    assert end["full/psnr"] > start["full/psnr"] + 3.0
    assert {"measurements/residual", "images/reconstruction/slice_0", "val/psnr"} <= _tags(tmp_path / "mri" / "version_1")


def _bad(tmp_path, capsys, config, *args):
    with pytest.raises(SystemExit) as exc:
        _cli(config, tmp_path / "runs", 2, *args)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and err[0].startswith("error: ")
    assert not list((tmp_path / "runs").glob("*/version_*"))  # nothing half-written
    return err[0]


def test_bad_measurement_files_exit_2_with_one_line_and_leave_nothing(tmp_path, capsys):
    sino = tmp_path / "sino.npy"
    np.save(sino, np.zeros((3, 8, 23)))
    assert "must be 2D" in _bad(tmp_path, capsys, "ct.yaml", "--data.init_args.resolution", "16", "--data.init_args.sinogram", str(sino))
    bad = np.ones((8, 23))
    bad[2, 3] = np.nan
    np.save(sino, bad)
    assert "NaN" in _bad(tmp_path, capsys, "ct.yaml", "--data.init_args.resolution", "16", "--data.init_args.sinogram", str(sino))
    np.save(sino, np.ones((8, 23)))
    angles = tmp_path / "angles.npy"
    np.save(angles, np.linspace(0, np.pi, 7, endpoint=False))
    message = _bad(tmp_path, capsys, "ct.yaml", "--data.init_args.resolution", "16", "--data.init_args.sinogram", str(sino),
                   "--data.init_args.angles_path", str(angles))
    assert "8 projections but 7 angles" in message
    kspace, mask = tmp_path / "k.npy", tmp_path / "m.npy"
    np.save(kspace, np.ones((12, 12, 12), dtype=np.complex64))
    np.save(mask, np.ones((12, 12, 10), dtype=bool))
    message = _bad(tmp_path, capsys, "mri.yaml", "--data.init_args.resolution", "12", "--data.init_args.kspace", str(kspace),
                   "--data.init_args.mask", str(mask))
    assert "does not match the k-space" in message
    assert "file not found" in _bad(tmp_path, capsys, "mri.yaml", "--data.init_args.resolution", "12", "--data.init_args.kspace",
                                    str(tmp_path / "missing.npy"), "--data.init_args.mask", str(mask))


def _fit(model, dm, steps):
    trainer = L.Trainer(max_steps=steps, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        limit_val_batches=0, enable_model_summary=False)
    trainer.fit(model, datamodule=dm)


def _model(in_dim=2, channels=1, lr=3e-3):
    torch.manual_seed(0)
    return InverseFitting(encoder=GaussianEncoding(in_dim=in_dim, num_features=32, sigma=3.0),
                          network=partial(MLP, width=32, depth=2, output_activation="sigmoid"), out_channels=channels,
                          optimizer=partial(torch.optim.Adam, lr=lr))


def test_step_keeps_the_field_for_callbacks_and_holds_out_measurements():
    """The grid prediction the spectral callback reuses is the reconstruction (C, *shape), never the sinogram;
    held-out angles stay out of the loss and are scored as val/residual."""
    dm = CTDataModule(resolution=16, angles=8, heldout_every=4)
    model = _model()
    _fit(model, dm, steps=3)
    assert model.last_train_grid_prediction.shape == (1, 16, 16)
    train, held = dm.measurement_split()
    assert held.tolist() == [3, 7] and train.tolist() == [0, 1, 2, 4, 5, 6]
    batch = dm.gather(None, model.device)
    assert batch["values"].shape == (1, 6, dm.operator.detectors)
    metrics = model.evaluate()
    assert {"train/residual", "test/residual", "full/psnr", "full/ssim"} <= set(metrics)


def test_image_degradations_train_and_a_config_operator_is_accepted():
    for dm in (InpaintingDataModule(resolution=16, keep=0.3), SuperResolutionDataModule(resolution=16, factor=2),
               SimulatedMeasurementDataModule(operator=Downsample((16, 16), factor=4), resolution=16)):
        model = _model(channels=3, lr=1e-2)
        dm.setup("fit")
        _fit(model, dm, steps=1)
        start = model.evaluate()["train/residual"]
        _fit(model, dm, steps=25)
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
    read = MRIDataModule(resolution=8, ndim=2, kspace=str(tmp_path / "k.npy"), mask=str(tmp_path / "m.npy"), truth=str(tmp_path / "t.npy"))
    read.setup("fit")
    torch.testing.assert_close(read.measurements, sim.measurements)
    torch.testing.assert_close(read.values_grid(), sim.values_grid())
    assert read.has_ground_truth and not MRIDataModule(resolution=8, ndim=2, kspace="k.npy", mask="m.npy").has_ground_truth
