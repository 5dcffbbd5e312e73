"""Gradient supervision: fit an image from its gradient alone (SIREN's Poisson experiment), in one small file.

    python examples/poisson_image.py                          # examples/poisson_image.yaml, a minute or two on a CPU
    python examples/poisson_image.py --trainer.max_steps 100

The target is not the field but its derivative: the data holds g = ∇I of a grey image I (central differences
on the grid, in intensity per unit of v ∈ [0, 1)²), and the loss asks the field's gradient to match it,

    L = mean ‖∇_v f(v) − g(v)‖²,

so f recovers I up to a constant (Sitzmann et al. 2020, sec. 4.1). Three things a task of this kind needs from
the framework, each one line here:

- ``needs_coordinate_gradients = True``: the full batch's encoding is not cached (a cache computed once, without
  gradients, would cut the graph at v and ∂f/∂v would not exist);
- ``target_channels()``: the data has d·C channels for C outputs, so the channel check accepts it (the command
  line links the data's channel count to ``out_channels``; ``__init__`` turns it into the field's width);
- ``target_grid()``: the field's ground truth (the image), which the image and spectral callbacks compare the
  field with; a task whose target is not its field and that gives no truth gets one warning and no comparison.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import torch
from torch import Tensor
from torchmetrics import MetricCollection
from torchmetrics.regression import MeanSquaredError

from inr.data.image import ImageDataModule
from inr.metrics import psnr
from inr.modes import eval_mode
from inr.tasks.base import INRModule


class ImageGradient(ImageDataModule):
    """∇I of the grey image I (the ImageDataModule's image, one channel): (H, W, 2), (∂I/∂v₀, ∂I/∂v₁)."""

    def __init__(self, channels: str = "gray", **kwargs: Any) -> None:
        super().__init__(channels=channels, **kwargs)
        self.image: Optional[Tensor] = None

    def load_values(self) -> Tensor:
        image = super().load_values()[..., 0]  # (H, W, 1) -> (H, W)
        self.image = image
        spacing = [1.0 / n for n in image.shape]  # v = i / N: a grid step is 1/N in v
        return torch.stack(torch.gradient(image, spacing=spacing), dim=-1)  # (H, W, 2)


class GradientFitting(INRModule):
    """f with ∇f ≈ g; ``out_channels`` counts the data's channels (d per output), the field has out_channels / d."""

    default_output_activation = "none"
    needs_coordinate_gradients = True

    def __init__(self, out_channels: int = 2, **kwargs: Any) -> None:
        in_dim = kwargs["encoder"].in_dim if kwargs.get("encoder") is not None else 2
        super().__init__(out_channels=out_channels // in_dim, **kwargs)
        self.in_dim = in_dim

    def target_channels(self) -> int:
        return self.out_channels * self.in_dim

    def make_metrics(self) -> MetricCollection:
        return MetricCollection({"gradient_mse": MeanSquaredError()})

    def gradient(self, coords: Tensor, create_graph: bool = False) -> Tensor:
        """∇_v f at ``coords`` (N, d) -> (N, C·d), by reverse-mode autodiff (one output channel here)."""
        with torch.inference_mode(False), torch.enable_grad():
            coords = coords.clone().requires_grad_(True)  # a leaf of the graph: the encoder sees it, not a cache
            field = self.field({"coords": coords, "full_batch": True})
            (grad,) = torch.autograd.grad(field.sum(), coords, create_graph=create_graph)
        return grad

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        grad = self.gradient(batch["coords"], create_graph=True)
        loss = (grad - batch["values"]).square().sum(-1).mean()
        self.log("train/loss", loss, prog_bar=True, batch_size=len(grad))
        return loss

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        grad = self.gradient(batch["coords"])
        self.val_metrics.update(grad, batch["values"])

    def evaluate(self) -> dict[str, float]:
        """The gradient's error on each split, and the PSNR of the field against the image once their means are
        aligned (the gradient fixes f up to a constant)."""
        dm, results = self.data, {}
        for split, index in (("train", dm.train_index), ("test", dm.test_index)):
            grads, values = [], []
            for chunk in index.split(self.render_chunk):
                batch = dm.gather(chunk, self.device)
                grads.append(self.gradient(batch["coords"]))
                values.append(batch["values"])
            results[f"{split}/gradient_mse"] = float((torch.cat(grads) - torch.cat(values)).square().mean())
        with eval_mode(self):
            field, image = self.render()[0], self.target_grid()[0]  # (H, W) each
        results["full/psnr"] = psnr(field - field.mean() + image.mean(), image)
        return results

    def target_grid(self) -> Tensor:
        """The image whose gradient the data holds, (1, H, W): the field's ground truth up to a constant."""
        dm = self.data
        dm.values_grid()  # loads the image
        return dm.image[None].to(self.device)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # so the config's class paths import
    from inr.run.cli import cli_main

    cli_main(["--config", str(Path(__file__).with_name("poisson_image.yaml"))] + sys.argv[1:])
