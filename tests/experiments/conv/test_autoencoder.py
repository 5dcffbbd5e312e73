"""The auto-encoder: shapes, the transposed-conv equivalence its docstring states, and that training learns."""

import torch
import torch.nn.functional as F

from inr.experiments.conv.autoencoder import ConvAutoencoder, reconstruct, train_autoencoder
from inr.experiments.conv.patches import PatchSet
from inr.io.threads import torch_threads
from inr.networks import zero_insertion


def test_zero_insertion_then_conv_is_a_transposed_conv():
    """zero insertion ×2 + conv2d(k, padding k//2, zeros) = conv_transpose2d(stride 2, padding k//2,
    output_padding 1) with the kernel flipped, to 1e-12 (float64), for k = 3 and 5."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 5, 6, generator=g, dtype=torch.float64)
    for k in (3, 5):
        w = torch.randn(4, 3, k, k, generator=g, dtype=torch.float64)  # conv2d layout (C_out, C_in, k, k)
        ours = F.conv2d(zero_insertion(x, 2), w, padding=k // 2)
        transposed = F.conv_transpose2d(x, w.flip(-2, -1).transpose(0, 1), stride=2, padding=k // 2, output_padding=1)
        assert ours.shape == transposed.shape == (2, 4, 10, 12)
        assert float((ours - transposed).abs().max()) < 1e-12


def test_shapes_code_size_and_padding_everywhere():
    ae = ConvAutoencoder(channels=1, width=8, code_channels=4, stages=2, depth=4, kernel_size=5, upsample_mode="bilinear")
    x = torch.rand(3, 1, 16, 16)
    assert ae.encoder(x).shape == (3, 4, 4, 4) and ae(x).shape == x.shape
    assert ae.code_numbers_per_pixel == 4 / 16
    assert all(m.padding_mode == "zeros" for m in ae.modules() if isinstance(m, torch.nn.Conv2d))
    assert [m.kernel_size for m in ae.decoder.convs()] == [(5, 5)] * 4


def test_training_lowers_the_heldout_error_and_reconstruct_chunks_consistently():
    image = torch.linspace(0, 1, 32)[:, None] * torch.linspace(0, 1, 32)[None, :]  # smooth: learnable in few steps
    ps = PatchSet([image, image.T], patch=8, block=16)
    torch.manual_seed(0)
    ae = ConvAutoencoder(width=8, code_channels=4, upsample_mode="nearest")
    test = ps.heldout()
    before = float(((reconstruct(ae, test) - test) ** 2).mean())
    with torch_threads(1):  # tiny convolutions: one thread avoids oversubscription on a shared machine
        losses = train_autoencoder(ae, ps, steps=60, batch_size=16, lr=1e-2, seed=0)
    after = float(((reconstruct(ae, test) - test) ** 2).mean())
    assert losses.shape == (60,) and after < 0.2 * before
    assert torch.allclose(reconstruct(ae, test, chunk=3), reconstruct(ae, test, chunk=None), atol=1e-6)
