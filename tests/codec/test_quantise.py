"""Uniform quantisation against a float64 numpy reference; the step grid; straight-through fine-tuning."""

import numpy as np
import pytest
import torch

from inr.codec.quantise import STEP_OFFSET, STEP_PER_OCTAVE, FakeQuantised, fake_quantise, levels, quantise, step_code, step_value


@pytest.mark.parametrize("bits", [2, 4, 8, 12, 16])
@pytest.mark.parametrize("rows", [1, 5])
def test_quantise_matches_a_float64_reference(bits, rows):
    w = torch.randn(5, 7, generator=torch.Generator().manual_seed(bits)) * 0.3
    t = quantise(w, bits, rows)
    reference = w.double().numpy().reshape(rows, -1)
    L = 2 ** (bits - 1) - 1
    steps = 2.0 ** ((t.codes.numpy().astype(np.float64) - STEP_OFFSET) / STEP_PER_OCTAVE)  # (rows,)
    # the step: the smallest grid point at or above max|w| / L
    exact = np.abs(reference).max(axis=1) / L
    assert np.all(steps >= exact) and np.all(steps / 2 ** (1 / STEP_PER_OCTAVE) < exact * (1 + 1e-12))
    q = np.clip(np.round(reference / steps[:, None]), -L, L)
    assert np.array_equal(t.q.numpy().reshape(rows, -1), q.astype(np.int32))
    assert np.abs(t.q.numpy()).max() <= L
    error = np.abs(t.dequantise().double().numpy().reshape(rows, -1) - reference)
    assert np.all(error <= steps[:, None] / 2 * (1 + 1e-6))


def test_the_step_grid_is_exact_at_octaves_and_covers_a_zero_tensor():
    assert step_value(torch.tensor([STEP_OFFSET + 8 * k for k in (-3, 0, 2)])).tolist() == [0.125, 1.0, 4.0]
    t = quantise(torch.zeros(3, 4), bits=8)
    assert t.q.abs().sum() == 0 and torch.equal(t.dequantise(), torch.zeros(3, 4))
    assert int(step_code(torch.tensor([127.0]), 8)) == STEP_OFFSET  # 127 / 127 = 1 exactly on the grid


def test_levels_refuse_depths_outside_the_format():
    assert levels(16) == 32767
    with pytest.raises(ValueError):
        levels(17)
    with pytest.raises(ValueError):
        levels(1)


def test_fake_quantisation_is_the_quantiser_forward_and_the_identity_backward():
    w = torch.randn(4, 6, dtype=torch.float32, requires_grad=True)
    out = fake_quantise(w, 4, rows=4)
    assert torch.equal(out.detach(), quantise(w, 4, 4).dequantise())
    (out * torch.arange(24.0).reshape(4, 6)).sum().backward()
    assert torch.equal(w.grad, torch.arange(24.0).reshape(4, 6))
    linear = torch.nn.Linear(6, 4)
    torch.nn.utils.parametrize.register_parametrization(linear, "weight", FakeQuantised(4, 4))
    assert torch.equal(linear.weight, quantise(linear.parametrizations.weight.original, 4, 4).dequantise())
