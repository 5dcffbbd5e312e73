"""One codec's rate–distortion points on one image: at each setting, bpp = file bytes · 8 / pixels (every byte,
headers included), PSNR and MS-SSIM of the decoded 8-bit pixels, encode and decode seconds.

PSNR = 10 log₁₀(255² / MSE) dB, the MSE over every pixel and channel of the 8-bit values. MS-SSIM is torchmetrics'
(five scales, 11-tap Gaussian window, data range 1 on the pixels / 255, in float32), NaN on an image side under
``MS_SSIM_MIN_SIDE``. The keys are CompressAI's (its ``results``): ``bpp``, ``psnr``, ``ms-ssim``,
``encoding_time``, ``decoding_time``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np

from inr.errors import InputError
from inr.experiments.rd_codecs import get

METRICS = ("bpp", "psnr", "ms-ssim", "encoding_time", "decoding_time")
# torchmetrics refuses five scales of an 11-tap window unless side // (5 − 1)² > 11 − 1: the least side is 11 · 16
MS_SSIM_MIN_SIDE = 176


def psnr_8bit(decoded: np.ndarray, original: np.ndarray) -> float:
    """10 log₁₀(255² / mean((d − o)²)) dB over every pixel and channel of two 8-bit images; +∞ when equal.

    Example:
        >>> a = np.zeros((2, 2, 3), np.uint8)
        >>> round(psnr_8bit(a + 1, a), 2), psnr_8bit(a, a)
        (48.13, inf)
    """
    from inr.metrics import psnr_from_mse  # with torch: imported when a curve is measured, not by --help

    diff = decoded.astype(np.float64) - original.astype(np.float64)
    return psnr_from_mse(float(np.mean(diff * diff)), data_range=255.0)


def ms_ssim(decoded: np.ndarray, original: np.ndarray) -> float:
    """MS-SSIM of two 8-bit (H, W, C) images by torchmetrics, on values / 255 with data range 1; NaN when a side is
    under ``MS_SSIM_MIN_SIDE``.

    In float32: torch's float64 convolutions take 30× as long on a CPU (2 s against 0.07 s on a 256² crop), and the
    two agree to within 1e-5 (8e-7 on a 256² photo crop, 2e-6 on a noisy 176² one), below the four decimals a
    table shows.
    """
    if min(original.shape[:2]) < MS_SSIM_MIN_SIDE:
        return math.nan
    import torch
    from torchmetrics.functional.image import multiscale_structural_similarity_index_measure

    def tensor(x: np.ndarray) -> torch.Tensor:  # (H, W, C) uint8 -> (1, C, H, W) in [0, 1]
        return torch.from_numpy(x.astype(np.float32) / 255.0).permute(2, 0, 1)[None]

    return float(multiscale_structural_similarity_index_measure(tensor(decoded), tensor(original), data_range=1.0))


def curve(
    pixels: np.ndarray,
    codec: str,
    points: Optional[Sequence[float]] = None,
    keep: Optional[Callable[[float, bytes], None]] = None,
) -> dict[str, list[float]]:
    """``codec``'s points on 8-bit ``pixels`` (H, W, C ∈ {1, 3}) at each of ``points`` (its default settings
    when None): {metric: one value per point} for each of ``METRICS``; ``keep(point, file bytes)`` is given each
    point's file.

    Example:
        >>> flat = np.full((16, 16, 3), 100, np.uint8)  # a flat 16² image: its 285-byte files are nearly all header
        >>> c = curve(flat, "jpeg", [50, 90])
        >>> c["bpp"], c["psnr"][0] > 40, c["ms-ssim"]
        ([8.90625, 8.90625], True, [nan, nan])
    """
    entry = get(codec)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] not in (1, 3):
        raise InputError(f"{codec}: expected 8-bit (H, W, 1 or 3) pixels, got {pixels.dtype} {pixels.shape}")
    out: dict[str, list[float]] = {m: [] for m in METRICS}
    count = pixels.shape[0] * pixels.shape[1]
    settings = list(entry.points if points is None else points)
    together = entry.run_points(pixels, settings) if entry.run_points is not None else None  # one run makes every file
    for i, point in enumerate(settings):
        start = time.perf_counter()
        result = entry.run(pixels, point) if together is None else together[i]
        wall = time.perf_counter() - start
        data, decoded = result[0], np.asarray(result[1])
        encode, decode = (result[2], result[3]) if len(result) >= 4 else (wall, math.nan)
        if decoded.shape != pixels.shape:
            raise ValueError(f"{codec} at {point}: decoded {decoded.shape}, the image is {pixels.shape}")
        if keep is not None:
            keep(point, bytes(data))
        out["bpp"].append(8 * len(data) / count)
        out["psnr"].append(psnr_8bit(decoded, pixels))
        out["ms-ssim"].append(ms_ssim(decoded, pixels))
        out["encoding_time"].append(float(encode))
        out["decoding_time"].append(float(decode))
    return out
