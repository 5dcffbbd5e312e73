"""The latent codec's parts against independent references: the integer Laplace tables against float64 integrals,
the fixed-point entropy model against the float one, the wave order against the context, the decoder's upsampling
against F.interpolate, the banded synthesis against the whole image."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from inr.codec import latent_model
from inr.codec.laplace import MEAN_FRACTIONS, SCALE_COUNT, bits, decay_per_sixteenth, scale_value, split_mean, table
from inr.codec.latent_arm import CONTEXT, AutoregressiveModel, FixedPoint, contexts, wave_order, waves
from inr.codec.latent_fit import soft_round
from inr.codec.latent_model import LatentImage, Spec, render, upsample_rows


def laplace_bins(mean: float, b: float, bound: int) -> np.ndarray:
    """P(q = c + d), d = −K … K, of a Laplace(mean, b) integrated over unit bins, float64 closed form (c = 0)."""

    def cdf(x):
        return np.where(x < mean, 0.5 * np.exp((x - mean) / b), 1 - 0.5 * np.exp(-(x - mean) / b))

    d = np.arange(-bound, bound + 1, dtype=np.float64)
    return cdf(d + 0.5) - cdf(d - 0.5)


@pytest.mark.parametrize("s", [0, 20, 32, 47, 80])
@pytest.mark.parametrize("f", [0, 5, 15])
def test_the_integer_tables_are_the_laplace_bins_to_within_their_fixed_point(s, f):
    # the integer CDF is ½·ρ^n with ρ rounded to 2^−30 and n ≤ 16·(K + 2) products each floored: an error of at most
    # about n·2^−30 per edge, so 2e-6 absolute per bin is a generous bound at K = 20
    got = table(20)[s, f].astype(np.float64) / 2.0**30
    want = laplace_bins(f / MEAN_FRACTIONS, scale_value(s), 20)
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_the_decay_constants_are_exp_of_minus_one_over_sixteen_b():
    rho = decay_per_sixteenth().astype(np.float64) / 2.0**30
    want = np.exp(-1.0 / (16 * np.array([scale_value(s) for s in range(SCALE_COUNT)])))
    np.testing.assert_allclose(rho, want, atol=1e-9)


def test_training_bits_are_the_tables_bits_on_the_tables_grid():
    # the float rate the encoder trains on and the integer probabilities the coder uses: one model, two precisions
    bound = 12
    probabilities = table(bound).astype(np.float64)
    for s in (8, 32, 56):
        for f in (0, 7):
            p = probabilities[s, f] / 2.0**30  # the model's own mass (the coder renormalises the truncated support)
            q = torch.arange(-bound, bound + 1, dtype=torch.float64)
            trained = bits(q, torch.full_like(q, f / 16), torch.full_like(q, scale_value(s))).numpy()
            held = p > 1e-6  # where neither floors nor the truncation at ±K matter
            np.testing.assert_allclose(trained[held], -np.log2(p[held]), atol=2e-3)


def test_split_mean_inverts_sixteenths():
    m = np.arange(-100, 100)
    c, f = split_mean(m)
    assert np.array_equal(16 * c + f, m) and f.min() == 0 and f.max() == 15


def test_the_fixed_point_model_predicts_what_the_float_model_does_with_its_weights():
    torch.manual_seed(0)
    model = AutoregressiveModel(16).double()
    for p in model.parameters():
        p.data.normal_(0, 0.4)
    fixed = FixedPoint.of(model, 12)
    fixed.load_into(model)  # the float model with exactly the integer model's weights
    context = np.random.default_rng(1).integers(-20, 21, size=(2000, len(CONTEXT)))
    c, f, s = fixed.predict(context)
    mean, scale = model(torch.from_numpy(context).double())
    # floor shifts lose < 2^−12 per activation per layer; the mean is then rounded to a sixteenth, the scale index
    # to an eighth of an octave: at most one step off where the float value lies on a rounding boundary
    assert np.abs((16 * c + f) / 16 - mean.detach().numpy()).max() <= 1 / 32 + 0.01
    want_s = np.clip(np.round(8 * np.log2(scale.detach().numpy())) + 32, 0, SCALE_COUNT - 1)
    assert np.abs(s - want_s).max() <= 1


def test_every_neighbour_of_a_latent_is_decoded_on_an_earlier_wave():
    h, w = 7, 9
    wave = np.empty((h, w), dtype=int)
    for t, (rows, cols) in enumerate(waves(h, w)):
        wave[rows, cols] = t
    for i in range(h):
        for j in range(w):
            for di, dj in CONTEXT:
                if 0 <= i + di < h and 0 <= j + dj < w:
                    assert wave[i + di, j + dj] < wave[i, j]
    assert sorted(wave_order(h, w).tolist()) == list(range(h * w))


def test_contexts_read_the_neighbours_and_zero_outside():
    grid = torch.arange(1, 13).reshape(3, 4)
    ctx = contexts(grid)
    for index in range(12):
        i, j = divmod(index, 4)
        want = [int(grid[i + di, j + dj]) if 0 <= i + di < 3 and 0 <= j + dj < 4 else 0 for di, dj in CONTEXT]
        assert ctx[index].tolist() == want


@pytest.mark.parametrize("size", [(5, 7, 19, 13), (3, 3, 5, 6), (8, 8, 16, 16)])
def test_the_decoders_upsampling_is_bilinear_with_half_pixel_centres(size):
    h, w, height, width = size
    grid = torch.randn(h, w, dtype=torch.float64)
    want = F.interpolate(grid[None, None], size=(height, width), mode="bilinear", align_corners=False)[0, 0]
    assert torch.allclose(upsample_rows(grid, height, width, 0, height), want, atol=1e-12)
    assert torch.allclose(upsample_rows(grid, height, width, 2, 4), want[2:4], atol=1e-12)


def test_the_banded_render_is_the_whole_image(monkeypatch):
    spec = Spec(37, 23, 3, 4, 8, 8)
    torch.manual_seed(0)
    model = LatentImage(spec).double()
    grids = [np.random.default_rng(level).integers(-6, 7, size=s) for level, s in enumerate(spec.level_shapes())]
    with torch.no_grad():
        whole = model.image([torch.from_numpy(g).double() for g in grids]).clamp(0, 1).numpy()
    monkeypatch.setattr(latent_model, "BAND_PIXELS", 3 * spec.width)  # bands of 3 rows
    banded = render(model.synthesis, grids, spec)
    assert np.array_equal(banded, np.round(whole * 255).astype(np.uint8))


def test_soft_rounding_tends_to_rounding_and_keeps_half_integers():
    y = torch.linspace(-3, 3, 601, dtype=torch.float64)
    cold = soft_round(y, 0.01)
    away = (y - torch.floor(y) - 0.5).abs() > 0.1
    assert torch.allclose(cold[away], torch.round(y[away]), atol=1e-6)
    halves = torch.tensor([-1.5, 0.5, 2.5], dtype=torch.float64)
    assert torch.allclose(soft_round(halves, 0.2), halves)
    assert math.isclose(float(soft_round(torch.tensor(0.3), 100.0)), 0.3, abs_tol=1e-3)  # hot: the identity
