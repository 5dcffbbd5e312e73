"""Feature spectra layer by layer: the frequency-domain prediction against fft2 of every stage's output."""

import pytest
import torch

from inr.conv_decoders import feature_spectra, linear_deviation, predict_spectra, spectrum_relative_error
from inr.networks import ConvDecoder


@pytest.mark.parametrize("mode", ["zero", "nearest"])
def test_prediction_matches_every_stage_of_a_linear_circular_decoder(mode):
    """Convs with biases and two upsampling stages on a non-square code: every stage to 1e-10 (float64)."""
    torch.manual_seed(0)
    net = ConvDecoder(
        3, 2, width=4, depth=4, kernel_size=3, upsample=[1, 3], upsample_mode=mode, relu=False, weight_mean=0.02
    ).double()
    with torch.no_grad():
        for conv in net.convs():
            conv.bias.normal_()
    x = torch.randn(2, 3, 5, 7, dtype=torch.float64)
    measured = feature_spectra(net, x)
    predicted = predict_spectra(net, torch.fft.fft2(x))
    assert [n for n, _ in measured] == [n for n, _ in predicted]
    assert measured[-1][1].shape == (2, 2, 20, 28)
    for (name, m), (_, p) in zip(measured, predicted):
        assert spectrum_relative_error(m, p) < 1e-10, name


def test_nonlinear_or_non_circular_stages_are_refused_without_linear():
    net = ConvDecoder(1, 1, width=2, depth=2).double()  # has a ReLU
    with pytest.raises(ValueError, match="per-frequency"):
        predict_spectra(net, torch.fft.fft2(torch.randn(1, 1, 4, 4, dtype=torch.float64)))
    net = ConvDecoder(1, 1, width=2, depth=2, relu=False, padding="zeros").double()
    with pytest.raises(ValueError, match="circular"):
        predict_spectra(net, torch.fft.fft2(torch.randn(1, 1, 4, 4, dtype=torch.float64)))


def test_relu_and_zero_padding_deviation_is_reported():
    """ReLU / zero / reflect padding run and their deviation from the linear circular prediction is printed;
    asserted only that the linear circular decoder itself deviates < 1e-10 and the others are finite."""
    torch.manual_seed(0)
    x = torch.randn(4, 4, 16, 16, dtype=torch.float64)
    report = {}
    for name, kwargs in {
        "linear circular": dict(relu=False),
        "relu circular": dict(relu=True),
        "linear zeros": dict(relu=False, padding="zeros"),
        "linear reflect": dict(relu=False, padding="reflect"),
        "relu zeros": dict(relu=True, padding="zeros"),
    }.items():
        torch.manual_seed(1)
        net = ConvDecoder(4, 4, width=8, depth=4, weight_mean=0.02, **kwargs).double()
        dev = linear_deviation(net, x, num_bins=4)
        report[name] = (float(dev["relative"]), [round(float(r), 3) for r in dev["power_ratio"]])
        assert torch.isfinite(dev["relative"]) and bool(torch.isfinite(dev["power_ratio"]).all())
    for name, (relative, ratio) in report.items():
        print(f"{name:16s} relative deviation {relative:.3g}  measured/linear power by band {ratio}")
    assert report["linear circular"][0] < 1e-10
