"""Feature-map spectra layer by layer: measured (fft2 of each stage's output) and predicted in the frequency
domain alone (per-frequency matrices for convs, tiling and filtering for upsampling), and their deviation.

The prediction is exact for a cascade of circular convs, zero-insertion and nearest upsampling (and biases,
which add to DC only); bilinear upsampling is predicted with a periodic border; ReLU has no per-frequency
form, so ``linear=True`` predicts the same network with its nonlinearities removed and its padding taken as
circular, which is what ``linear_deviation`` compares the real network with.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor, nn

from inr.conv_decoders.gain import radial_profile
from inr.conv_decoders.transfer import kernel_dft
from inr.conv_decoders.upsampling import upsample_spectrum
from inr.networks.conv_decoder import ZeroInsertion

# modules that act elementwise and therefore have no per-frequency form (skipped when linear=True)
_NONLINEAR = (nn.ReLU, nn.LeakyReLU, nn.Sigmoid, nn.Tanh, nn.GELU, nn.SiLU, nn.Softplus)


def stages(net: nn.Module) -> list[tuple[str, nn.Module]]:
    """The stages of a sequential network (its direct children), named ``<index>:<class>``."""
    return [(f"{i}:{type(m).__name__}", m) for i, m in enumerate(net.children())]


@torch.no_grad()
def feature_spectra(net: nn.Module, x: Tensor) -> list[tuple[str, Tensor]]:
    """fft2 of the input and of every stage's output, [(name, (B, C, H, W) complex)], stage by stage."""
    out = [("input", torch.fft.fft2(x))]
    for name, module in stages(net):
        x = module(x)
        out.append((name, torch.fft.fft2(x)))
    return out


def _upsample_mode(module: nn.Module) -> tuple[str, int]:
    if isinstance(module, ZeroInsertion):
        return "zero", module.factor
    factor = module.scale_factor
    factor = factor[0] if isinstance(factor, tuple) else factor
    if module.size is not None or float(factor) != int(factor):
        raise ValueError(f"{module}: only integer scale factors have a closed form")
    if module.mode == "nearest" or (module.mode == "bilinear" and not module.align_corners):
        return module.mode, int(factor)
    raise ValueError(f"{module}: mode {module.mode!r} (align_corners={module.align_corners}) has no closed form here")


def _conv_spectrum(conv: nn.Conv2d, spectrum: Tensor, linear: bool) -> Tensor:
    if conv.stride != (1, 1) or conv.dilation != (1, 1) or conv.groups != 1:
        raise ValueError(f"{conv}: only stride 1, dilation 1, groups 1 have a per-frequency form")
    if not linear and conv.padding_mode != "circular":
        raise ValueError(f"{conv}: padding {conv.padding_mode!r} is not circular; use linear=True for the circular prediction")
    w = kernel_dft(conv.weight.detach(), spectrum.shape[-2:])  # (H, W, Co, Ci)
    out = torch.einsum("uvoi,biuv->bouv", w, spectrum.to(w.dtype))
    if conv.bias is not None:
        dc = out[:, :, 0, 0] + conv.bias.detach().to(w.dtype) * (spectrum.shape[-2] * spectrum.shape[-1])
        out = out.clone()
        out[:, :, 0, 0] = dc
    return out


@torch.no_grad()
def predict_spectra(net: nn.Module, spectrum: Tensor, linear: bool = False) -> list[tuple[str, Tensor]]:
    """Spectra after each stage computed from fft2 of the input (B, C, H, W) alone, [(name, spectrum)].

    Args:
        net: a sequential network of ``Conv2d`` (stride 1, padding k//2), ``ZeroInsertion``,
            ``Upsample`` (integer factor, nearest or bilinear) and, with ``linear=True``, elementwise
            nonlinearities (skipped).
        spectrum: fft2 of the input.
        linear: predict the linear, circular version of ``net`` (ReLUs removed, any padding as circular)
            instead of refusing what has no per-frequency form.
    """
    out = [("input", spectrum)]
    for name, module in stages(net):
        if isinstance(module, nn.Conv2d):
            spectrum = _conv_spectrum(module, spectrum, linear)
        elif isinstance(module, (ZeroInsertion, nn.Upsample)):
            mode, factor = _upsample_mode(module)
            spectrum = upsample_spectrum(spectrum, factor, mode)
        elif isinstance(module, nn.Identity) or (linear and isinstance(module, _NONLINEAR)):
            pass
        else:
            raise ValueError(f"stage {name} has no per-frequency form; use linear=True to skip elementwise nonlinearities")
        out.append((name, spectrum))
    return out


@torch.no_grad()
def linear_deviation(net: nn.Module, x: Tensor, num_bins: int = 8) -> dict[str, Tensor]:
    """How far the real network is from its linear, circular prediction on input x (B, C, H, W).

    Returns ``relative`` = ‖F_meas − F_lin‖ / ‖F_meas‖ over all outputs and frequencies, and the radial
    profiles ``measured_power`` / ``linear_power`` (mean over batch of Σ_c |F|², per band) and their
    ratio ``power_ratio`` (< 1 where the real network weakens a band relative to the linear prediction).
    """
    measured = torch.fft.fft2(net(x))
    linear = predict_spectra(net, torch.fft.fft2(x), linear=True)[-1][1]
    relative = (measured - linear.to(measured.dtype)).abs().norm() / measured.abs().norm()
    meas_p, _ = radial_profile((measured.abs() ** 2).sum(1).mean(0), num_bins)
    lin_p, centres = radial_profile((linear.abs() ** 2).sum(1).mean(0), num_bins)
    return {
        "relative": relative,
        "measured_power": meas_p,
        "linear_power": lin_p,
        "power_ratio": meas_p / lin_p,
        "centres": centres,
    }


def spectrum_relative_error(measured: Tensor, predicted: Tensor, scale: Optional[Tensor] = None) -> float:
    """max |measured − predicted| / max |measured| (or / ``scale``): the tolerance used by the tests."""
    scale = measured.abs().max() if scale is None else scale
    return float((measured - predicted.to(measured.dtype)).abs().max() / scale)
