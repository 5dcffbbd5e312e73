"""Transfer matrices of circular conv cascades against the network itself and against numpy.fft."""

import numpy as np
import pytest
import torch
from torch import nn

from inr.conv_decoders import apply_transfer, conv_bias_offset, conv_transfer, kernel_dft, transfer_of
from inr.networks import ConvDecoder

# (map size, channels [C_0, …, C_L], kernel per layer): depths 1–5, non-square maps, k = 1 … 7, and a
# 5×5 kernel on a 3-row map (the kernel wraps around, as circular padding does)
CASES = [
    ((6, 9), [2, 3], [3]),
    ((8, 5), [1, 4, 2], [5, 1]),
    ((12, 7), [3, 5, 4, 1], [3, 7, 3]),
    ((16, 10), [2, 3, 3, 3, 3, 2], [3, 5, 1, 3, 3]),
    ((3, 11), [2, 2, 3], [5, 3]),
]


def cascade(channels, kernels, dtype, bias=False, seed=0):
    torch.manual_seed(seed)
    layers = [
        nn.Conv2d(channels[i], channels[i + 1], k, padding=k // 2, padding_mode="circular", bias=bias, dtype=dtype)
        for i, k in enumerate(kernels)
    ]
    net = nn.Sequential(*layers)
    with torch.no_grad():
        for conv in layers:  # weights of order one, so errors are relative to a unit-scale output
            conv.weight.normal_(0.0, 1.0 / conv.weight[0].numel() ** 0.5)
            if bias:
                conv.bias.normal_()
    return net


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("size, channels, kernels", CASES)
def test_fft_of_output_is_transfer_times_fft_of_input(size, channels, kernels, dtype, tol):
    """max |fft2(net(x)) − T fft2(x)| ≤ tol · max |fft2(net(x))| (tol 1e-5 in float32, 1e-10 in float64)."""
    net = cascade(channels, kernels, dtype)
    x = torch.randn(3, channels[0], *size, dtype=dtype)
    with torch.no_grad():
        measured = torch.fft.fft2(net(x))
    T = conv_transfer([c.weight.detach() for c in net], size)
    assert T.shape == (*size, channels[-1], channels[0])
    assert T.dtype == (torch.complex64 if dtype == torch.float32 else torch.complex128)
    predicted = apply_transfer(T, torch.fft.fft2(x))
    assert float((measured - predicted).abs().max() / measured.abs().max()) < tol
    # the same statement written as the interface gives it, for one (b, u, v)
    b, u, v = 1, size[0] - 1, size[1] // 2
    X = torch.fft.fft2(x)
    assert torch.allclose(measured[b, :, u, v], T[u, v] @ X[b, :, u, v], rtol=0, atol=tol * float(measured.abs().max()))


def test_kernel_dft_is_conjugate_numpy_fft_of_the_padded_centred_kernel():
    """Ŵ(u,v) = conj(numpy.fft.fft2(g)) with g the kernel zero-padded to H×W and rolled by −k//2 (real w)."""
    rng = np.random.default_rng(0)
    for (h, w), k in [((7, 10), 3), ((9, 9), 5), ((8, 6), 1), ((11, 13), 7)]:
        weight = rng.standard_normal((2, 3, k, k))
        g = np.zeros((2, 3, h, w))
        g[:, :, :k, :k] = weight
        g = np.roll(g, (-(k // 2), -(k // 2)), axis=(2, 3))
        reference = np.conj(np.fft.fft2(g)).transpose(2, 3, 0, 1)  # (Co, Ci, H, W) -> (H, W, Co, Ci)
        ours = kernel_dft(torch.from_numpy(weight), (h, w)).numpy()
        assert np.abs(ours - reference).max() < 1e-12


def test_biases_add_only_to_the_dc_term():
    """With biases: fft2(net(x)) = T X everywhere except DC, where H W c is added (float64, 1e-10)."""
    size, channels, kernels = (10, 6), [2, 4, 3], [3, 5]
    net = cascade(channels, kernels, torch.float64, bias=True)
    x = torch.randn(2, 2, *size, dtype=torch.float64)
    with torch.no_grad():
        measured = torch.fft.fft2(net(x))
    weights = [c.weight.detach() for c in net]
    predicted = apply_transfer(conv_transfer(weights, size), torch.fft.fft2(x))
    offset = conv_bias_offset(weights, [c.bias.detach() for c in net])
    predicted[:, :, 0, 0] += offset * size[0] * size[1]
    scale = float(measured.abs().max())
    assert float((measured - predicted).abs().max()) < 1e-10 * scale
    assert float(offset.abs().max()) > 0.1  # the bias really moved DC; without the offset the check would fail


def test_transfer_of_a_linear_circular_decoder():
    net = ConvDecoder(3, 2, width=5, depth=4, kernel_size=3, relu=False).double()
    x = torch.randn(2, 3, 9, 8, dtype=torch.float64)
    with torch.no_grad():
        measured = torch.fft.fft2(net(x))
    predicted = apply_transfer(transfer_of(net, (9, 8)), torch.fft.fft2(x))
    assert float((measured - predicted).abs().max() / measured.abs().max()) < 1e-10


def test_bad_cascades_are_refused():
    with pytest.raises(ValueError, match="odd"):
        conv_transfer([torch.randn(2, 2, 2, 2)], (4, 4))
    with pytest.raises(ValueError, match="channels"):
        conv_transfer([torch.randn(3, 2, 3, 3), torch.randn(2, 4, 3, 3)], (4, 4))
    with pytest.raises(ValueError, match="circular"):
        transfer_of(ConvDecoder(1, 1, width=2, depth=2, padding="zeros", relu=False), (4, 4))
