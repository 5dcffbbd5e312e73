"""Fourier-feature encoders against their closed forms, and B surviving a checkpoint."""

import math

import numpy as np
import pytest
import torch

from inr.encoders import BasicEncoding, GaussianEncoding, IdentityEncoding, PositionalEncoding, fourier_features
from inr.tasks import ImageFitting


def test_identity_passes_coordinates_through():
    v = torch.rand(7, 3)
    enc = IdentityEncoding(in_dim=3)
    assert enc.out_dim == 3 and torch.equal(enc(v), v)


def test_basic_encoding_hand_values():
    enc = BasicEncoding(in_dim=2)
    out = enc(torch.tensor([[0.0, 0.25], [0.5, 0.125]], dtype=torch.float32))
    s = math.sqrt(0.5)
    # [cos 2πv_y, cos 2πv_x, sin 2πv_y, sin 2πv_x]
    expected = torch.tensor([[1.0, 0.0, 0.0, 1.0], [-1.0, s, 0.0, s]])
    assert enc.out_dim == 4
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)


def test_positional_frequencies_are_log_linear():
    enc = PositionalEncoding(in_dim=2, num_frequencies=4, sigma=16.0)
    freqs = 16.0 ** (np.arange(4) / 4)  # σ^{j/m}
    b = enc.b.numpy()
    np.testing.assert_allclose(b[:4, 0], freqs, rtol=1e-6)
    np.testing.assert_allclose(b[4:, 1], freqs, rtol=1e-6)
    assert (b[:4, 1] == 0).all() and (b[4:, 0] == 0).all()
    assert enc.out_dim == 2 * 4 * 2


def test_positional_paper_code_frequencies():
    # the released code: 2^linspace(0, 6, m) − 1
    enc = PositionalEncoding(in_dim=1, num_frequencies=5, sigma=2.0**6, endpoint=True, minus_one=True)
    np.testing.assert_allclose(enc.b[:, 0].numpy(), 2.0 ** np.linspace(0, 6, 5) - 1, rtol=1e-6)


def test_positional_values_match_formula_in_float64():
    enc = PositionalEncoding(in_dim=2, num_frequencies=3, sigma=8.0).double()
    v = torch.rand(11, 2, dtype=torch.float64)
    f = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    proj = torch.cat([2 * math.pi * f * v[:, :1], 2 * math.pi * f * v[:, 1:]], dim=1)
    expected = torch.cat([proj.cos(), proj.sin()], dim=1)
    torch.testing.assert_close(fourier_features(v, enc.b.double()), expected, atol=1e-12, rtol=0)


def test_gaussian_statistics_and_seed():
    enc = GaussianEncoding(in_dim=2, num_features=4096, sigma=10.0, seed=3)
    assert enc.out_dim == 8192 and enc.b.shape == (4096, 2)
    # std of 8192 N(0, 100) samples: standard error of the std ≈ 10/√(2·8192) ≈ 0.08
    assert abs(enc.b.std().item() - 10.0) < 0.4
    assert torch.equal(enc.b, GaussianEncoding(2, 4096, 10.0, seed=3).b)
    assert not torch.equal(enc.b, GaussianEncoding(2, 4096, 10.0, seed=4).b)
    torch.manual_seed(123)  # the global RNG must not matter
    assert torch.equal(enc.b, GaussianEncoding(2, 4096, 10.0, seed=3).b)


def test_feature_norm_is_constant():
    # ‖γ(v)‖² = m for every v: the property that makes the composed kernel stationary
    enc = GaussianEncoding(in_dim=2, num_features=64, sigma=5.0)
    norms = enc(torch.rand(100, 2)).pow(2).sum(1)
    torch.testing.assert_close(norms, torch.full((100,), 64.0), atol=1e-3, rtol=0)


def test_gaussian_b_survives_checkpoint_round_trip(tmp_path, quiet_trainer):
    from inr.data import ImageDataModule

    def enc(seed):
        return GaussianEncoding(in_dim=2, num_features=16, sigma=10.0, seed=seed)

    model = ImageFitting(encoder=enc(7), out_channels=3)
    trainer = quiet_trainer(2, default_root_dir=tmp_path, enable_checkpointing=True)  # its checkpoint under tmp_path
    trainer.fit(model, datamodule=ImageDataModule(resolution=16, steps_per_epoch=2))
    path = next((tmp_path / "checkpoints").glob("*.ckpt"))
    # rebuilt with a differently seeded encoder, the checkpoint restores the trained B
    restored = ImageFitting.load_from_checkpoint(path, encoder=enc(99))
    assert not torch.equal(enc(99).b, model.encoder.b)
    assert torch.equal(restored.encoder.b, model.encoder.b)


@pytest.mark.parametrize("bad", [dict(num_features=0), dict(sigma=-1.0)])
def test_gaussian_rejects_bad_sizes(bad):
    with pytest.raises(ValueError):
        GaussianEncoding(**bad)


def test_positional_rotation_turns_every_frequency_vector():
    """rotation R: b ← R b for every row (the notebook's ``bvals @ rot.T``): lengths kept, γ(v) = γ_axis(Rᵀ v) —
    the encoding of the rotated frame — and a matrix that is not orthogonal is refused."""
    angle = 0.3
    r = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
    plain = PositionalEncoding(in_dim=2, num_frequencies=4, sigma=8.0)
    turned = PositionalEncoding(in_dim=2, num_frequencies=4, sigma=8.0, rotation=r)
    torch.testing.assert_close(turned.b.norm(dim=1), plain.b.norm(dim=1))
    v = torch.rand(10, 2)
    rt = torch.tensor(r).T
    torch.testing.assert_close(turned(v), plain(v @ rt.T), atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="orthogonal 2×2"):
        PositionalEncoding(in_dim=2, num_frequencies=4, rotation=[[1.0, 0.5], [0.0, 1.0]])
