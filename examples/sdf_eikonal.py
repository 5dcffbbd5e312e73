"""Write your own task: fit a signed-distance function with an eikonal term, in one small file.

    python examples/sdf_eikonal.py                          # examples/sdf_eikonal.yaml, about a minute on a CPU
    python examples/sdf_eikonal.py --trainer.max_steps 50 --model.init_args.eikonal_weight 0.5
    python -m inr.run.mesh --ckpt runs/sdf/version_0/checkpoints/last.ckpt --out sdf.ply --level 0 --trust examples

A task is a DataModule that says what the target is on its grid (``load_values``) and an ``INRModule``
subclass that says how to score the field. Here the target is the signed distance d of a built-in shape,
and the loss adds the eikonal term of Gropp et al. 2020 ("Implicit Geometric Regularization"):

    L = mean |f(v) − d(v)| + λ · mean (‖∇_v f(v)‖ − 1)²,

which asks the field to be a distance (unit gradient) everywhere it is trained, not only to match values.
Everything else (batches, lazy coordinates, validation, chunked renders, checkpoints, the command line)
comes from the framework.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal, Optional

import torch
import torch.nn.functional as F
from lightning.pytorch.cli import OptimizerCallable
from torch import Tensor
from torchmetrics import MetricCollection
from torchmetrics.regression import MeanAbsoluteError

from inr.data.module import GridDataModule
from inr.data.sdf import sdf_grid
from inr.encoders import Encoder
from inr.tasks.base import INRModule, NetworkFactory


class SDFDataModule(GridDataModule):
    """The signed distance (one channel) of a built-in shape (``inr.data.sdf``) on a ``resolution``³ grid."""

    def __init__(
        self,
        builtin: Literal["sphere", "bumpy"] = "sphere",
        resolution: int = 32,
        split: str = "every_other",
        batch_size: Optional[int] = None,
        steps_per_epoch: Optional[int] = None,
        seed: int = 0,
    ) -> None:
        super().__init__(split=split, batch_size=batch_size, steps_per_epoch=steps_per_epoch, seed=seed)
        self.builtin, self.resolution = builtin, resolution

    def load_values(self) -> Tensor:
        return sdf_grid(self.builtin, (self.resolution,) * 3)[..., None]  # (D, H, W) -> (D, H, W, 1)


class SDFFitting(INRModule):
    """f(v) ≈ d(v) with unit gradient; metrics: mean |f − d| (``mae``) and mean |‖∇f‖ − 1| (``eikonal``)."""

    default_in_dim = 3

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 1,
        optimizer: OptimizerCallable = torch.optim.Adam,
        eikonal_weight: float = 0.1,
    ) -> None:
        super().__init__(encoder, network, out_channels, optimizer)
        self.eikonal_weight = eikonal_weight

    def make_metrics(self) -> MetricCollection:
        return MetricCollection({"mae": MeanAbsoluteError()})

    def gradient_norm(self, coords: Tensor, create_graph: bool = False) -> tuple[Tensor, Tensor]:
        """f(v) (N, 1) and ‖∇_v f(v)‖ (N,) by reverse-mode autodiff through encoder and network."""
        # validation runs under inference mode; gradients need ordinary tensors, hence the clone outside it
        with torch.inference_mode(False), torch.enable_grad():
            coords = coords.clone().requires_grad_(True)
            raw = self(coords)
            (grad,) = torch.autograd.grad(raw.sum(), coords, create_graph=create_graph)
        return raw, grad.norm(dim=-1)

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        raw, norm = self.gradient_norm(batch["coords"], create_graph=True)
        fit = F.l1_loss(raw, batch["values"])
        eikonal = ((norm - 1) ** 2).mean()
        loss = fit + self.eikonal_weight * eikonal
        n = len(raw)
        self.log_dict({"train/loss": loss, "train/fit": fit, "train/eikonal": eikonal}, prog_bar=True, batch_size=n)
        self.train_metrics(raw.detach(), batch["values"])
        self.log_dict(self.train_metrics, batch_size=n)
        return loss

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        super().validation_step(batch, batch_idx)
        _, norm = self.gradient_norm(batch["coords"])
        self.log("val/eikonal", (norm - 1).abs().mean(), batch_size=len(norm))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # so the config's class paths import
    from inr.run.cli import cli_main

    cli_main(["--config", str(Path(__file__).with_name("sdf_eikonal.yaml"))] + sys.argv[1:])
