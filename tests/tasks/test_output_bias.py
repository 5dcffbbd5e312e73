"""output_bias: data — the network starts at the data's mean: the constant field that best explains the
measurements (against numpy and closed forms per operator), the output layer's bias set at the first fit, and
the combinations it refuses."""

from functools import partial

import numpy as np
import pytest
import torch
from torch import nn

from inr.data import CTDataModule, ImageDataModule, InpaintingDataModule, MRIDataModule, SuperResolutionDataModule
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.operators import KSpaceSampling
from inr.tasks import ImageFitting, InverseFitting
from inr.tasks.output_bias import constant_fit, set_output_bias


def fit_of(dm):
    dm.setup("fit")
    return float(constant_fit(dm.operator, dm.measurements, dm.out_channels, dm.measurement_split()[0])[0])


def test_the_constant_fit_is_the_mean_each_measurement_gives():
    mri = MRIDataModule(resolution=8, ndim=2, samples=30)
    mri.setup("fit")
    assert bool(mri.operator.mask[4, 4])  # the DC sample (centred k-space) is measured
    truth = mri.values_grid().double().numpy()
    assert fit_of(mri) == pytest.approx(truth.mean(), abs=1e-6)  # DC / √N² = the mean
    inpaint = InpaintingDataModule(resolution=16, keep=0.3)
    inpaint.setup("fit")
    image, mask = inpaint.values_grid().double().numpy(), inpaint.operator.mask.numpy()
    got = constant_fit(inpaint.operator, inpaint.measurements, 3, inpaint.measurement_split()[0]).numpy()
    np.testing.assert_allclose(got, image[:, mask].mean(axis=1), atol=1e-6)  # the observed pixels' mean
    superres = SuperResolutionDataModule(resolution=16, factor=4)
    superres.setup("fit")
    got = constant_fit(superres.operator, superres.measurements, 3, superres.measurement_split()[0]).numpy()
    np.testing.assert_allclose(got, superres.values_grid().double().numpy().mean(axis=(1, 2)), atol=1e-6)
    ct = CTDataModule(resolution=16, angles=8)
    ct.setup("fit")
    projections = ct.operator(torch.full((1, 16, 16), 0.3))  # a constant field's projections give it back
    assert float(constant_fit(ct.operator, projections, 1)[0]) == pytest.approx(0.3, abs=1e-5)


def test_measurements_without_the_mean_are_refused():
    mask = torch.zeros(8, 8, dtype=torch.bool)
    mask[0, 1] = mask[2, 3] = True  # no DC sample: a constant field measures as zero
    op = KSpaceSampling(mask)
    y = op(torch.rand(1, 8, 8))
    with pytest.raises(InputError, match="hold nothing of the field's mean"):
        constant_fit(op, y, 1)


def test_the_output_bias_inverts_the_output_activation():
    sigmoid = MLP(2, 3, width=8, depth=1, output_activation="sigmoid", init="paper")
    mean = torch.tensor([0.1, 0.5, 0.9])
    set_output_bias(sigmoid, mean)
    torch.testing.assert_close(sigmoid[-2].bias.detach(), torch.log(mean / (1 - mean)))
    linear = MLP(2, 3, width=8, depth=1)
    set_output_bias(linear, mean)
    torch.testing.assert_close(linear[-1].bias.detach(), mean)
    with pytest.raises(InputError, match="ends in a linear layer"):
        set_output_bias(nn.Sequential(nn.Linear(2, 1), nn.Tanh()), torch.tensor([0.5]))


def inverse_model(bias, lr=1e-3):
    torch.manual_seed(0)
    return InverseFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=2.0),
        network=partial(MLP, width=16, depth=2, output_activation="sigmoid", init="paper"),
        optimizer=partial(torch.optim.Adam, lr=lr),
        output_bias=bias,
    )


def test_a_fit_starts_at_the_measurements_mean_once(fit_steps):
    """After one Adam step (each parameter moves by at most lr) the bias is logit(mean from the DC sample); the
    paper's init keeps its N(0, 0.01²) draw; a second fit does not set it again."""
    dm = MRIDataModule(resolution=8, ndim=2, samples=30)
    dm.setup("fit")
    logit = torch.logit(dm.values_grid().double().mean()).item()
    model = inverse_model("data")
    fit_steps(model, dm, steps=1)
    assert model.network[-2].bias.item() == pytest.approx(logit, abs=1.5e-3)
    paper = inverse_model("init")
    fit_steps(paper, dm, steps=1)
    assert abs(paper.network[-2].bias.item()) < 0.05 and abs(logit) > 1
    with torch.no_grad():
        model.network[-2].bias.fill_(5.0)
    fit_steps(model, dm, steps=1)
    assert model.network[-2].bias.item() == pytest.approx(5.0, abs=1.5e-3)


def test_image_fitting_starts_at_the_training_pixels_mean(fit_steps):
    dm = ImageDataModule(path="data/astronaut.png", resolution=16, split="every_other")
    dm.setup("fit")
    model = ImageFitting(
        network=partial(MLP, width=16, depth=1, output_activation="sigmoid", init="paper"),
        optimizer=partial(torch.optim.Adam, lr=1e-3),
        output_bias="data",
    )
    fit_steps(model, dm, steps=1)
    mean = dm.values_grid(dm.train_index, dm.train_shape).double().mean(dim=(1, 2))
    torch.testing.assert_close(model.network[-2].bias.detach().double(), torch.logit(mean), atol=1.5e-3, rtol=0)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: ImageFitting(output_bias="mean"), "model.output_bias must be one of init, data, got 'mean'"),
        (lambda: ImageFitting(members=2, output_bias="data"), "a single model's start"),
        (lambda: InverseFitting(init_from="x.ckpt", output_bias="data"), "both set the start; choose one"),
    ],
)
def test_refused_combinations_name_the_setting(make, words):
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        make()
