"""Pinhole cameras: intrinsics, camera-to-world poses, the ray through every pixel, and orbits of poses.

Conventions (NeRF's and Blender's, which the "blender" and ``.npz`` formats store): a pose is the 4×4
camera-to-world matrix [R | t] whose columns are the camera's x (right), y (up) and z (backwards) axes and its
centre in world coordinates; the camera looks along −z. Pixel (row i, column j) has its centre at image
position (j + ½, i + ½), rows counted downwards, as nerfstudio does (NeRF's released code omits the ½).

The ray through pixel (i, j) is r(t) = o + t d with o = t_cam and
d = R · ((j + ½ − c_x)/f_x, −(i + ½ − c_y)/f_y, −1), not normalised: the ray parameter t is then the depth
along the camera's viewing axis, so ``near``/``far`` and depth maps are in z-depth units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch
from torch import Tensor

from inr.errors import InputError
from inr.io.bounded import read_json


@dataclass(frozen=True)
class Intrinsics:
    """A pinhole camera's image size and focal lengths / principal point in pixels (shared by all views).

    Example:
        >>> round(Intrinsics.from_field_of_view(64, 64, math.radians(60)).fx, 6)  # f = ½W / tan(½ fov)
        55.425626
    """

    height: int
    width: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_focal(cls, height: int, width: int, focal: float) -> Intrinsics:
        """Square pixels and the principal point at the image centre (the NeRF datasets' model)."""
        return cls(int(height), int(width), float(focal), float(focal), width / 2.0, height / 2.0)

    @classmethod
    def from_field_of_view(cls, height: int, width: int, fov_x: float) -> Intrinsics:
        """f = ½ W / tan(½ fov_x), the focal of Blender's ``camera_angle_x``."""
        return cls.from_focal(height, width, 0.5 * width / math.tan(0.5 * fov_x))

    def resized(self, height: int, width: int) -> Intrinsics:
        """The same camera imaged at another resolution: focal lengths and principal point scale with the size."""
        sy, sx = height / self.height, width / self.width
        return Intrinsics(int(height), int(width), self.fx * sx, self.fy * sy, self.cx * sx, self.cy * sy)

    def as_tensor(self) -> Tensor:
        """(H, W, f_x, f_y, c_x, c_y) as float64, for storing in a checkpoint."""
        return torch.tensor([self.height, self.width, self.fx, self.fy, self.cx, self.cy], dtype=torch.float64)

    @classmethod
    def from_tensor(cls, values: Tensor) -> Intrinsics:
        h, w, fx, fy, cx, cy = values.tolist()
        return cls(int(round(h)), int(round(w)), fx, fy, cx, cy)


def camera_directions(rows: Tensor, cols: Tensor, intrinsics: Intrinsics) -> Tensor:
    """Directions in the camera frame through pixel centres: (N,) rows and columns -> (N, 3), z = −1.

    Example:
        >>> camera_directions(torch.tensor([1]), torch.tensor([1]), Intrinsics.from_focal(2, 2, 1.0))
        tensor([[ 0.5000, -0.5000, -1.0000]])
    """
    x = (cols.to(torch.float32) + 0.5 - intrinsics.cx) / intrinsics.fx
    y = -(rows.to(torch.float32) + 0.5 - intrinsics.cy) / intrinsics.fy  # image rows grow downwards, y up
    return torch.stack([x, y, -torch.ones_like(x)], dim=-1)


def pixel_rays(poses: Tensor, views: Tensor, rows: Tensor, cols: Tensor, intrinsics: Intrinsics) -> tuple[Tensor, Tensor]:
    """Rays of pixels (views, rows, cols), each (N,), of cameras ``poses`` (V, 3|4, 4) -> origins, directions (N, 3).

    All on the poses' device in one batched product, o = t_v and d = R_v d_cam (module docstring).
    """
    pose = poses[views]  # (V, 4, 4) -> (N, 4, 4): one small matrix per ray, gathered by index
    local = camera_directions(rows, cols, intrinsics).to(pose.dtype)  # (N, 3)
    directions = (pose[:, :3, :3] @ local[:, :, None])[:, :, 0]  # (N, 3, 3) @ (N, 3, 1) -> (N, 3)
    return pose[:, :3, 3].contiguous(), directions


def view_rays(pose: Tensor, intrinsics: Intrinsics) -> tuple[Tensor, Tensor]:
    """Every ray of one view, row-major: pose (3|4, 4) -> origins, directions (H·W, 3)."""
    index = torch.arange(intrinsics.height * intrinsics.width, device=pose.device)
    rows, cols = index // intrinsics.width, index % intrinsics.width
    return pixel_rays(pose[None], torch.zeros_like(index), rows, cols, intrinsics)


def look_at(eye: Tensor, target: Tensor, up: Tensor) -> Tensor:
    """Camera-to-world poses (..., 4, 4) of cameras at ``eye`` (..., 3) looking at ``target`` with ``up`` roughly up.

    z = (eye − target)/‖·‖ (the camera looks along −z), x = (up × z)/‖·‖, y = z × x.

    Example:
        >>> look_at(torch.tensor([0.0, 0.0, 4.0]), torch.zeros(3), torch.tensor([0.0, 1.0, 0.0]))[:3]
        tensor([[1., 0., 0., 0.],
                [0., 1., 0., 0.],
                [0., 0., 1., 4.]])
    """
    eye, target, up = torch.broadcast_tensors(eye, target, up)
    z = torch.nn.functional.normalize(eye - target, dim=-1)
    x = torch.nn.functional.normalize(torch.linalg.cross(up, z, dim=-1), dim=-1)
    y = torch.linalg.cross(z, x, dim=-1)
    pose = torch.zeros(*eye.shape[:-1], 4, 4, dtype=eye.dtype, device=eye.device)
    pose[..., :3, 0], pose[..., :3, 1], pose[..., :3, 2], pose[..., :3, 3] = x, y, z, eye
    pose[..., 3, 3] = 1.0
    return pose


def orbit_poses(azimuths: Tensor, elevations: Tensor, radius: float, target: Tensor | None = None) -> Tensor:
    """Cameras on a sphere of ``radius`` around ``target`` (default the origin) looking at it, z up:
    eye = target + r (cos e cos a, cos e sin a, sin e) for azimuths a and elevations e in radians, (N,) each
    -> poses (N, 4, 4)."""
    target = torch.zeros(3, dtype=azimuths.dtype) if target is None else target.to(azimuths.dtype)
    eye = target + radius * torch.stack(
        [elevations.cos() * azimuths.cos(), elevations.cos() * azimuths.sin(), elevations.sin()], -1
    )
    return look_at(eye, target, torch.tensor([0.0, 0.0, 1.0], dtype=azimuths.dtype))


def turntable_poses(frames: int, elevation_deg: float, radius: float) -> Tensor:
    """``frames`` cameras evenly around a full circle at one elevation, (frames, 4, 4), starting at azimuth 0."""
    azimuths = torch.arange(frames, dtype=torch.float32) * (2 * math.pi / frames)
    return orbit_poses(azimuths, torch.full_like(azimuths, math.radians(elevation_deg)), radius)


def spiral_poses(frames: int, radius: float, low_deg: float = 10.0, high_deg: float = 50.0, turns: float = 1.0) -> Tensor:
    """``frames`` cameras circling ``turns`` times while their elevation rises and falls once between ``low_deg``
    and ``high_deg`` (e = mid + half·sin 2πt), looking at the origin, (frames, 4, 4)."""
    t = torch.arange(frames, dtype=torch.float32) / frames
    mid, half = math.radians((low_deg + high_deg) / 2), math.radians((high_deg - low_deg) / 2)
    return orbit_poses(2 * math.pi * turns * t, mid + half * torch.sin(2 * math.pi * t), radius)


CAMERA_PATHS = ("views", "orbit", "spiral")
# as an orbit's --frames (inr.run.session) and the turntable's MAX_FRAMES: an hour at 25 fps; more is a typo, and
# rendering it would take days
MAX_CAMERA_PATH_POSES = 100_000


@dataclass(frozen=True)
class CameraPath:
    """The cameras of a camera-path file: poses (N, 4, 4); the frame rate, or None; the image size (H, W) the path
    asks for, or None (the training views'); each frame's vertical field of view in degrees (N,), or None (the
    training camera's, resized to the rendered size)."""

    poses: Tensor
    fps: Optional[float] = None
    size: Optional[tuple[int, int]] = None
    fov_y: Optional[Tensor] = None

    def intrinsics(self, height: int, width: int) -> list[Intrinsics]:
        """Each frame's camera imaged at height × width from its field of view: square pixels of focal
        f = ½H / tan(½ fov_y) and the principal point at the image centre (nerfstudio's three.js camera).

        Example:
            >>> path = CameraPath(torch.eye(4)[None], fov_y=torch.tensor([90.0]))
            >>> round(path.intrinsics(64, 80)[0].fx, 6), path.intrinsics(64, 80)[0].cx
            (32.0, 40.0)
        """
        assert self.fov_y is not None, "a camera path without fov renders with the training camera"
        return [
            Intrinsics.from_focal(height, width, 0.5 * height / math.tan(0.5 * math.radians(float(fov)))) for fov in self.fov_y
        ]


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _path_size(data: dict, head: str) -> Optional[tuple[int, int]]:
    """nerfstudio's ``render_height`` and ``render_width``: both or neither, whole numbers ≥ 1."""
    height, width = data.get("render_height"), data.get("render_width")
    if height is None and width is None:
        return None
    if not all(_number(v) and v >= 1 and float(v).is_integer() for v in (height, width)):
        raise InputError(f"{head}: render_height and render_width must be whole numbers ≥ 1, got {height} and {width}")
    return int(height), int(width)


def _path_fov(data: dict, frames: list, head: str) -> Optional[Tensor]:
    """Each frame's ``fov`` (nerfstudio: the vertical field of view in degrees), else the file's own ``fov``; None
    when no frame and not the file gives one."""
    default = data.get("fov")
    given = [frame.get("fov", default) if isinstance(frame, dict) else default for frame in frames]
    if all(fov is None for fov in given):
        return None
    for i, fov in enumerate(given):
        if not (_number(fov) and 0 < fov < 180):
            raise InputError(f"{head}: frame {i}: fov must be a vertical field of view in degrees in (0, 180), got {fov}")
    return torch.tensor(given, dtype=torch.float64)


def read_camera_path(path: str | Path) -> CameraPath:
    """The cameras of a camera-path JSON file (at most ``MAX_CAMERA_PATH_POSES``; the file at most
    ``inr.io.bounded.MAX_JSON_BYTES``, checked before it is read).

    Two layouts are read: ``{"frames": [{"camera_to_world": 4×4 or 16 numbers}, ...], "fps": 24}`` and
    nerfstudio's ``camera_path.json`` (``{"camera_path": [{"camera_to_world": 16 numbers, row-major, "fov": 50},
    ...], "render_height": 480, "render_width": 640, "fps": 24}``). Poses are in the training cameras' convention
    (OpenGL: the camera looks along −z), as both nerfstudio's and the blender scenes' are. Honoured as nerfstudio
    renders them: ``render_height`` × ``render_width`` is the image size (``--shape``/``--scale`` still replace
    it), and a frame's ``fov`` (else the file's) its vertical field of view in degrees, with square pixels and the
    principal point at the centre. Without them, the training camera's size and focal length. Only perspective
    cameras are rendered: another ``camera_type`` (fisheye, equirectangular) is refused.
    """
    file = Path(path)
    head = f"--camera_path {file}"
    if not file.exists():
        raise InputError(f"{head}: file not found (or name one of {', '.join(CAMERA_PATHS)})")
    data = read_json(file, "a camera path", label=head)
    frames = data.get("frames", data.get("camera_path")) if isinstance(data, dict) else None
    if not isinstance(frames, list) or not frames:
        raise InputError(f"{head}: expected a list of poses under 'frames' or 'camera_path'")
    if len(frames) > MAX_CAMERA_PATH_POSES:
        raise InputError(
            f"{head}: {len(frames):,} poses, more than the {MAX_CAMERA_PATH_POSES:,} a camera path may have "
            "(as --frames of an orbit); split the path"
        )
    camera_type = data.get("camera_type", "perspective")
    if camera_type != "perspective":
        raise InputError(f"{head}: camera_type {camera_type!r}; only perspective cameras are rendered here")
    poses = []
    for i, frame in enumerate(frames):
        matrix = frame.get("camera_to_world", frame.get("transform_matrix")) if isinstance(frame, dict) else None
        try:
            pose = torch.tensor(matrix, dtype=torch.float32).reshape(4, 4)
        except (TypeError, ValueError, RuntimeError):
            raise InputError(f"{head}: frame {i} has no 4×4 camera_to_world") from None
        if not torch.isfinite(pose).all():
            raise InputError(f"{head}: frame {i} holds NaN or inf")
        poses.append(pose)
    fps = data.get("fps")
    if fps is not None and not (_number(fps) and fps > 0):
        raise InputError(f"{head}: fps must be a number > 0, got {fps}")
    return CameraPath(
        torch.stack(poses), None if fps is None else float(fps), _path_size(data, head), _path_fov(data, frames, head)
    )
