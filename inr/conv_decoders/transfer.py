"""Per-frequency transfer matrices of circular-padding convolution cascades, computed from the weights.

Convention (PyTorch ``conv2d``: cross-correlation, odd k, padding p = k//2, circular): a layer computes
y_o[n] = Σ_i Σ_{a,b} w[o, i, a, b] x_i[n + (a − p, b − p)], indices mod (H, W). With the DFT
X[u, v] = Σ_n x[n] e^{−2πi (u n_0 / H + v n_1 / W)} (``torch.fft.fft2``) this becomes, frequency by
frequency, Y[u, v] = Ŵ(u, v) X[u, v] with

    Ŵ(u, v)_{oi} = Σ_{a,b} w[o, i, a, b] e^{+2πi (u (a − p) / H + v (b − p) / W)},

the DFT (with conjugate phase, because it is a correlation) of the kernel zero-padded to H×W and centred
at the origin by the shift −p. A cascade multiplies these: T(u, v) = Ŵ_L(u, v) ⋯ Ŵ_1(u, v). Biases add
only to the DC term: fft2(net(x))[:, 0, 0] = T(0, 0) X[:, 0, 0] + H W c (``conv_bias_offset``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

import torch
from torch import Tensor, nn


def _complex_dtype(t: Tensor) -> torch.dtype:
    return torch.complex128 if t.dtype in (torch.float64, torch.complex128) else torch.complex64


def _check_kernel(weight: Tensor, index: int) -> None:
    if weight.ndim != 4:
        raise ValueError(f"weights[{index}]: expected a conv kernel (C_out, C_in, k, k), got shape {tuple(weight.shape)}")
    kh, kw = weight.shape[-2:]
    if kh % 2 == 0 or kw % 2 == 0:
        raise ValueError(f"weights[{index}]: kernel size {kh}×{kw} must be odd (padding k//2 keeps the map size)")


def centred_phase(n: int, k: int, dtype: torch.dtype, device: Optional[torch.device] = None) -> Tensor:
    """E[u, a] = e^{+2πi u (a − k//2) / n}: the phase of tap a at frequency u, (n, k).

    Example:
        >>> torch.allclose(centred_phase(4, 3, torch.complex128)[1], torch.tensor([-1j, 1, 1j], dtype=torch.complex128))
        True
    """
    u = torch.arange(n, dtype=torch.float64, device=device)[:, None]
    d = torch.arange(k, dtype=torch.float64, device=device)[None, :] - k // 2
    # reduce u·d mod n in integers first, so the phase stays exact for large maps
    angle = 2 * math.pi * torch.remainder(u * d, n) / n
    return torch.polar(torch.ones_like(angle), angle).to(dtype)


def kernel_dft(weight: Tensor, size: Sequence[int]) -> Tensor:
    """Ŵ(u, v) of one layer: (C_out, C_in, k, k) -> complex (H, W, C_out, C_in).

    A kernel larger than the map wraps around (taps at offsets equal mod H add), as circular padding does.

    Example:
        >>> w = torch.zeros(1, 1, 3, 3, dtype=torch.float64); w[0, 0, 1, 2] = 1.0  # y[n] = x[n + (0, 1)]
        >>> shift = kernel_dft(w, (1, 4))[0, :, 0, 0]  # a shift by one column: e^{+2πi v / 4}
        >>> torch.allclose(shift, torch.tensor([1, 1j, -1, -1j], dtype=torch.complex128))
        True
    """
    _check_kernel(weight, 0)
    h, w = int(size[0]), int(size[1])
    dtype = _complex_dtype(weight)
    eh = centred_phase(h, weight.shape[-2], dtype, weight.device)  # (H, k)
    ew = centred_phase(w, weight.shape[-1], dtype, weight.device)  # (W, k)
    return torch.einsum("ua,vb,oiab->uvoi", eh, ew, weight.to(dtype))


def conv_transfer(weights: Sequence[Tensor], size: Sequence[int]) -> Tensor:
    """T(u, v) = Ŵ_L(u, v) ⋯ Ŵ_1(u, v) of a circular, ReLU-free, bias-free cascade, complex
    (H, W, C_out_last, C_in_first), so that ``fft2(net(x))[b, :, u, v] == T[u, v] @ fft2(x)[b, :, u, v]``.

    Args:
        weights: the kernels (C_out, C_in, k, k) in the order the layers run; odd k; channels must chain.
        size: (H, W) of the feature maps.

    Example:
        >>> w1, w2 = torch.randn(4, 2, 3, 3, dtype=torch.float64), torch.randn(3, 4, 5, 5, dtype=torch.float64)
        >>> T = conv_transfer([w1, w2], (6, 7))
        >>> T.shape, torch.allclose(T[0, 0], (w2.sum((2, 3)) @ w1.sum((2, 3))).to(T.dtype))  # DC: Σ of taps
        (torch.Size([6, 7, 3, 2]), True)
    """
    if len(weights) == 0:
        raise ValueError("conv_transfer needs at least one kernel")
    transfer: Optional[Tensor] = None
    for index, weight in enumerate(weights):
        _check_kernel(weight, index)
        if transfer is not None and weight.shape[1] != transfer.shape[-2]:
            raise ValueError(
                f"weights[{index}] takes {weight.shape[1]} channels but the previous layer gives {transfer.shape[-2]}"
            )
        layer = kernel_dft(weight, size)
        transfer = layer if transfer is None else layer @ transfer.to(layer.dtype)  # (H, W, Co, Ci) batched
    return transfer


def conv_bias_offset(weights: Sequence[Tensor], biases: Sequence[Optional[Tensor]]) -> Tensor:
    """The constant c the biases add to the output of a circular, ReLU-free cascade, (C_out_last,).

    c_0 = 0, c_l = Ŵ_l(0, 0) c_{l−1} + b_l with Ŵ_l(0, 0) = Σ_{a,b} w_l[:, :, a, b]; in the spectrum only the
    DC term moves: fft2(net(x))[:, 0, 0] = T(0, 0) X[:, 0, 0] + H W c.
    """
    offset = torch.zeros(weights[0].shape[1], dtype=weights[0].dtype, device=weights[0].device)
    for weight, bias in zip(weights, biases):
        offset = weight.sum(dim=(2, 3)) @ offset
        if bias is not None:
            offset = offset + bias
    return offset


def apply_transfer(transfer: Tensor, spectrum: Tensor) -> Tensor:
    """Y[b, :, u, v] = T[u, v] @ X[b, :, u, v]: (H, W, Co, Ci) × (B, Ci, H, W) -> (B, Co, H, W)."""
    return torch.einsum("uvoi,biuv->bouv", transfer, spectrum.to(transfer.dtype))


def circular_convs(net: nn.Module, require_circular: bool = True) -> list[nn.Conv2d]:
    """The ``nn.Conv2d`` layers of ``net`` in order, checked to fit ``conv_transfer``'s convention
    (stride 1, dilation 1, groups 1, padding k//2 and, with ``require_circular``, circular padding)."""
    convs = [m for m in net.modules() if isinstance(m, nn.Conv2d)]
    for i, conv in enumerate(convs):
        k = conv.kernel_size
        if conv.stride != (1, 1) or conv.dilation != (1, 1) or conv.groups != 1:
            raise ValueError(f"conv layer {i}: only stride 1, dilation 1, groups 1 are supported")
        if tuple(conv.padding) != (k[0] // 2, k[1] // 2) or k[0] % 2 == 0 or k[1] % 2 == 0:
            raise ValueError(f"conv layer {i}: needs an odd kernel with padding k//2, got k={k} padding={conv.padding}")
        if require_circular and conv.padding_mode != "circular":
            raise ValueError(
                f"conv layer {i}: padding {conv.padding_mode!r} is not circular; the transfer matrix is exact only for circular padding"
            )
    return convs


def transfer_of(net: nn.Module, size: Sequence[int]) -> Tensor:
    """``conv_transfer`` of the conv layers of a circular-padding network without upsampling (ReLUs and
    biases, if any, are ignored: this is the linear, bias-free part)."""
    return conv_transfer([c.weight.detach() for c in circular_convs(net)], size)
