"""``RadianceFieldFitting``: a 3D field of density and colour learned from posed images through volume rendering.

The field is the framework's coordinate network on the scene's cube mapped to [0, 1]³,
(σ, c)(x) = decode(network(encoder((x + b)/2b))), σ = ReLU (or softplus / exp) of the first output, c = the
sigmoid of the others; it has no view dependence (the simplified NeRF of Tancik et al. 2020, 3d_simple_nerf
notebook). It is observed only through the volume-rendering operator (``inr.operators.rendering``), so the
step is the framework's ``loss(measure(field(batch), batch), values)`` with ``field`` returning the field as
a function of points: the renderer decides where along each ray to query it.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torchmetrics import MetricCollection

from inr.data.cameras import CameraPath, Intrinsics, spiral_poses, turntable_poses, view_rays
from inr.data.rays import RaysDataModule, evenly_spaced
from inr.encoders import Encoder
from inr.errors import InputError, check_memory
from inr.io.progress import advance
from inr.metrics import PSNR, psnr, ssim
from inr.modes import eval_mode
from inr.operators.rendering import VolumeRenderer
from inr.tasks.base import INRModule, NetworkFactory
from inr.tasks.memory import activation_bytes_per_point

# render() of a field without its data (loaded from a checkpoint): this many views of an orbit at ORBIT_ELEVATION
# degrees around the scene, at the training cameras' mean distance
ORBIT_VIEWS, ORBIT_ELEVATION = 8, 30.0

DENSITY_ACTIVATIONS = {
    "relu": F.relu,  # NeRF and the Fourier-features notebook
    "softplus": F.softplus,  # smooth, never "dead"; mip-NeRF uses softplus(x − 1)
    "exp": lambda x: torch.exp(x.clamp_max(15.0)),  # instant-ngp's truncated exponential, clamped against overflow
}


class RadianceFieldFitting(INRModule):
    """A radiance field fitted to posed images (``RaysDataModule``) by volume rendering; see the module docstring.

    Loss: Σ_passes mean ‖C(r) − C_gt(r)‖² over the batch's rays (NeRF eq. 6: coarse + fine with
    hierarchical sampling). Metrics: PSNR of the training rays (``train/psnr``), PSNR of every held-out pixel
    (``val/psnr``) and SSIM of the held-out views (``val/ssim``); the final summary also scores up to
    ``eval_train_views`` whole training views.

    Args:
        encoder, network, optimizer, scheduler, compile: as in ``INRModule``; the encoder takes 3-D points
            (``in_dim: 3``), the network ends without an activation (it outputs σ and colour logits).
        out_channels: colour channels (linked to the data's 3).
        render_chunk: rays per forward pass when rendering views (bounds evaluation memory).
        samples, importance_samples: the renderer's stratified samples per ray and the hierarchical pass's.
        perturb: jitter the samples inside their bins while training (NeRF's stratified sampling).
        density_activation: ``relu``, ``softplus`` or ``exp``.
        eval_train_views: training views rendered whole for the closing summary's ``train/psnr``.
        sampling_seed: the jitter of step k is drawn from a generator seeded by (sampling_seed, k, rank), so
            a resumed run draws what an uninterrupted one would.
    """

    default_in_dim = 3
    default_output_activation = "none"

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 3,
        *,
        render_chunk: int = 4096,
        cache_encoding: bool = False,
        samples: int = 64,
        importance_samples: int = 0,
        perturb: bool = True,
        density_activation: Literal["relu", "softplus", "exp"] = "relu",
        eval_train_views: int = 8,
        sampling_seed: int = 0,
        **kwargs: Any,
    ) -> None:
        if density_activation not in DENSITY_ACTIVATIONS:
            raise InputError(
                f"model.density_activation: unknown {density_activation!r}; choose one of {', '.join(DENSITY_ACTIVATIONS)}"
            )
        if eval_train_views < 1:
            raise InputError(f"model.eval_train_views must be ≥ 1, got {eval_train_views}")
        # the network outputs density and colour: one channel more than the images
        super().__init__(encoder, network, out_channels + 1, render_chunk=render_chunk, cache_encoding=cache_encoding, **kwargs)
        self.out_channels = out_channels
        if any(isinstance(m, nn.Sigmoid) for m in list(self.network.modules())[-1:]):
            raise InputError(
                "model.network: the radiance field decodes density and colour from raw outputs; use output_activation: none"
            )
        self.renderer = VolumeRenderer(samples, importance_samples)
        self.perturb, self.density_activation = perturb, density_activation
        self.eval_train_views, self.sampling_seed = eval_train_views, sampling_seed
        # the scene, copied from the data when training starts and kept in checkpoints, so that a trained field
        # renders on its own (inr.export.radiance_turntable): cube corners, [near, far], background, camera, orbit radius
        self.register_buffer("scene_box", torch.tensor([[-1.5] * 3, [1.5] * 3]))
        self.register_buffer("depth_range", torch.tensor([2.0, 6.0]))
        self.register_buffer("background", torch.ones(out_channels))
        self.register_buffer("camera", Intrinsics.from_focal(64, 64, 64.0).as_tensor())
        self.register_buffer("orbit_radius", torch.tensor(4.0))

    # --- the field ----------------------------------------------------------------------------------
    def decode(self, raw: Tensor) -> tuple[Tensor, Tensor]:
        """Network outputs (..., 1 + C) -> density σ ≥ 0 (...) and colour in (0, 1) (..., C)."""
        return DENSITY_ACTIVATIONS[self.density_activation](raw[..., 0]), torch.sigmoid(raw[..., 1:])

    def query(self, points: Tensor) -> tuple[Tensor, Tensor]:
        """(σ, c) at world points (..., 3): the cube [lo, hi] is mapped to [0, 1]³ for the encoder."""
        lo, hi = self.scene_box
        v = ((points - lo) / (hi - lo)).reshape(-1, 3)  # (..., 3) -> (N, 3)
        raw = self._network_fn(self.encoder(v))  # (N, 1 + C)
        return self.decode(raw.reshape(*points.shape[:-1], raw.shape[-1]))

    def field(self, batch: dict[str, Any]):
        """The field as a function of points (``query``): the renderer chooses where to evaluate it."""
        return self.query

    def forward(self, points: Tensor) -> Tensor:
        """[σ, c] at world points (N, 3) -> (N, 1 + C)."""
        density, colour = self.query(points)
        return torch.cat([density[..., None], colour], dim=-1)

    def coordinate_network(self) -> None:
        return None  # the field is observed through rendering, not sampled at the batch's coordinates

    # --- the measurement ----------------------------------------------------------------------------
    def measure(self, field, batch: dict[str, Any]) -> Tensor:
        """C(r) of the batch's rays by volume rendering -> (passes, B, C)."""
        generator = self._sampling_generator() if self.training and self.perturb else None
        return self._render(field, batch["origins"], batch["directions"], generator).rgb

    def _render(self, field, origins: Tensor, directions: Tensor, generator: Optional[torch.Generator] = None):
        near, far = self.depth_range
        return self.renderer(field, origins, directions, near, far, self.scene_box, self.background, generator)

    def _sampling_generator(self) -> torch.Generator:
        generator = torch.Generator(device=self.device)
        generator.manual_seed((self.sampling_seed * 1_000_003 + self.global_step) * 65_537 + self.global_rank)
        return generator

    def loss(self, raw: Tensor, target: Tensor) -> Tensor:
        """L = Σ_passes mean (C − C_gt)²."""
        return (raw - target).square().mean(dim=(1, 2)).sum()

    def postprocess(self, raw: Tensor) -> Tensor:
        return raw

    def postprocess_measurement(self, raw: Tensor) -> Tensor:
        return raw[-1].clamp(0.0, 1.0)  # the last (fine) pass

    def make_metrics(self) -> MetricCollection:
        return MetricCollection({"psnr": PSNR(data_range=1.0)})

    def on_heldout_grid(self, pred: Tensor, target: Tensor) -> dict[str, float]:
        value = ssim(pred.transpose(0, 1), target.transpose(0, 1), name="val/ssim")  # (C, V, H, W) -> (V, C, H, W)
        return {} if value is None else {"ssim": value}

    # --- rendering ----------------------------------------------------------------------------------
    @torch.no_grad()
    def render_rays(
        self, origins: Tensor, directions: Tensor, chunk: Optional[int] = None, done: int = 0, total: Optional[int] = None
    ) -> dict[str, Tensor]:
        """Colour (N, C), expected depth (N,) and opacity (N,) of rays (N, 3), ``chunk`` rays at a time; a command
        waiting on them sees how far they are (``inr.io.progress.advance``: ``done`` rays of ``total`` before these)."""
        chunk = chunk or self.render_chunk
        if chunk < 1:
            raise InputError(f"render chunk must be ≥ 1 rays, got {chunk}")
        total = len(origins) if total is None else total
        parts = []
        for start in range(0, len(origins), chunk):
            parts.append(self._render(self.query, origins[start : start + chunk], directions[start : start + chunk]))
            advance(done + min(start + chunk, len(origins)), total)
        return {
            "rgb": torch.cat([p.rgb[-1] for p in parts]).clamp(0, 1),
            "depth": torch.cat([p.depth for p in parts]),
            "opacity": torch.cat([p.opacity for p in parts]),
        }

    @property
    def intrinsics(self) -> Intrinsics:
        return Intrinsics.from_tensor(self.camera)

    @torch.no_grad()
    def render_view(
        self, pose: Tensor, intrinsics: Optional[Intrinsics] = None, done: int = 0, total: Optional[int] = None
    ) -> dict[str, Tensor]:
        """The view of camera-to-world ``pose`` (4, 4): colour (C, H, W), depth (H, W), opacity (H, W).
        ``intrinsics`` default to the training camera's; ``done``/``total``: rays, for the progress line."""
        intrinsics = intrinsics or self.intrinsics
        origins, directions = view_rays(pose.to(self.device, torch.float32), intrinsics)
        out = self.render_rays(origins, directions, done=done, total=total)
        h, w = intrinsics.height, intrinsics.width
        return {
            "rgb": out["rgb"].T.reshape(-1, h, w),
            "depth": out["depth"].reshape(h, w),
            "opacity": out["opacity"].reshape(h, w),
        }

    @torch.no_grad()
    def render_views(
        self,
        poses: Tensor,
        intrinsics: Union[Intrinsics, list[Intrinsics], None] = None,
        done: int = 0,
        total: Optional[int] = None,
    ) -> dict[str, Tensor]:
        """``render_view`` of every pose (V, 4, 4), stacked: colour (V, C, H, W), depth and opacity (V, H, W);
        ``intrinsics`` one camera for all, or one per pose (of one image size). The rays are counted for the
        progress line of a command waiting on them (``done`` of ``total`` before these, default all of them)."""
        cameras = [c or self.intrinsics for c in (intrinsics if isinstance(intrinsics, list) else [intrinsics] * len(poses))]
        sizes = [c.height * c.width for c in cameras]
        total = done + sum(sizes) if total is None else total
        views = []
        for i, (pose, camera) in enumerate(zip(poses, cameras)):
            views.append(self.render_view(pose, camera, done=done + sum(sizes[:i]), total=total))
        return {key: torch.stack([v[key] for v in views]) for key in ("rgb", "depth", "opacity")}

    def has_data(self) -> bool:
        """Whether posed images are attached (a Trainer's or ``attach_data``'s); a field loaded from a checkpoint has none."""
        if self._attached_data is not None:
            return True
        return self._trainer is not None and getattr(self._trainer, "datamodule", None) is not None

    def heldout_poses(self) -> Tensor:
        """The held-out views' cameras (V, 4, 4); without data, ``ORBIT_VIEWS`` cameras of an orbit around the scene at
        ``ORBIT_ELEVATION`` degrees and the training cameras' distance (kept in the checkpoint)."""
        if not self.has_data():
            return turntable_poses(ORBIT_VIEWS, ORBIT_ELEVATION, float(self.orbit_radius)).to(self.device)
        dm = self.data
        return dm.poses[dm.posed.heldout_views]

    @torch.no_grad()
    def render(self, shape=None, chunk: Optional[int] = None) -> Tensor:
        """The held-out views as one regular grid for the grid callbacks: (C·V, H, W), channel c of view v at
        C·v + c (per-view spectra pool over views and channels); ``shape`` (H', W') renders them at another
        resolution. A field without its data (loaded from a checkpoint) renders the ``ORBIT_VIEWS`` views of an
        orbit around its scene instead (``heldout_poses``), with the training camera."""
        if shape is not None and len(shape) != 2:
            raise InputError(
                f"a radiance field renders camera views of (height, width), not a {len(shape)}-D grid {list(shape)}; "
                "for a video of it use python -m inr.run.turntable"
            )
        intrinsics = self.intrinsics if shape is None else self.intrinsics.resized(*shape)
        saved, self.render_chunk = self.render_chunk, chunk or self.render_chunk
        try:
            rgb = self.render_views(self.heldout_poses(), intrinsics)["rgb"]
        finally:
            self.render_chunk = saved
        return rgb.reshape(-1, *rgb.shape[2:])  # (V, C, H, W) -> (V·C, H, W)

    # predict renders every view of the data (the grid's first axis), at the requested image size, or the
    # cameras of ``predict_camera_path`` (set by predict --camera-path: "orbit"/"spiral" with a frame count, or
    # the ``CameraPath`` of a JSON file: poses, and its own image size and fields of view when it gives them)
    predict_fixed_axes = (0,)
    predict_camera_path: Any = None

    def predict_poses(self, views: int) -> Tensor:
        """The cameras predict renders: the data's first ``views``, or the camera path's (on the model's device)."""
        path = self.predict_camera_path
        if path is None:
            return self.data.poses[:views]
        if isinstance(path, CameraPath):
            return path.poses.to(self.device)
        name, frames = path
        radius = float(self.orbit_radius)  # the training cameras' mean distance, restored with the checkpoint
        poses = turntable_poses(frames, 30.0, radius) if name == "orbit" else spiral_poses(frames, radius)
        return poses.to(self.device)

    def predict_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        """A render request ``{"shape": [V, H', W']}`` -> V views at H'×W' as (C + 2, V, H', W'): colour, then the
        expected depth and the accumulated opacity of each pixel's ray."""
        views, height, width = batch["shape"]
        path = self.predict_camera_path
        if isinstance(path, CameraPath) and path.fov_y is not None:  # the path's own field of view, frame by frame
            intrinsics = path.intrinsics(int(height), int(width))
        else:
            intrinsics = self.intrinsics.resized(int(height), int(width))
        out = self.render_views(self.predict_poses(int(views)), intrinsics)
        stacked = torch.cat([out["rgb"], out["depth"][:, None], out["opacity"][:, None]], 1)  # (V, C + 2, H', W')
        return stacked.transpose(0, 1)  # (V, C + 2, H', W') -> (C + 2, V, H', W')

    def target_grid(self) -> Tensor:
        """The held-out images in ``render``'s layout (C·V, H, W)."""
        images = self.data.heldout_images().to(self.device)
        return images.reshape(-1, *images.shape[2:])

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return self.data.image_shape if self.has_data() else (self.intrinsics.height, self.intrinsics.width)

    # --- steps ----------------------------------------------------------------------------------------
    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        pred = self.render_rays(batch["origins"], batch["directions"])["rgb"]
        self.val_metrics.update(pred, batch["values"])
        self._heldout_chunks.append(pred)

    def setup(self, stage: str) -> None:
        dm = getattr(self.trainer, "datamodule", None)
        if dm is None:
            return
        if not isinstance(dm, RaysDataModule):
            raise InputError(
                f"{type(self).__name__} learns from posed images: use data.class_path inr.data.RaysDataModule, not {type(dm).__name__}"
            )
        if self.encoder.in_dim != 3:
            raise InputError(
                f"model.encoder takes {self.encoder.in_dim}-D coordinates but a radiance field is queried at 3-D points; set in_dim: 3"
            )
        if dm.out_channels != self.out_channels:
            raise InputError(f"model.out_channels is {self.out_channels} but the images have {dm.out_channels} channels")
        b = dm.bound
        self.scene_box.copy_(torch.tensor([[-b] * 3, [b] * 3]))
        self.depth_range.copy_(torch.tensor([dm.near, dm.far]))
        self.background.copy_(torch.tensor(dm.background))
        self.camera.copy_(dm.intrinsics.as_tensor())
        self.orbit_radius.fill_(float(dm.poses[:, :3, 3].norm(dim=-1).mean()))
        self._check_step_memory(dm)

    def _check_step_memory(self, dm: RaysDataModule) -> None:
        """Refuse a ray batch whose training step would not fit: rays × samples × (2 × the activations autograd
        keeps per point, measured on the configured network) + the rays' own buffers."""
        passes = self.renderer.samples + (
            self.renderer.samples + self.renderer.importance_samples if self.renderer.importance_samples else 0
        )
        per_point = 2 * activation_bytes_per_point(self, 3) + 4 * (3 + 4 + 6)  # + points, outputs, compositing terms
        device = self.trainer.strategy.root_device
        available, where = (torch.cuda.mem_get_info(device)[0], f" on {device}") if device.type == "cuda" else (None, "")
        check_memory(
            f"data.batch_size {dm.batch_size:,} rays × {passes} samples",
            int(dm.batch_size * passes * per_point),
            advice="choose a smaller data.batch_size or fewer model.samples",
            available=available,
            where=where,
        )

    # --- final report -------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """PSNR and SSIM of the held-out views rendered whole, and PSNR of up to ``eval_train_views`` training
        views (evenly spaced), in eval mode."""
        dm, results = self.data, {}
        with eval_mode(self):
            held_poses, train = (
                self.heldout_poses(),
                dm.posed.train_views[evenly_spaced(len(dm.posed.train_views), self.eval_train_views)],
            )
            rays = self.intrinsics.height * self.intrinsics.width
            total = rays * (len(held_poses) + len(train))  # one progress line over both sets of views
            held = self.render_views(held_poses, total=total)["rgb"]
            truth = dm.heldout_images().to(self.device)
            results["test/psnr"] = psnr(held, truth)
            value = ssim(held, truth, name="test/ssim")  # the held-out views' mean
            if value is not None:
                results["test/ssim"] = value
            rendered = self.render_views(dm.poses[train], done=rays * len(held_poses), total=total)["rgb"]
            results["train/psnr"] = psnr(rendered, dm.posed.images[train].permute(0, 3, 1, 2).to(self.device))
        return results
