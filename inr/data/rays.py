"""``RaysDataModule``: posed images served as batches of camera rays with their pixel colours.

The data is a regular grid like every other target, the pixels of all views, (V, H, W) with 3 colour
channels, so the framework's batching, splits and validation apply unchanged: a linear index is a pixel of
a view, the training split is every pixel of the training views and the held-out split every pixel of the
held-out views (each a regular (V', H, W) grid, view by view). A batch is ``batch_size`` pixels drawn at
random from the training views; ``gather`` turns their indices into rays on the device,
``{"origins": (B, 3), "directions": (B, 3), "values": (B, 3), "coords": (B, 3), "index": (B,)}``, from the
poses held there once (``coords`` is the pixel's (view, row, column) position on the grid).
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

import torch
from torch import Tensor

from inr.data.cameras import Intrinsics, pixel_rays
from inr.data.module import GridDataModule
from inr.data.paths import resolve_data_path
from inr.data.posed_images import PosedImages, evenly_spaced, read_blender, read_npz, resize_views
from inr.data.scenes import make_scene
from inr.errors import InputError

BACKGROUNDS = {"white": (1.0, 1.0, 1.0), "black": (0.0, 0.0, 0.0)}
# NeRF's depth range and nerfstudio's scene box for the synthetic (blender) scenes; tiny_nerf_data uses the same
BLENDER_NEAR, BLENDER_FAR, BLENDER_BOUND = 2.0, 6.0, 1.5
# held-out views of an .npz: every 8th, the LLFF convention (NeRF's llffhold = 8)
NPZ_HOLDOUT_EVERY = 8


class RaysDataModule(GridDataModule):
    """Random batches of rays from posed images: a synthetic scene (default), a blender directory or an ``.npz``.

    Args:
        path: a blender scene directory (``transforms_*.json`` + PNGs), an ``.npz`` of images, poses and
            focal, or ``None`` for the synthetic ``scene`` (``inr.data.scenes``), generated here.
        scene: the synthetic scene's name. views / heldout_views: its training and held-out cameras
            (random on the camera sphere, seeds ``seed`` and ``seed + 1``); for files ``heldout_views``
            keeps that many held-out views, evenly spaced (None: all).
        resolution: image width in pixels (the height in proportion); the synthetic scene is square.
        heldout_split: the blender split held out (``test`` or ``val``). holdout_every: ``.npz`` views held out.
        near, far: depth range of every ray; bound: half-side of the cube [−b, b]³ the scene lies in (the
            field's coordinates are this cube mapped to [0, 1]³); background: ``white``, ``black`` or an RGB
            triple. Each defaults to the source's convention (blender and synthetic: 2, 6, 1.5, white;
            ``.npz``: 2, 6, 1.5, black).
        batch_size: rays per training step. steps_per_epoch, eval_chunk (rays per evaluation batch), seed:
            as in ``GridDataModule``.
    """

    def __init__(
        self,
        path: Optional[str] = None,
        scene: str = "blocks",
        views: int = 100,
        heldout_views: Optional[int] = 8,
        resolution: Optional[int] = 64,
        heldout_split: Literal["test", "val"] = "test",
        holdout_every: int = NPZ_HOLDOUT_EVERY,
        near: Optional[float] = None,
        far: Optional[float] = None,
        bound: Optional[float] = None,
        background: Union[str, list[float], None] = None,
        batch_size: Optional[int] = 1024,
        eval_chunk: int = 4096,
        **kwargs: Any,
    ) -> None:
        super().__init__(split="all", batch_size=batch_size, eval_chunk=eval_chunk, **kwargs)
        if batch_size is None:
            raise InputError("data.batch_size must be a number of rays: every ray of every view at once does not fit a step")
        if views < 1 or (heldout_views is not None and heldout_views < 1) or holdout_every < 2:
            raise InputError(
                f"data.views and data.heldout_views must be ≥ 1 and data.holdout_every ≥ 2, got {views}, {heldout_views}, {holdout_every}"
            )
        if near is not None and far is not None and not 0 <= near < far:
            raise InputError(f"data.near and data.far must satisfy 0 ≤ near < far, got {near}, {far}")
        if bound is not None and not bound > 0:
            raise InputError(f"data.bound must be positive, got {bound}")
        self.path, self.scene_name, self.views, self.heldout_count = path, scene, views, heldout_views
        self.resolution, self.heldout_split, self.holdout_every = resolution, heldout_split, holdout_every
        self.near_arg, self.far_arg, self.bound_arg = near, far, bound
        self.background_arg = self._background(background)
        self._posed: Optional[PosedImages] = None

    @staticmethod
    def _background(value: Union[str, list[float], None]) -> Optional[tuple[float, float, float]]:
        if value is None:
            return None
        if isinstance(value, str):
            if value not in BACKGROUNDS:
                raise InputError(f"data.background: {value!r} is not white, black or [r, g, b]")
            return BACKGROUNDS[value]
        if len(value) != 3 or not all(0 <= float(v) <= 1 for v in value):
            raise InputError(f"data.background: an RGB triple needs three values in [0, 1], got {value}")
        return tuple(float(v) for v in value)

    # --- loading ------------------------------------------------------------------------------------
    def describe(self) -> str:
        return str(self.path) if self.path is not None else f"synthetic scene {self.scene_name!r}"

    def load_posed_images(self) -> PosedImages:
        """Read (or generate) the views; the splits, depth range, box and background with their defaults."""
        if self.path is None:
            return self._synthetic()
        path = resolve_data_path(self.path)
        if path.suffix.lower() == ".npz":
            images, poses, intrinsics = read_npz(path)
            views = torch.arange(len(images))
            held = views[views % self.holdout_every == self.holdout_every - 1]
            train = views[views % self.holdout_every != self.holdout_every - 1]
            if len(held) == 0:
                raise InputError(f"{path}: {len(images)} views hold none out at data.holdout_every={self.holdout_every}")
            background = self.background_arg or BACKGROUNDS["black"]
            images = (
                images
                if images.shape[-1] == 3
                else images[..., :3] * images[..., 3:] + (1 - images[..., 3:]) * torch.tensor(background)
            )
        elif path.is_dir() or not path.suffix:
            background = self.background_arg or BACKGROUNDS["white"]
            # each view resized as it is read, and only the kept held-out views read
            images, poses, intrinsics, count = read_blender(
                path, self.heldout_split, background, self.resolution, self.heldout_count
            )
            train, held = torch.arange(count), torch.arange(count, len(images))
        else:
            raise InputError(f"{path}: posed images are a blender directory or an .npz file, not {path.suffix!r}")
        held = held[evenly_spaced(len(held), self.heldout_count)]
        pixels = images.shape[1] * images.shape[2]
        if self.resolution is not None:  # an upsampled copy is made too: size the larger of the two
            pixels = max(pixels, self.resolution * max(1, round(images.shape[1] * self.resolution / images.shape[2])))
        self.check_size(len(images) * pixels, 3, 3)
        images, intrinsics = resize_views(images, intrinsics, self.resolution)
        return PosedImages(
            images,
            poses,
            intrinsics,
            train,
            held,
            self.near_arg if self.near_arg is not None else BLENDER_NEAR,
            self.far_arg if self.far_arg is not None else BLENDER_FAR,
            self.bound_arg or BLENDER_BOUND,
            background,
            str(path),
        )

    def _synthetic(self) -> PosedImages:
        scene = make_scene(self.scene_name, self.background_arg)
        resolution = self.resolution or 64
        if resolution < 8:
            raise InputError(f"data.resolution must be ≥ 8 pixels, got {resolution}")
        count = self.views + (self.heldout_count or 8)
        self.check_size(count * resolution * resolution, 3, 3)
        poses = torch.cat([scene.camera_poses(self.views, self.seed), scene.camera_poses(self.heldout_count or 8, self.seed + 1)])
        intrinsics = scene.intrinsics(resolution)
        images, depths = scene.render(poses, intrinsics)
        views = torch.arange(count)
        return PosedImages(
            images,
            poses,
            intrinsics,
            views[: self.views],
            views[self.views :],
            self.near_arg if self.near_arg is not None else scene.near,
            self.far_arg if self.far_arg is not None else scene.far,
            self.bound_arg or scene.bound,
            scene.background,
            self.describe(),
            depths,
        )

    @property
    def posed(self) -> PosedImages:
        if self._posed is None:
            posed = self.load_posed_images()
            if posed.near >= posed.far:
                raise InputError(f"{posed.source}: near {posed.near} must be below far {posed.far}")
            self._posed = posed
        return self._posed

    def load_values(self) -> Tensor:
        return self.posed.images  # (V, H, W, 3): the pixel grid of all views

    def _ensure_loaded(self) -> None:
        if self._values is not None:
            return
        super()._ensure_loaded()
        views, h, w = self._grid.shape
        pixels = torch.arange(h * w)

        def split(selected: Tensor) -> tuple[Tensor, tuple[int, int, int]]:
            return (selected[:, None] * (h * w) + pixels).reshape(-1), (len(selected), h, w)  # (V', H·W) -> (V'·H·W,)

        self._splits = {"train": split(self.posed.train_views), "test": split(self.posed.heldout_views)}

    # --- the cameras --------------------------------------------------------------------------------
    @property
    def intrinsics(self) -> Intrinsics:
        return self.posed.intrinsics

    @property
    def poses(self) -> Tensor:
        """Camera-to-world poses of every view (V, 4, 4)."""
        return self.posed.poses

    @property
    def image_shape(self) -> tuple[int, int]:
        return self.intrinsics.height, self.intrinsics.width

    @property
    def near(self) -> float:
        return self.posed.near

    @property
    def far(self) -> float:
        return self.posed.far

    @property
    def bound(self) -> float:
        return self.posed.bound

    @property
    def background(self) -> tuple[float, float, float]:
        return self.posed.background

    def heldout_images(self) -> Tensor:
        """The held-out views (V', 3, H, W)."""
        return self.posed.images[self.posed.heldout_views].permute(0, 3, 1, 2)

    def rays(self, index: Tensor) -> tuple[Tensor, Tensor]:
        """Origins and directions (N, 3) of pixels given by linear grid indices (N,), on the indices' device."""
        poses = self._on_device("poses", lambda: self.poses, index.device)
        h, w = self.image_shape
        view, pixel = index // (h * w), index % (h * w)
        return pixel_rays(poses, view, pixel // w, pixel % w, self.intrinsics)

    def gather(self, index: Optional[Tensor], device: torch.device) -> dict[str, Any]:
        """Colours and grid coordinates of pixels (``GridDataModule.gather``) and their rays, on ``device``."""
        if index is None:
            raise InputError("data.batch_size must be a number of rays")
        batch = super().gather(index, device)
        batch["origins"], batch["directions"] = self.rays(batch["index"])
        return batch

    def estimate_bytes(self, numel: int, channels: int, ndim: int) -> int:
        """Pixels of every view (host + device copy), split indices and one rendered copy of every view."""
        return numel * (3 * 4 * channels + 2 * 8)


def camera_distance(poses: Tensor) -> float:
    """Mean distance of the camera centres from the origin (the radius of a turntable around the scene)."""
    return float(poses[:, :3, 3].norm(dim=-1).mean())


def view_nyquist(focal: float, distance: float, bound: float) -> float:
    """ν = focal · bound / distance: the highest frequency (cycles per unit of the scene cube [−b, b]³ mapped to
    [0, 1]³) that views of ``focal`` pixels resolve at the scene's centre, ``distance`` away — half a cycle per
    pixel, a pixel spanning distance/focal world units there, the cube 2b.

    Example:
        >>> round(view_nyquist(555.5555, 4.031, 1.5), 1)   # the lego views of 3d_simple_nerf.ipynb, 400²
        206.7
    """
    return focal * bound / distance
