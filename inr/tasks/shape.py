"""``ShapeFitting``: a field over a mesh's normalised box (``inr.data.MeshDataModule``): occupancy logits or distances.

``occupancy``: the network outputs a logit ℓ; loss = BCE-with-logits(ℓ, o) (Tancik et al. 2020's 3D shape
notebook), ``postprocess`` = σ(ℓ). ``sdf``: the network outputs f ≈ d (negative inside); loss =
mean |f − d| on the step's points, plus, with the data's ``surface_batch`` or an ``eikonal_weight``, the terms of
SIREN's SDF loss (Sitzmann et al. 2020, eq. 6) on the points where they apply:

    L = mean |f(v) − d(v)| + λ_s mean_S |f(s)| + λ_n mean_S (1 − cos∠(∇f(s), n(s))) + λ_e mean (‖∇f‖ − 1)²,

S the surface samples with normals n. Held-out scores, on the data's two fixed sets ("easy": uniform in the
box; "hard": near the surface): ``iou_easy``, ``iou_hard`` (IoU = |P ∩ O| / |P ∪ O|, P = {σ(ℓ) > ½} or {f < 0});
for ``sdf`` also ``mae_easy``, ``mae_hard``. Geometry, when ``geometry_resolution`` is set: the field is
sampled on that grid over the box, its level set (½, or 0 for a distance) meshed and closed, and the
mesh's surface samples compared with the ground truth's (``inr.geometry.surface_metrics``): ``chamfer_l1``,
``chamfer_l2``, ``normal_consistency``, ``fscore`` (at ``fscore_tau``), with as many points on each side as the
data's ``surface_samples``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torchmetrics import MetricCollection
from torchmetrics.regression import MeanAbsoluteError

from inr.encoders import Encoder
from inr.errors import InputError
from inr.geometry.level_set import level_set_mesh
from inr.geometry.sampling import sample_surface
from inr.metrics import IoU
from inr.metrics.geometry import SurfaceDistances
from inr.metrics.local import not_distributed
from inr.modes import eval_mode
from inr.networks import MLP
from inr.tasks.base import INRModule, NetworkFactory

SHAPE_MODES = ("occupancy", "sdf")
HELDOUT = ("easy", "hard")
# the seed of the predicted surface's samples: fixed, so one field always gets the same scores
SURFACE_SAMPLE_SEED = 3


class ShapeFitting(INRModule):
    """Fits occupancy (logits, BCE) or a signed distance (L1 + SIREN-style terms) over a mesh's box.

    Args:
        mode: ``occupancy`` or ``sdf``; the CLI takes it from ``data.mode``.
        geometry_resolution: grid points per axis of the level-set mesh scored against the ground truth at
            each validation and in ``evaluate`` (None: no geometry metrics).
        fscore_tau: the F-score's distance threshold, in the normalised frame (the shape spans at most 1).
        surface_weight, normal_weight, eikonal_weight: λ_s, λ_n, λ_e of the ``sdf`` loss (module docstring).
        encoder, network, out_channels, optimizer, scheduler, render_chunk, cache_encoding, compile: as in
            ``INRModule``; the default network is 3×256 ReLU with a linear output.
    """

    default_in_dim = 3
    coordinate_axes = "xyz"  # a mesh's own axes: meshes of the field need no reordering

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 1,
        *,
        mode: Optional[Literal["occupancy", "sdf"]] = None,
        geometry_resolution: Optional[int] = 128,
        fscore_tau: float = 0.01,
        surface_weight: float = 1.0,
        normal_weight: float = 0.1,
        eikonal_weight: float = 0.0,
        **kwargs: Any,
    ) -> None:
        mode = mode or "occupancy"
        if mode not in SHAPE_MODES:
            raise InputError(f"model.mode: unknown mode {mode!r}; choose {' or '.join(SHAPE_MODES)}")
        if geometry_resolution is not None and geometry_resolution < 2:
            raise InputError(f"model.geometry_resolution must be ≥ 2 or null, got {geometry_resolution}")
        if fscore_tau <= 0 or min(surface_weight, normal_weight, eikonal_weight) < 0:
            raise InputError("model.fscore_tau must be > 0 and the loss weights ≥ 0")
        self.mode = mode  # read by make_metrics during INRModule.__init__
        if network is None:
            network = partial(MLP, width=256, depth=3, output_activation="none")
        super().__init__(encoder, network, out_channels, **kwargs)
        if any(isinstance(m, nn.Sigmoid) for m in list(self.network.modules())[-1:]):
            raise InputError(f"model.network: {mode} mode trains an unbounded output; use output_activation: none")
        self.geometry_resolution, self.fscore_tau = geometry_resolution, fscore_tau
        self.surface_weight, self.normal_weight, self.eikonal_weight = surface_weight, normal_weight, eikonal_weight
        self.heldout_metrics = nn.ModuleDict({name: self.make_metrics() for name in HELDOUT})
        self.surface_metric = SurfaceDistances(tau=fscore_tau)
        # the box the field is meshed in (the data's, saved with the weights so a checkpoint alone can be meshed)
        self.register_buffer("box", torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))

    # --- the field ----------------------------------------------------------------------------------
    @property
    def level(self) -> float:
        """The surface's level: ½ of an occupancy probability, 0 of a distance."""
        return 0.5 if self.mode == "occupancy" else 0.0

    @property
    def inside(self) -> Literal["above", "below"]:
        return "above" if self.mode == "occupancy" else "below"

    def loss(self, raw: Tensor, target: Tensor) -> Tensor:
        if self.mode == "occupancy":
            return F.binary_cross_entropy_with_logits(raw, target)
        return F.l1_loss(raw, target)

    def postprocess(self, raw: Tensor) -> Tensor:
        return torch.sigmoid(raw) if self.mode == "occupancy" else raw

    def make_metrics(self) -> MetricCollection:
        if self.mode == "occupancy":
            return MetricCollection({"iou": IoU(threshold=0.5, validate_args=False)})
        return MetricCollection({"iou": IoU(threshold=0.5, validate_args=False), "mae": MeanAbsoluteError()})

    def update_heldout(self, metrics: MetricCollection, pred: Tensor, target: Tensor) -> None:
        """Scores of one chunk: IoU of the inside sets (σ(ℓ) > ½, or f < 0 against d < 0) and, for sdf, |f − d|."""
        if self.mode == "occupancy":
            metrics.update(pred, target)
            return
        metrics["iou"].update((pred < 0).float(), (target < 0).float())
        metrics["mae"].update(pred, target)

    # --- training -----------------------------------------------------------------------------------
    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        if self.mode == "occupancy" or ("surface_coords" not in batch and self.eikonal_weight == 0):
            return super().training_step(batch, batch_idx)
        # validation runs under inference mode; the gradient terms need ordinary tensors
        with torch.inference_mode(False), torch.enable_grad():
            coords = batch["coords"].clone().requires_grad_(self.eikonal_weight > 0)
            raw = self(coords)
            terms = {"fit": F.l1_loss(raw, batch["values"])}
            grads = []
            if self.eikonal_weight > 0:
                grads.append(torch.autograd.grad(raw.sum(), coords, create_graph=True)[0])
            if "surface_coords" in batch:
                surface = batch["surface_coords"].clone().requires_grad_(True)
                on = self(surface)
                (grad_s,) = torch.autograd.grad(on.sum(), surface, create_graph=True)
                terms["surface"] = self.surface_weight * on.abs().mean()
                terms["normal"] = self.normal_weight * (1 - F.cosine_similarity(grad_s, batch["surface_normals"], dim=-1)).mean()
                grads.append(grad_s)
            if self.eikonal_weight > 0:
                terms["eikonal"] = self.eikonal_weight * ((torch.cat(grads).norm(dim=-1) - 1) ** 2).mean()
            loss = sum(terms.values())
        n = len(raw)
        if self.logs_this_step():
            self.log("train/loss", loss, prog_bar=True, batch_size=n)
            self.log_dict({f"train/{k}": v.detach() for k, v in terms.items()}, batch_size=n)
        return loss

    # --- held-out sets ------------------------------------------------------------------------------
    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        self.update_heldout(self.heldout_metrics[batch["heldout"]], self.predict(batch["coords"]), batch["values"])

    def on_validation_epoch_start(self) -> None:
        for metrics in self.heldout_metrics.values():
            metrics.reset()

    def on_validation_epoch_end(self) -> None:
        # (the sanity check's two batches reach the easy set only)
        updated = {name: m for name, m in self.heldout_metrics.items() if all(x.update_count for x in m.values())}
        values = {f"val/{k}_{name}": v for name, m in updated.items() for k, v in m.compute().items()}
        self.log_rank_equal(values, prog_bar=True)
        for metrics in self.heldout_metrics.values():
            metrics.reset()
        if self.trainer.sanity_checking:
            return
        surface = self.surface_scores(self.surface_metric)
        if surface:
            self.log_rank_equal({f"val/{k}": v for k, v in surface.items()})

    # --- geometry -----------------------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        super().setup(stage)
        dm = getattr(self.trainer, "datamodule", None)
        if dm is None:
            return
        data_mode = getattr(dm, "mode", self.mode)
        if data_mode != self.mode:
            raise InputError(f"model.mode is {self.mode!r} but data.mode is {data_mode!r}; set both to the same")
        if hasattr(dm, "box"):
            self.box.copy_(torch.as_tensor(dm.box, dtype=torch.float32))

    @torch.no_grad()
    def extract_surface(self, resolution: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
        """The closed level-set mesh of the field over its box, vertices (V, 3) in x, y, z of the normalised
        frame, outward triangles (F, 3); ValueError when the field has no surface there."""
        resolution = resolution or self.geometry_resolution or 128
        with eval_mode(self):
            return level_set_mesh(
                lambda p: self.predict(p)[:, 0], self.box.detach().cpu().numpy(), resolution, self.level, self.inside, self.device
            )

    def surface_scores(self, metric: Optional[SurfaceDistances] = None) -> dict[str, float]:
        """The geometry metrics of the field's level set against the data's surface samples ({} without a
        ``geometry_resolution``, for an unsigned distance, or when the field has no surface)."""
        dm = self.data
        if self.geometry_resolution is None or getattr(dm, "sign", "signed") == "unsigned":
            return {}
        try:
            verts, faces = self.extract_surface()
        except ValueError:
            return {}
        gt_points, gt_normals = dm.surface()
        points, normals = sample_surface(verts, faces, len(gt_points), np.random.default_rng(SURFACE_SAMPLE_SEED))
        metric = metric if metric is not None else SurfaceDistances(tau=self.fscore_tau)
        metric.reset()
        metric.update(points, normals, gt_points, gt_normals)
        scores = {k: float(v) for k, v in metric.compute().items()}
        metric.reset()
        return scores

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """IoU (and MAE) on both held-out sets and the geometry metrics, in eval mode, in this process alone."""
        dm, results = self.data, {}
        with eval_mode(self):
            for name in HELDOUT:
                points, labels = dm.heldout(name)
                metrics = self.make_metrics().to(self.device)
                for metric in metrics.values():  # local: rank 0 may evaluate alone after DDP training
                    metric.distributed_available_fn = not_distributed
                for chunk in torch.arange(len(points)).split(self.render_chunk):
                    pred = self.predict(points[chunk].to(self.device))
                    self.update_heldout(metrics, pred, labels[chunk].to(self.device))
                results.update({f"test/{k}_{name}": float(v) for k, v in metrics.compute().items()})
            results.update({f"test/{k}": v for k, v in self.surface_scores().items()})
        return results
