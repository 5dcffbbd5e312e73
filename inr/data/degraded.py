"""Images seen through a degradation: ``InpaintingDataModule`` (a pixel mask), ``SuperResolutionDataModule``
(box downsampling), and ``SimulatedMeasurementDataModule`` (any operator given in the config)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.data.image import DEFAULT_IMAGE, convert_channels, read_image, resize_image
from inr.data.measurements import MeasurementDataModule, read_array
from inr.data.paths import resolve_data_path
from inr.errors import InputError
from inr.operators.base import Operator
from inr.operators.sampling import Downsample, PixelMask
from inr.sizes import grid_size


class ImageMeasurementDataModule(MeasurementDataModule):
    """An image file as the ground truth (read and resized like ``ImageDataModule``) seen through an operator."""

    def __init__(
        self,
        path: Optional[Union[str, Path]] = None,
        resolution: Union[int, list[int], None] = 256,
        channels: Literal["rgb", "gray", "keep"] = "rgb",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.path = resolve_data_path(path) if path is not None else DEFAULT_IMAGE
        self.resolution, self.channels = resolution, channels

    def describe(self) -> str:
        return str(self.path)

    def load_values(self) -> Tensor:
        if self.resolution is not None:
            size = grid_size(self.resolution, 2)
            self.check_size(size[0] * size[1], 4, 2)
        image = resize_image(read_image(self.path, self.channels), self.resolution)  # (H, W, C)
        if float(image.max() - image.min()) == 0.0:
            raise InputError(f"{self.path}: the image is constant; nothing to reconstruct")
        return image


class InpaintingDataModule(ImageMeasurementDataModule):
    """Inpainting: only the pixels of a mask are observed (``PixelMask``). The mask is ``mask``, an (H, W)
    ``.npy`` of booleans or 0/1 matching the image after resizing, or else a random fraction ``keep`` of the
    pixels (drawn with ``seed``). Scored on the whole image, i.e. mostly on pixels never observed.

    Args:
        path, resolution, channels: the image, as in ``ImageDataModule``.
        keep: fraction of pixels observed by a random mask.
        mask: a mask file instead.
        noise_std, heldout_every, seed, eval_chunk: as in ``MeasurementDataModule`` (held out: observed pixels).
    """

    def __init__(
        self,
        path: Optional[Union[str, Path]] = None,
        resolution: Union[int, list[int], None] = 256,
        channels: Literal["rgb", "gray", "keep"] = "rgb",
        keep: float = 0.2,
        mask: Optional[Union[str, Path]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(path, resolution, channels, **kwargs)
        if not 0 < keep <= 1:
            raise InputError(f"data.keep must lie in (0, 1], got {keep}")
        self.keep, self.mask_path = keep, mask

    def build_operator(self) -> PixelMask:
        if self.mask_path is None:
            gen = torch.Generator().manual_seed(self.seed)
            return PixelMask(torch.rand(self.shape, generator=gen) < self.keep)
        mask = read_array(self.mask_path, "mask")
        if mask.shape != self.shape:
            raise InputError(f"{self.mask_path}: mask of shape {mask.shape} does not match the image's {self.shape}")
        if not np.isin(mask, (0, 1)).all() or not mask.any():
            raise InputError(f"{self.mask_path}: a mask holds booleans or 0/1 values and selects at least one pixel")
        return PixelMask(torch.from_numpy(mask.astype(bool)))


class SuperResolutionDataModule(ImageMeasurementDataModule):
    """Super-resolution: the image is observed only through its ``factor``× box-downsampled version
    (``Downsample``: each low-resolution pixel the mean of a factor×factor block); the field is fitted on
    the full-resolution grid and scored there.

    Simulated (default): ``path`` is the full-resolution image (the ground truth), downsampled here.
    Measured: ``lowres`` is your own low-resolution image (PNG/JPEG/TIFF/BMP, or an (h, w[, C]) ``.npy`` in
    [0, 1]), taken as the block means of an unknown (h·factor, w·factor) image. There is no ground truth,
    so ``val/psnr`` and ``val/ssim`` are not logged: set ``heldout_every = k`` to leave every k-th row of the
    low-resolution image out of the loss and score the field on it instead (``val/residual``,
    ``test/residual``). ``resolution`` is then the full-resolution grid, which must be the low-resolution
    size × ``factor`` (null: take it from the image).

    Args:
        path, resolution, channels: the full-resolution image, as in ``ImageDataModule``.
        factor: the downsampling factor; it must divide the image size.
        noise_std, heldout_every, seed, eval_chunk: as in ``MeasurementDataModule`` (held out: low-res rows).
        lowres: a measured low-resolution image instead of ``path``.
    """

    def __init__(
        self,
        path: Optional[Union[str, Path]] = None,
        resolution: Union[int, list[int], None] = 256,
        channels: Literal["rgb", "gray", "keep"] = "rgb",
        factor: int = 4,
        lowres: Optional[Union[str, Path]] = None,
        noise_std: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(path, resolution, channels, noise_std=noise_std, **kwargs)
        if factor < 2:
            raise InputError(f"data.factor must be ≥ 2, got {factor}")
        if lowres is not None and path is not None:
            raise InputError(
                "data.path (a full-resolution image to downsample) and data.lowres (a measured low-resolution image) exclude each other"
            )
        if lowres is not None and noise_std > 0:
            raise InputError("data.noise_std adds noise to simulated measurements; a measured data.lowres image is used as it is")
        self.factor = factor
        self.lowres_path = resolve_data_path(lowres) if lowres is not None else None
        self.has_ground_truth = lowres is None
        self._lowres: Optional[Tensor] = None

    def describe(self) -> str:
        return str(self.lowres_path or self.path)

    def load_values(self) -> Tensor:
        """The ground truth (simulated), or zeros on the full-resolution grid of a measured ``lowres`` image."""
        if self.lowres_path is None:
            return super().load_values()
        lowres = read_lowres(self.lowres_path, self.channels)  # (h, w, C)
        full = [lowres.shape[0] * self.factor, lowres.shape[1] * self.factor]
        if self.resolution is not None:
            asked = list(grid_size(self.resolution, 2))
            if asked != full:
                raise InputError(
                    f"{self.lowres_path}: a {lowres.shape[0]}×{lowres.shape[1]} image × factor {self.factor} is "
                    f"{full[0]}×{full[1]}, but data.resolution asks for {asked[0]}×{asked[1]}; set data.resolution null"
                )
        self.check_size(full[0] * full[1], lowres.shape[2], 2)
        self._lowres = lowres.permute(2, 0, 1).contiguous()  # (h, w, C) -> (C, h, w)
        return torch.zeros(*full, lowres.shape[2])

    def build_operator(self) -> Downsample:
        if any(s % self.factor for s in self.shape):
            raise InputError(
                f"data.factor {self.factor} does not divide the image size {self.shape[0]}×{self.shape[1]}; change data.resolution"
            )
        return Downsample(self.shape, self.factor)

    def load_measurements(self) -> Optional[Tensor]:
        return self._lowres


def read_lowres(path: Path, channels: Literal["rgb", "gray", "keep"]) -> Tensor:
    """A measured low-resolution image, (h, w, C) float32 in [0, 1]: an image file read like ``read_image``, or
    an (h, w) / (h, w, C) ``.npy`` already in [0, 1]; refused when constant (nothing to reconstruct)."""
    if path.suffix.lower() == ".npy":
        array = read_array(path, "low-resolution image")
        if array.ndim == 2:
            array = array[:, :, None]
        if array.ndim != 3 or array.shape[2] not in (1, 2, 3, 4) or min(array.shape[:2]) < 2:
            raise InputError(
                f"{path}: a low-resolution image is (h, w) or (h, w, C) with C ≤ 4 and sides ≥ 2, got shape {array.shape}"
            )
        if array.min() < 0 or array.max() > 1:
            raise InputError(f"{path}: low-resolution values must lie in [0, 1], found [{array.min():.3g}, {array.max():.3g}]")
        image = torch.from_numpy(convert_channels(array.astype(np.float32), channels, str(path)))
    else:
        image = read_image(path, channels)
    if float(image.max() - image.min()) == 0.0:
        raise InputError(f"{path}: the low-resolution image is constant; nothing to reconstruct")
    return image


class SimulatedMeasurementDataModule(ImageMeasurementDataModule):
    """An image seen through any operator named in the config — a new inverse problem without new data code:

    .. code-block:: yaml

        data:
          class_path: inr.data.SimulatedMeasurementDataModule
          init_args:
            path: data/astronaut.png
            operator: {class_path: mypackage.Blur, init_args: {field_shape: [128, 128], width: 3.0}}

    The operator must act on the image's grid (``operator.field_shape`` equal to the resized image's shape).
    """

    def __init__(
        self,
        operator: Operator,
        path: Optional[Union[str, Path]] = None,
        resolution: Union[int, list[int], None] = 128,
        channels: Literal["rgb", "gray", "keep"] = "rgb",
        **kwargs: Any,
    ) -> None:
        super().__init__(path, resolution, channels, **kwargs)
        self.given_operator = operator

    def build_operator(self) -> Operator:
        if tuple(self.given_operator.field_shape) != tuple(self.shape):
            raise InputError(
                f"data.operator acts on a {tuple(self.given_operator.field_shape)} grid but the image is {self.shape}"
            )
        return self.given_operator
