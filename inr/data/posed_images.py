"""Posed images: the readers (NeRF's "blender" layout, an ``.npz`` of images + poses + focal), the checks that
refuse bad files in one line, and writers of the same formats.

Formats:
- **blender** (NeRF's synthetic scenes): a directory with ``transforms_train.json`` and
  ``transforms_{test,val}.json``, each ``{"camera_angle_x": fov, "frames": [{"file_path": "./train/r_0",
  "transform_matrix": 4×4}, …]}``; images are ``file_path`` + ``.png`` (RGBA, composited onto the
  background). nerfstudio's intrinsics keys ``fl_x``, ``fl_y``, ``cx``, ``cy``, ``w``, ``h`` are read when
  present (and the images must then have that size).
- **npz** (the layout of ``tiny_nerf_data.npz``): ``images`` (N, H, W, 3) in [0, 1] (or uint8),
  ``poses`` (N, 4, 4) camera-to-world, ``focal`` a scalar in pixels; every ``holdout_every``-th view is
  held out.
Poses follow ``inr.data.cameras``: camera-to-world, looking along −z.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from inr.data.cameras import Intrinsics
from inr.data.image import integers_to_unit, read_image
from inr.data.paths import check_file, resolve_data_path
from inr.errors import InputError, check_memory
from inr.io.bounded import check_npz_member, first_line, open_npz, read_json
from inr.io.files import atomic_write

# A camera's rotation block must be orthonormal to this tolerance (poses in JSON carry 6–8 digits).
ROTATION_TOLERANCE = 1e-3


@dataclass
class PosedImages:
    """Images (V, H, W, 3) in [0, 1], camera-to-world poses (V, 4, 4), shared intrinsics, which views train
    and which are held out (index tensors), and the scene's depth range, bounding cube and background."""

    images: Tensor
    poses: Tensor
    intrinsics: Intrinsics
    train_views: Tensor
    heldout_views: Tensor
    near: float
    far: float
    bound: float
    background: tuple[float, float, float]
    source: str
    depths: Optional[Tensor] = None  # ground-truth depth maps (V, H, W) when known (synthetic scenes)


def check_poses(poses: np.ndarray, source: str, names: Optional[list[str]] = None) -> Tensor:
    """Camera-to-world poses (N, 4, 4) or (N, 3, 4) -> float32 (N, 4, 4), refused in one line when any is
    not a rigid transform: wrong shape, NaN, a last row other than (0, 0, 0, 1), a singular or
    non-orthonormal rotation block."""
    poses = np.asarray(poses, dtype=np.float64)
    if poses.ndim != 3 or poses.shape[1:] not in ((4, 4), (3, 4)):
        raise InputError(f"{source}: poses must be camera-to-world matrices shaped (N, 4, 4) or (N, 3, 4), got {poses.shape}")
    label = lambda i: names[i] if names else f"pose {i}"
    bad = np.flatnonzero(~np.isfinite(poses).reshape(len(poses), -1).all(1))
    if len(bad):
        raise InputError(f"{source}: {label(bad[0])} contains NaN or infinite values")
    if poses.shape[1] == 4:
        rows = np.abs(poses[:, 3] - [0, 0, 0, 1]).max(1)
        if (rows > 1e-6).any():
            i = int(np.argmax(rows > 1e-6))
            raise InputError(f"{source}: {label(i)} has last row {poses[i, 3].tolist()}, not [0, 0, 0, 1]")
    rotation = poses[:, :3, :3]
    det = np.linalg.det(rotation)
    if (np.abs(det) < 1e-6).any():
        i = int(np.argmax(np.abs(det) < 1e-6))
        raise InputError(f"{source}: {label(i)} is not invertible (its rotation block has determinant {det[i]:.3g})")
    error = np.abs(np.transpose(rotation, (0, 2, 1)) @ rotation - np.eye(3)).max((1, 2))
    if (error > ROTATION_TOLERANCE).any():
        i = int(np.argmax(error > ROTATION_TOLERANCE))
        raise InputError(
            f"{source}: {label(i)} is not a rigid camera pose (|RᵀR − I| = {error[i]:.3g}: scaled or sheared rotation)"
        )
    full = np.tile(np.eye(4), (len(poses), 1, 1))
    full[:, :3, :] = poses[:, :3, :]
    return torch.from_numpy(full).float()


def resize_views(images: Tensor, intrinsics: Intrinsics, width: Optional[int]) -> tuple[Tensor, Intrinsics]:
    """Images (V, H, W, C) resized to ``width`` (height in proportion) by area averaging, and the intrinsics
    of the resized camera; ``None`` keeps them."""
    if width is None or width == images.shape[2]:
        return images, intrinsics
    if width < 8:
        raise InputError(f"data.resolution must be ≥ 8 pixels, got {width}")
    height = max(1, round(images.shape[1] * width / images.shape[2]))
    out = F.interpolate(images.permute(0, 3, 1, 2), size=(height, width), mode="area")  # (V, C, H, W) -> (V, C, h, w)
    return out.permute(0, 2, 3, 1).contiguous(), intrinsics.resized(height, width)


def composite_alpha(image: Tensor, background: tuple[float, float, float], source: str) -> Tensor:
    """(H, W, C) with C ∈ {3, 4} -> RGB (H, W, 3), RGBA composited onto ``background``: c' = α c + (1 − α) b."""
    if image.shape[-1] == 4:
        alpha = image[..., 3:]
        return image[..., :3] * alpha + (1 - alpha) * torch.tensor(background, dtype=image.dtype)
    if image.shape[-1] != 3:
        raise InputError(f"{source}: expected an RGB or RGBA image, got {image.shape[-1]} channels")
    return image


def _json(path: Path) -> dict:
    check_file(path, (".json",), "transforms")
    data = read_json(path, "a transforms file")  # bounded in size (before reading) and in nesting
    if not isinstance(data, dict) or not isinstance(data.get("frames"), list):
        raise InputError(f'{path}: expected an object with a list of "frames"')
    if not data["frames"]:
        raise InputError(f'{path}: "frames" is empty')
    return data


def _intrinsics(data: dict, height: int, width: int, path: Path) -> Intrinsics:
    """Intrinsics from ``fl_x``/``fl_y``/``cx``/``cy``/``w``/``h`` (nerfstudio) or ``camera_angle_x`` (NeRF),
    checked against the images' size."""
    given = (data.get("h"), data.get("w"))
    if any(v is not None for v in given) and (given[0] != height or given[1] != width):
        raise InputError(f"{path}: the images are {width}×{height} pixels but the intrinsics say w={given[1]}, h={given[0]}")
    try:
        if "fl_x" in data:
            fx = float(data["fl_x"])
            fy, cx, cy = float(data.get("fl_y", fx)), float(data.get("cx", width / 2)), float(data.get("cy", height / 2))
        elif "camera_angle_x" in data:
            fov = float(data["camera_angle_x"])
            if not 0 < fov < math.pi:
                raise InputError(f"{path}: camera_angle_x must lie in (0, π) radians, got {fov}")
            fx = fy = 0.5 * width / math.tan(0.5 * fov)
            cx, cy = width / 2, height / 2
        else:
            raise InputError(f"{path}: no intrinsics: give camera_angle_x, or fl_x (with cx, cy)")
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{path}: intrinsics must be numbers ({exc})") from None
    if not (fx > 0 and fy > 0 and math.isfinite(fx) and math.isfinite(fy)):
        raise InputError(f"{path}: focal lengths must be positive and finite, got {fx}, {fy}")
    if not (0 < cx < width and 0 < cy < height):
        raise InputError(f"{path}: principal point ({cx}, {cy}) lies outside the {width}×{height} image")
    return Intrinsics(height, width, fx, fy, cx, cy)


def evenly_spaced(count: int, keep: Optional[int]) -> Tensor:
    """``keep`` indices of range(count) spread evenly (all of them for None).

    Example:
        >>> evenly_spaced(10, 3)
        tensor([0, 4, 9])
    """
    if keep is None or keep >= count:
        return torch.arange(count)
    return torch.linspace(0, count - 1, keep).round().long()


def _frame_matrix(path: Path, k: int, frame: object) -> np.ndarray:
    """Frame ``k``'s camera-to-world matrix (4, 4), its entry checked: an object with ``file_path`` and a 4×4
    (or 3×4) numeric ``transform_matrix``."""
    if not isinstance(frame, dict) or "file_path" not in frame or "transform_matrix" not in frame:
        raise InputError(f'{path}: frame {k} needs "file_path" and "transform_matrix"')
    try:
        matrix = np.asarray(frame["transform_matrix"], dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{path}: frame {k}: transform_matrix is not a numeric matrix") from None
    if matrix.shape not in ((4, 4), (3, 4)):
        raise InputError(f"{path}: frame {k}: transform_matrix must be 4×4 (or 3×4), got shape {matrix.shape}")
    return np.concatenate([matrix[:3], [[0, 0, 0, 1]]])


def read_blender_split(
    directory: Path,
    split: str,
    background: tuple[float, float, float],
    width: Optional[int] = None,
    keep: Optional[int] = None,
) -> tuple[Tensor, Tensor, Intrinsics]:
    """Images (N, H, W, 3), poses (N, 4, 4) and intrinsics of ``transforms_{split}.json`` in ``directory``.

    Every frame's entry is checked; ``keep`` frames, evenly spaced (``evenly_spaced``; None: all), are read.
    Each is composited onto ``background`` (c' = α c + (1 − α) b: what a camera sees in front of it) and then
    resized to ``width`` pixels (height in proportion; None: as stored) by area averaging as it is read, so
    memory holds the kept frames at their final size and one frame as stored, and nothing more; the intrinsics
    are the resized camera's. The memory bound is checked from the first frame's size, before the others are read.
    """
    path = directory / f"transforms_{split}.json"
    data = _json(path)
    frames = data["frames"]
    matrices = [_frame_matrix(path, k, frame) for k, frame in enumerate(frames)]
    chosen = evenly_spaced(len(frames), keep).tolist()
    images, names = [], []
    stored: Optional[tuple[int, ...]] = None
    for k in chosen:
        frame = frames[k]
        file = directory / str(frame["file_path"])
        file = file if file.suffix.lower() == ".png" else file.with_name(file.name + ".png")
        if not file.is_file():
            raise InputError(f"{path}: frame {k}: image {file} not found")
        image = composite_alpha(read_image(file, channels="keep"), background, str(file))
        if stored is None:  # the first frame sizes them all: the camera, and the memory of the kept frames
            stored = tuple(image.shape)
            full = _intrinsics(data, image.shape[0], image.shape[1], path)
            small = resize_views(image[None], full, width)[1]
            check_memory(
                f"{path}: {len(chosen)} frames of {small.width}×{small.height}",
                len(chosen) * small.height * small.width * 3 * 4 * 2 + image.numel() * 4 * 2,
                advice="use fewer frames or a smaller data.resolution",
            )
        elif tuple(image.shape) != stored:
            raise InputError(
                f"{path}: frame {k}: {file.name} is {image.shape[1]}×{image.shape[0]} but frame {chosen[0]} is {stored[1]}×{stored[0]}"
            )
        images.append(resize_views(image[None], full, width)[0][0])  # (1, H, W, 3) -> (h, w, 3)
        names.append(f"frame {k} ({frame['file_path']})")
    poses = check_poses(np.stack([matrices[k] for k in chosen]), str(path), names)
    return torch.stack(images), poses, small


def read_blender(
    directory: Union[str, Path],
    heldout_split: str = "test",
    background: tuple[float, float, float] = (1.0, 1.0, 1.0),
    width: Optional[int] = None,
    heldout_views: Optional[int] = None,
) -> tuple[Tensor, Tensor, Intrinsics, int]:
    """The training split and the held-out split of a blender directory, training views first:
    images (N, H, W, 3), poses (N, 4, 4), intrinsics, and the number of training views. Every view is resized
    to ``width`` pixels as it is read (``read_blender_split``); ``heldout_views`` of the held-out split are
    kept, evenly spaced (None: all).

    Example (NeRF's lego scene, 100 training views of 800² and 200 test views, read at 100² with the 13 test
    views of the paper's notebook)::

        images, poses, camera, count = read_blender("data/nerf_synthetic/lego", "test", (0, 0, 0), 100, 13)
        # images (113, 100, 100, 3), count 100, camera.fx = 138.9 (555.6 at 400²)
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory (a blender scene is a directory with transforms_*.json)")
    if heldout_split not in ("test", "val"):
        raise InputError(f"data.heldout_split must be test or val, got {heldout_split!r}")
    train, train_poses, intrinsics = read_blender_split(directory, "train", background, width)
    held, held_poses, held_intrinsics = read_blender_split(directory, heldout_split, background, width, heldout_views)
    if held.shape[1:] != train.shape[1:] or held_intrinsics != intrinsics:
        raise InputError(
            f"{directory}: the {heldout_split} views' camera ({held.shape[2]}×{held.shape[1]}) differs from the training views' ({train.shape[2]}×{train.shape[1]})"
        )
    return torch.cat([train, held]), torch.cat([train_poses, held_poses]), intrinsics, len(train)


def read_npz(path: Union[str, Path]) -> tuple[Tensor, Tensor, Intrinsics]:
    """``images`` (N, H, W, 3|4), ``poses`` (N, 4|3, 4) and ``focal`` of an ``.npz`` (tiny_nerf_data's layout)."""
    path = resolve_data_path(path)
    check_file(path, (".npz",), "posed images")
    try:
        archive = open_npz(path, str(path))
        for key in archive.files:  # the views as stored, then as float32: each header checked before it is inflated
            check_npz_member(archive, key, str(path), 8, "use fewer or smaller views")
        arrays = {key: archive[key] for key in archive.files}
    except InputError:
        raise
    except Exception as exc:  # zipfile and numpy raise several types for corrupt archives
        raise InputError(f"{path}: not a readable .npz archive ({type(exc).__name__}: {first_line(exc)})") from None
    missing = [key for key in ("images", "poses", "focal") if key not in arrays]
    if missing:
        raise InputError(
            f"{path}: missing array {missing[0]!r} (needs images, poses and focal; has {', '.join(arrays) or 'nothing'})"
        )
    images = arrays["images"]
    if images.ndim != 4 or images.shape[-1] not in (3, 4):
        raise InputError(f"{path}: images must be shaped (N, H, W, 3), got {images.shape}")
    if np.issubdtype(images.dtype, np.floating) and (not np.isfinite(images).all()):
        raise InputError(f"{path}: images contain NaN or infinite values")
    if np.issubdtype(images.dtype, np.integer):
        images = integers_to_unit(images, f"{path}: images")
    elif images.min() < 0 or images.max() > 1:
        raise InputError(f"{path}: float images must lie in [0, 1], found [{images.min():.3g}, {images.max():.3g}]")
    if len(arrays["poses"]) != len(images):
        raise InputError(f"{path}: {len(images)} images but {len(arrays['poses'])} poses")
    poses = check_poses(arrays["poses"], str(path))
    focal = np.asarray(arrays["focal"], dtype=np.float64).reshape(-1)
    if focal.size != 1 or not np.isfinite(focal[0]) or focal[0] <= 0:
        raise InputError(f"{path}: focal must be one positive number (pixels), got {arrays['focal']!r}")
    height, width = images.shape[1:3]
    return torch.from_numpy(images.astype(np.float32)), poses, Intrinsics.from_focal(height, width, float(focal[0]))


def write_blender(
    directory: Union[str, Path], images: Tensor, poses: Tensor, intrinsics: Intrinsics, splits: dict[str, Tensor]
) -> Path:
    """Write views in the blender layout: ``transforms_{split}.json`` and ``{split}/r_{k}.png`` for each
    split name -> view indices; images (V, H, W, 3) in [0, 1] are stored as 8-bit RGB."""
    import imageio.v3 as iio

    directory = Path(directory)
    fov = 2 * math.atan(0.5 * intrinsics.width / intrinsics.fx)
    for split, views in splits.items():
        (directory / split).mkdir(parents=True, exist_ok=True)
        frames = []
        for k, view in enumerate(views.tolist()):
            pixels = (images[view].clamp(0, 1).numpy() * 255).round().astype(np.uint8)
            with atomic_write(directory / split / f"r_{k}.png", "wb") as f:
                iio.imwrite(f, pixels, extension=".png")
            frames.append({"file_path": f"./{split}/r_{k}", "transform_matrix": poses[view].tolist()})
        with atomic_write(directory / f"transforms_{split}.json", "w") as f:
            json.dump({"camera_angle_x": fov, "frames": frames}, f, indent=1)
    return directory


def write_npz(path: Union[str, Path], images: Tensor, poses: Tensor, focal: float) -> Path:
    """Write views in tiny_nerf_data's layout: images (N, H, W, 3) float32, poses (N, 4, 4), focal."""
    path = Path(path)
    with atomic_write(path, "wb") as f:
        np.savez(f, images=images.numpy().astype(np.float32), poses=poses.numpy().astype(np.float32), focal=np.float64(focal))
    return path
