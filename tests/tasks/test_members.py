"""Stacked members: K members trained as one model follow K single runs (float64, 50 Adam steps), score as they
do, export as single models, and report a diverging member by its index."""

from functools import partial

import imageio.v3 as iio
import lightning as L
import numpy as np
import pytest
import torch

from inr.callbacks import NTKCallback
from inr.data import (
    CTDataModule,
    ImageDataModule,
    InpaintingDataModule,
    MRIDataModule,
    SignalDataModule,
    VideoDataModule,
    VolumeDataModule,
)
from inr.encoders import GaussianEncoding, HashGridEncoding, PositionalEncoding
from inr.errors import InputError
from inr.networks import MLP, SIREN, WIRE
from inr.tasks import ImageFitting, InverseFitting, RadianceFieldFitting, SignalFitting, VideoFitting, VolumeFitting
from inr.tasks.guards import TrainingDiverged

NET = partial(MLP, width=16, depth=2, output_activation="sigmoid", init="paper")
ADAM = partial(torch.optim.Adam, lr=1e-2)
STEPS = 50
# float64 throughout: member and single run differ only by the order of floating-point sums (≈1e-15 here)
PARAM_TOL = 1e-6


def in_float64(dm):
    """The DataModule with its batches in float64 (its grid coordinates are computed in float32)."""
    gather = dm.gather
    dm.gather = lambda index, device: {
        key: value.double() if torch.is_tensor(value) and value.is_floating_point() else value
        for key, value in gather(index, device).items()
    }
    return dm


@pytest.fixture(scope="module")
def fit(quiet_trainer):
    """``fit(model, dm, steps=STEPS, **overrides)``: ``steps`` steps of a quiet trainer, in float64 unless
    ``precision`` says otherwise; returns the trainer."""

    def run(model, dm, steps=STEPS, **kwargs):
        trainer = quiet_trainer(steps, **{"precision": "64-true", **kwargs})
        trainer.fit(model, datamodule=in_float64(dm) if trainer.precision == "64-true" else dm)
        return trainer

    return run


def max_difference(a: torch.nn.Module, b: torch.nn.Module) -> float:
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    return max(float((sa[k].double() - sb[k].double()).abs().max()) for k in sa)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """Three 16×16 targets: the two shipped images and a third drawn here."""
    folder = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    iio.imwrite(folder / "c_noise.png", rng.integers(0, 256, (24, 24, 3), dtype=np.uint8))
    return ["data/astronaut.png", "data/camera.png", str(folder / "c_noise.png")]


CASES = {  # the members' seeds, Gaussian σ and image of each member
    "seed": ([3, 4, 5], [6.0, 6.0, 6.0], [0, 0, 0]),
    "sigma": ([3, 3, 3], [2.0, 5.0, 9.0], [0, 0, 0]),
    "target": ([3, 3, 3], [6.0, 6.0, 6.0], [0, 1, 2]),
}


@pytest.mark.parametrize("case, batch_size", [("seed", None), ("sigma", None), ("target", None), ("target", 37)])
def test_stacked_members_follow_their_single_runs(case, batch_size, images, fit):
    """Full batches, and random batches of 37 pixels (the members share each step's draw, as single runs of one
    data seed do)."""
    seeds, sigmas, targets = CASES[case]
    encoders = [GaussianEncoding(num_features=8, sigma=s, seed=k) for k, s in enumerate(sigmas)]
    data = partial(ImageDataModule, resolution=16, steps_per_epoch=5, batch_size=batch_size)
    files = [images[t] for t in targets]
    stacked_data = data(path=files) if len(set(files)) > 1 else data(path=files[0])
    stacked = ImageFitting(member_encoders=encoders, member_seeds=seeds, network=NET, optimizer=ADAM)
    assert stacked.network[0].weight.shape == (3, 16, 16)
    fit(stacked, stacked_data, STEPS)
    for k in range(3):
        torch.manual_seed(seeds[k])  # a single model built with member k's seed
        single = ImageFitting(encoder=GaussianEncoding(num_features=8, sigma=sigmas[k], seed=k), network=NET, optimizer=ADAM)
        fit(single, data(path=files[k]), STEPS)
        assert max_difference(stacked.member(k), single) <= PARAM_TOL, (case, k)


def scores(model, dm, trainer):
    """``trainer.validate()``'s values and ``evaluate()`` of a model trained in float64, scored in float32 as a
    run is."""
    model.float()
    values = {k: float(v) for k, v in trainer.validate(model, datamodule=dm, verbose=False)[0].items()}
    return values, model.evaluate()


def test_heldout_metrics_of_members_are_those_of_the_single_runs(images, fit, quiet_trainer):
    """val/... of validate() and evaluate()'s test/... and full/... per member, against the single runs' own."""
    sigmas, dm = [3.0, 8.0], partial(ImageDataModule, resolution=16, steps_per_epoch=5)
    stacked = ImageFitting(
        member_encoders=[GaussianEncoding(num_features=8, sigma=s) for s in sigmas], network=NET, optimizer=ADAM
    )
    fit(stacked, dm(path=images[:2]), 20)
    stacked_val, stacked_eval = scores(stacked, dm(path=images[:2]), quiet_trainer(limit_val_batches=1.0))
    assert {"val/psnr/m0", "val/psnr/m1", "val/psnr/mean", "val/psnr/std", "val/ssim/mean"} <= set(stacked_val)
    psnrs = []
    for k, sigma in enumerate(sigmas):
        torch.manual_seed(k)
        single = ImageFitting(encoder=GaussianEncoding(num_features=8, sigma=sigma), network=NET, optimizer=ADAM)
        fit(single, dm(path=images[k]), 20)
        single_val, single_eval = scores(single, dm(path=images[k]), quiet_trainer(limit_val_batches=1.0))
        for name in ("psnr", "ssim"):
            assert stacked_val[f"val/{name}/m{k}"] == pytest.approx(single_val[f"val/{name}"], abs=1e-4)
        for key, value in single_eval.items():  # train/ and test/psnr, full/psnr and full/ssim
            assert stacked_eval[f"{key}/m{k}"] == pytest.approx(value, abs=1e-4), key
        psnrs.append(single_val["val/psnr"])
    assert stacked_val["val/psnr/mean"] == pytest.approx(np.mean(psnrs), abs=1e-4)
    assert stacked_val["val/psnr/std"] == pytest.approx(np.std(psnrs), abs=1e-4)  # population std (ddof 0)


def test_member_model_predicts_and_renders_as_the_stack():
    stacked = ImageFitting(
        member_encoders=[PositionalEncoding(num_frequencies=4, sigma=s) for s in (4.0, 16.0, 64.0)], network=NET, render_chunk=50
    )
    coords = torch.rand(101, 2)
    values, grid = stacked.predict(coords), stacked.render((12, 10))
    assert values.shape == (3, 101, 3) and grid.shape == (3, 3, 12, 10)
    for k in range(3):
        member = stacked.member(k)
        assert type(member) is ImageFitting and member.members is None
        torch.testing.assert_close(member.predict(coords), values[k], atol=1e-6, rtol=0)
        torch.testing.assert_close(member.render((12, 10)), grid[k], atol=1e-6, rtol=0)
        # independent of the stack: changing the member leaves the stack as it was
        member.network[0].weight.data.zero_()
        torch.testing.assert_close(stacked.predict(coords)[k], values[k])


def test_member_seeds_default_to_zero_to_k_and_set_each_init():
    stacked = ImageFitting(members=3, encoder=GaussianEncoding(num_features=8), network=NET)
    assert stacked.member_seeds == [0, 1, 2] and dict(stacked.hparams)["member_seeds"] == [0, 1, 2]
    torch.manual_seed(2)
    single = ImageFitting(encoder=GaussianEncoding(num_features=8), network=NET)
    assert max_difference(stacked.member(2), single) == 0.0
    state = torch.random.get_rng_state()
    ImageFitting(members=2, network=NET)
    assert torch.equal(torch.random.get_rng_state(), state)  # building members leaves the global random state alone


def test_a_member_whose_loss_turns_nan_is_named(fit):
    class PoisonMember(L.Callback):
        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            if trainer.global_step == 7:
                pl_module.network[0].weight.data[2, 0, 0] = float("nan")

    stacked = ImageFitting(members=4, encoder=GaussianEncoding(num_features=8), network=NET)
    with pytest.raises(TrainingDiverged, match=r"the loss of member 2 is nan at step 7 \(epoch 1\)"):
        fit(stacked, ImageDataModule(resolution=16, steps_per_epoch=5), 20, precision="32-true", callbacks=[PoisonMember()])


def test_guard_reads_member_losses_on_the_lagged_path_too(quiet_trainer):
    from inr.tasks.guards import NonFiniteLossGuard

    stacked = ImageFitting(members=3, encoder=GaussianEncoding(num_features=8), network=NET)
    guard = NonFiniteLossGuard(lagged=True)
    stacked.stack.losses = torch.tensor([0.1, float("inf"), float("nan")])
    trainer = quiet_trainer()
    guard.on_before_backward(trainer, stacked, stacked.stack.losses.sum())
    with pytest.raises(TrainingDiverged, match=r"the loss of members 1, 2 is inf, nan at step 0"):
        guard.read_pending(trainer)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: ImageFitting(members=2, member_seeds=[0, 1, 2]), r"disagree on their number \(members 2, member_seeds 3\)"),
        (lambda: ImageFitting(members=0), r"model.members must be ≥ 1"),
        (
            lambda: ImageFitting(members=2, network=partial(WIRE, width=8, depth=1)),
            r"network cannot be stacked into members: WIRE holds a ComplexGabor",
        ),
        (
            lambda: ImageFitting(member_encoders=[GaussianEncoding(num_features=4), GaussianEncoding(num_features=8)]),
            r"member 1's encoding has B of shape \(8, 2\), member 0's \(4, 2\)",
        ),
        (
            lambda: ImageFitting(members=2, encoder=HashGridEncoding(in_dim=2, n_levels=2, log2_hashmap_size=6)),
            r"HashGridEncoding cannot be stacked",
        ),
        (lambda: RadianceFieldFitting(members=2), r"RadianceFieldFitting's field is not network\(encoder\(v\)\)"),
    ],
)
def test_what_cannot_be_stacked_is_refused_in_one_line(make, message):
    with pytest.raises(InputError, match=message) as err:
        make()
    assert "\n" not in str(err.value)


def test_data_and_trainer_settings_that_do_not_fit_members_are_refused(images, fit):
    two = partial(ImageDataModule, path=images[:2], resolution=16, steps_per_epoch=5)
    with pytest.raises(InputError, match=r"holds 2 targets, one per member; set model.members: 2"):
        fit(ImageFitting(network=NET), two(), 1, precision="32-true")
    with pytest.raises(InputError, match=r"holds 2 targets and model.members is 3"):
        fit(ImageFitting(members=3, network=NET), two(), 1, precision="32-true")
    with pytest.raises(InputError, match=r"NTKCallback does not read a model with members"):
        fit(ImageFitting(members=2, network=NET), two(), 1, precision="32-true", callbacks=[NTKCallback()])
    with pytest.raises(InputError, match=r"gradient_clip_val: clipping by the norm of all parameters couples the members"):
        fit(ImageFitting(members=2, network=NET), two(), 1, precision="32-true", gradient_clip_val=1.0)


TASKS = {  # task, coordinate dimensions, data, output activation, task arguments
    "signal": (SignalFitting, 1, lambda: SignalDataModule(length=64), "none", {}),
    "occupancy": (VolumeFitting, 3, lambda: VolumeDataModule(resolution=8), "none", {}),
    "density": (VolumeFitting, 3, lambda: VolumeDataModule(resolution=8, mode="density"), "sigmoid", {"mode": "density"}),
    "video": (VideoFitting, 3, lambda: VideoDataModule(resolution=8, frames=4), "sigmoid", {}),
    "inpainting": (InverseFitting, 2, lambda: InpaintingDataModule(resolution=16, channels="gray"), "sigmoid", {}),
    "ct": (InverseFitting, 2, lambda: CTDataModule(resolution=16, angles=5), "sigmoid", {}),
    "mri": (InverseFitting, 3, lambda: MRIDataModule(resolution=8, samples=100), "sigmoid", {}),
}


@pytest.mark.parametrize("name", list(TASKS))
def test_fixed_grid_tasks_train_members_as_single_runs(name, fit):
    """Two members differing in seed and σ, 10 float64 Adam steps, against two single runs; then each member's
    closing evaluation (in float32) is the single run's."""
    cls, ndim, data, out, kwargs = TASKS[name]
    net, sigmas = partial(MLP, width=16, depth=2, output_activation=out), [2.0, 4.0]
    encoders = [GaussianEncoding(in_dim=ndim, num_features=8, sigma=s) for s in sigmas]
    stacked, stacked_data = cls(member_encoders=encoders, member_seeds=[1, 2], network=net, optimizer=ADAM, **kwargs), data()
    fit(stacked, stacked_data, 10)
    stacked.float().attach_data(data())
    results = stacked.evaluate()
    for k, sigma in enumerate(sigmas):
        torch.manual_seed(k + 1)
        single = cls(encoder=GaussianEncoding(in_dim=ndim, num_features=8, sigma=sigma), network=net, optimizer=ADAM, **kwargs)
        fit(single, data(), 10)
        assert max_difference(stacked.member(k), single) <= PARAM_TOL, k
        single.float().attach_data(data())
        for key, value in single.evaluate().items():
            assert results[f"{key}/m{k}"] == pytest.approx(value, abs=1e-4), key


class HostReadingLoss(ImageFitting):
    """A loss that reads a value on the host, which ``torch.vmap`` cannot map."""

    def loss(self, raw, target):
        scale = 1.0 if float(target.mean()) >= 0 else 2.0
        return scale * torch.nn.functional.mse_loss(raw, target)


def test_a_loss_vmap_cannot_map_is_taken_member_by_member(images, fit):
    encoders = [GaussianEncoding(num_features=8, sigma=s) for s in (3.0, 7.0)]
    stacked = HostReadingLoss(member_encoders=encoders, network=NET, optimizer=ADAM)
    fit(stacked, ImageDataModule(path=images[:2], resolution=16, steps_per_epoch=5), 10)
    assert stacked.stack.loss_maps is False
    for k, sigma in enumerate((3.0, 7.0)):
        torch.manual_seed(k)
        single = HostReadingLoss(encoder=GaussianEncoding(num_features=8, sigma=sigma), network=NET, optimizer=ADAM)
        fit(single, ImageDataModule(path=images[k], resolution=16, steps_per_epoch=5), 10)
        assert max_difference(stacked.member(k), single) <= PARAM_TOL


def test_a_stacked_task_copies_and_pickles_with_its_members():
    import copy
    import pickle

    stacked = ImageFitting(member_encoders=[GaussianEncoding(num_features=8, sigma=s) for s in (2.0, 5.0)], network=NET)
    coords = torch.rand(9, 2)
    for clone in (copy.deepcopy(stacked), pickle.loads(pickle.dumps(stacked))):
        assert clone.members == 2 and clone.predict(coords).shape == (2, 9, 3)  # its own methods, bound to itself
        torch.testing.assert_close(clone.predict(coords), stacked.predict(coords), rtol=0, atol=0)
        clone.network[0].weight.data.zero_()
        assert not torch.equal(clone.predict(coords), stacked.predict(coords))


@pytest.mark.parametrize(
    "network",
    [partial(SIREN, width=16, depth=2), partial(MLP, width=16, depth=2, activation="tanh", output_activation="none")],
    ids=["siren", "mlp-tanh-torch-init"],
)
def test_siren_and_torch_initialised_members_follow_their_single_runs(network, fit):
    stacked = ImageFitting(members=2, member_seeds=[7, 8], network=network, optimizer=ADAM)  # identity encoding
    fit(stacked, ImageDataModule(resolution=16, steps_per_epoch=5), STEPS)
    for k, seed in enumerate((7, 8)):
        torch.manual_seed(seed)
        single = ImageFitting(network=network, optimizer=ADAM)
        fit(single, ImageDataModule(resolution=16, steps_per_epoch=5), STEPS)
        assert max_difference(stacked.member(k), single) <= PARAM_TOL
