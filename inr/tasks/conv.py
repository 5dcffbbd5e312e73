"""``ConvFitting``: an image represented by a convolutional decoder applied to a fixed input code."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Literal, Optional, Union

import torch
import torch.nn.functional as F
from lightning.pytorch.cli import LRSchedulerCallable, OptimizerCallable
from torch import Tensor

from inr.errors import InputError
from inr.networks.conv_decoder import ConvDecoder
from inr.tasks.base import NetworkFactory
from inr.tasks.image import ImageFitting


def nearest_indices(coords: Tensor, shape: Sequence[int]) -> Tensor:
    """Linear indices of the grid samples nearest to coordinates (N, 2) on a periodic [0,1)² grid of
    ``shape``: i = round(v · N) mod N per axis (so grid coordinates v = i / N map to themselves).

    Example:
        >>> nearest_indices(torch.tensor([[0.0, 0.0], [0.5, 0.75], [0.99, 0.1]]), (4, 4)).tolist()
        [0, 11, 0]
    """
    sizes = torch.tensor(shape, device=coords.device)
    ij = torch.remainder(torch.round(coords * sizes).long(), sizes)  # (N, 2)
    return ij[:, 0] * shape[1] + ij[:, 1]


class ConvFitting(ImageFitting):
    """f = g_θ(z): a ConvDecoder g_θ maps a fixed code z (B=1, C_z, h, w) to the whole image (C, H, W);
    trained with MSE on the training pixels of the split only, scored like ``ImageFitting`` (PSNR, SSIM
    on the held-out pixels), so it is compared with coordinate MLPs on the same image and split.

    As a field over [0,1)², f(v) is the output pixel nearest to v (periodic, like circular padding): the
    task overrides only ``field``, so ``predict(coords)`` and the held-out metrics read the decoder's output
    at the held-out pixels, and ``render(shape)`` at another resolution samples it nearest-neighbour.

    Args:
        network: ``(code_channels, out_channels) -> nn.Module`` mapping (1, C_z, h, w) to (1, C, H, W);
            default a ReLU ``ConvDecoder(width=64, depth=4, output_activation="sigmoid")``.
        out_channels: image channels (linked to the data by the CLI).
        code: ``noise`` (z ~ N(0, code_std²), seeded by ``code_seed``) or ``lowres`` (the training pixels
            of the target, area-resampled to h×w: a low-resolution image that never sees held-out pixels;
            it has ``out_channels`` channels and ``code_channels`` is ignored).
        code_channels: C_z of a noise code.
        code_size: (h, w) of the code; default the image size divided by the network's ``total_scale``
            (the upsampling factor of a ``ConvDecoder``, 1 for other networks).
        code_std, code_seed: scale and seed of a noise code.
        optimizer, scheduler: as in ``INRModule``.
    """

    def __init__(
        self,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 3,
        code: Literal["noise", "lowres"] = "noise",
        code_channels: int = 32,
        code_size: Union[int, list[int], None] = None,
        code_std: float = 1.0,
        code_seed: int = 0,
        optimizer: OptimizerCallable = torch.optim.Adam,
        scheduler: Optional[LRSchedulerCallable] = None,
    ) -> None:
        if code not in ("noise", "lowres"):
            raise InputError(f"model.code: unknown code {code!r}; choose noise or lowres")
        if code_channels < 1:
            raise InputError(f"model.code_channels must be ≥ 1, got {code_channels}")
        factory = network or partial(ConvDecoder, width=64, depth=4, output_activation="sigmoid")
        in_channels = out_channels if code == "lowres" else code_channels
        super().__init__(
            network=lambda _in_dim, out_dim: factory(in_channels, out_dim),
            out_channels=out_channels,
            optimizer=optimizer,
            scheduler=scheduler,
        )
        self.code_kind, self.code_channels, self.code_size_arg = code, in_channels, code_size
        self.code_std, self.code_seed = code_std, code_seed
        # the code is rebuilt from its seed or from the data in setup, so it is not part of the checkpoint
        self.register_buffer("code", torch.empty(0), persistent=False)

    # --- the code -----------------------------------------------------------------------------------
    def code_shape(self) -> tuple[int, int]:
        """(h, w) of the code: ``code_size`` or the image size divided by the network's upsampling factor."""
        if self.code_size_arg is not None:
            size = [self.code_size_arg] * 2 if isinstance(self.code_size_arg, int) else list(self.code_size_arg)
            if len(size) != 2 or min(size) < 1:
                raise InputError(f"model.code_size must be an int or [h, w] ≥ 1, got {self.code_size_arg}")
            return int(size[0]), int(size[1])
        scale = int(getattr(self.network, "total_scale", 1))
        h, w = self.grid_shape
        if h % scale or w % scale:
            raise InputError(
                f"model.network upsamples by {scale}, which does not divide the image size {h}×{w}; set model.code_size or data.resolution"
            )
        return h // scale, w // scale

    def make_code(self) -> Tensor:
        """The fixed input (1, C_z, h, w) on this module's device."""
        h, w = self.code_shape()
        if self.code_kind == "noise":
            gen = torch.Generator().manual_seed(self.code_seed)
            return (torch.randn(1, self.code_channels, h, w, generator=gen) * self.code_std).to(self.device)
        dm = self.data
        train = dm.values_grid(dm.train_index, dm.train_shape)[None]  # (1, C, h_train, w_train)
        shrink = h <= train.shape[-2] and w <= train.shape[-1]
        mode = {"mode": "area"} if shrink else {"mode": "bilinear", "align_corners": False}
        return F.interpolate(train, size=(h, w), **mode).to(self.device)

    def setup(self, stage: str) -> None:
        super().setup(stage)
        if getattr(self.trainer, "datamodule", None) is None:
            return
        if self.data.ndim != 2:
            raise InputError(f"{type(self).__name__} fits 2D images; the data is {self.data.ndim}-D")
        self.code = self.make_code()
        with torch.no_grad():
            out_shape = tuple(self.network(self.code).shape)
        expected = (1, self.out_channels, *self.grid_shape)
        if out_shape != expected:
            raise InputError(
                f"model.network maps the code {tuple(self.code.shape)} to {out_shape}, not the image's {expected}; check model.code_size and the network's upsample stages"
            )

    # --- the field ----------------------------------------------------------------------------------
    def decode(self) -> Tensor:
        """Raw decoder output on the data's grid, (C, H, W)."""
        if self.code.numel() == 0:
            raise RuntimeError(
                "ConvFitting has no code yet: attach it to a Trainer with an image DataModule (setup builds the code)"
            )
        return self.network(self.code.to(self.device))[0]

    def field(self, batch: dict[str, Any]) -> Tensor:
        """Raw decoder output at the grid samples nearest to ``batch["coords"]`` (N, 2) -> (N, C): the whole
        image is decoded once per call and read at the batch's grid indices (or, for arbitrary coordinates,
        at their nearest grid samples), so training, ``predict`` and ``render`` share this one hook."""
        index = batch.get("index")
        if index is None:
            index = nearest_indices(batch["coords"], self.grid_shape)
        return self.decode().flatten(1)[:, index].T  # (C, H, W) -> (C, H·W) -> (N, C)
