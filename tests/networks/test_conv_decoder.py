"""ConvDecoder: layer layout, sizes, padding and upsampling modes, initialisation statistics, bad settings."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from inr.errors import InputError
from inr.networks import ConvDecoder, ZeroInsertion


def test_layout_and_sizes():
    net = ConvDecoder(4, 3, width=6, depth=4, kernel_size=5, upsample=[1, 3], upsample_mode="bilinear", scale_factor=3)
    kinds = [type(m).__name__ for m in net]
    assert kinds == ["Conv2d", "ReLU", "Upsample", "Conv2d", "ReLU", "Conv2d", "ReLU", "Upsample", "Conv2d"]
    assert [c.in_channels for c in net.convs()] == [4, 6, 6, 6] and net.convs()[-1].out_channels == 3
    assert net.total_scale == 9
    assert net(torch.randn(2, 4, 3, 5)).shape == (2, 3, 27, 45)


def test_relu_off_and_output_activation():
    net = ConvDecoder(2, 1, width=3, depth=3, relu=False, output_activation="sigmoid")
    assert not any(isinstance(m, nn.ReLU) for m in net) and isinstance(net[-1], nn.Sigmoid)
    out = net(torch.randn(1, 2, 4, 4))
    assert bool(((out > 0) & (out < 1)).all())


@pytest.mark.parametrize("padding", ["circular", "zeros", "reflect"])
def test_padding_modes_match_explicit_padding(padding):
    """Each conv equals F.pad(mode) followed by a padding-free conv2d."""
    net = ConvDecoder(2, 2, depth=1, kernel_size=3, padding=padding, bias=False).double()
    x = torch.randn(1, 2, 5, 6, dtype=torch.float64)
    mode = {"zeros": "constant"}.get(padding, padding)
    expected = F.conv2d(F.pad(x, (1, 1, 1, 1), mode=mode), net[0].weight)
    assert torch.allclose(net(x), expected, atol=1e-12)


def test_upsampling_modes():
    x = torch.arange(4.0).reshape(1, 1, 2, 2)
    zero = ZeroInsertion(2)(x)
    assert zero[0, 0].tolist() == [[0, 0, 1, 0], [0, 0, 0, 0], [2, 0, 3, 0], [0, 0, 0, 0]]
    net = ConvDecoder(1, 1, depth=2, upsample=[1], upsample_mode="nearest")
    assert torch.equal(net[2](x), x.repeat_interleave(2, 2).repeat_interleave(2, 3))


def test_initialisation_mean_and_std():
    """Weights ~ N(mean, std²): sample mean and std of 64·64·9 = 36,864 weights within 5 standard errors;
    the default std is He's √(2 / fan_in) with ReLU and √(1 / fan_in) without; biases start at zero."""
    net = ConvDecoder(64, 64, width=64, depth=2, weight_mean=0.1, weight_std=0.05)
    w = net.convs()[1].weight.detach()
    n = w.numel()
    assert abs(float(w.mean()) - 0.1) < 5 * 0.05 / n**0.5
    assert abs(float(w.std()) - 0.05) < 5 * 0.05 / (2 * n) ** 0.5
    assert all(float(c.bias.detach().abs().max()) == 0.0 for c in net.convs())
    for relu, gain in ((True, 2.0), (False, 1.0)):
        w = ConvDecoder(64, 64, width=64, depth=2, relu=relu).convs()[1].weight.detach()
        target = (gain / (64 * 9)) ** 0.5
        assert abs(float(w.std()) - target) < 5 * target / (2 * w.numel()) ** 0.5


def test_reset_parameters_is_reproducible_with_a_generator():
    a = ConvDecoder(2, 2, width=4, depth=3)
    b = ConvDecoder(2, 2, width=4, depth=3)
    a.reset_parameters(torch.Generator().manual_seed(5))
    b.reset_parameters(torch.Generator().manual_seed(5))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize(
    "kwargs, key",
    [
        (dict(kernel_size=4), "kernel_size"),
        (dict(padding="wrap"), "padding"),
        (dict(upsample_mode="cubic"), "upsample_mode"),
        (dict(upsample=[4]), "upsample"),
        (dict(depth=0), "depth"),
        (dict(scale_factor=1), "scale_factor"),
        (dict(weight_std=-1.0), "weight_std"),
    ],
)
def test_bad_settings_name_the_key(kwargs, key):
    with pytest.raises(InputError, match=key):
        ConvDecoder(2, 2, **kwargs)
