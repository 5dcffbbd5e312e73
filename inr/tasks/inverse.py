"""``InverseFitting``: a field fitted through a measurement operator (CT, MRI, inpainting, super-resolution):
loss = mean |A(f_θ) − y|², scored against the ground truth on the field's grid (PSNR, SSIM)."""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch import Tensor
from torchmetrics import Metric, MetricCollection

from inr.encoders import Encoder
from inr.errors import InputError
from inr.metrics import PSNR, psnr, ssim
from inr.modes import eval_mode
from inr.operators.base import Operator
from inr.tasks.base import INRModule, NetworkFactory
from inr.tasks.output_bias import apply_output_bias, check_output_bias, constant_fit


class RelativeResidual(Metric):
    """r = ‖ŷ − y‖ / ‖y‖ over all updates (complex values by modulus): how far A(f) is from the measurements,
    independent of their scale. Example: ŷ = 0 gives r = 1."""

    full_state_update = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("error", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("reference", default=torch.tensor(0.0), dist_reduce_fx="sum")

    def update(self, pred: Tensor, target: Tensor) -> None:
        self.error += (pred - target).abs().square().sum().float()
        self.reference += target.abs().square().sum().float()

    def compute(self) -> Tensor:
        return (self.error / self.reference.clamp_min(1e-30)).sqrt()


class InverseFitting(INRModule):
    """f_θ fitted to measurements y = A(f) + noise of a ``MeasurementDataModule``, whose operator A (CT
    projections, k-space sampling, a pixel mask, a downsampling, or any ``inr.operators.Operator``) the task
    takes from the data. Each step evaluates the field on the whole grid (one differentiable pass; the grid's
    encoding is computed once), applies A and minimises L = mean |A(f_θ) − y|² (complex residuals by modulus;
    the paper's ½ factor is left out, which Adam does not see).

    Metrics: ``train/residual`` = ‖A(f) − y‖/‖y‖ on the training measurements; ``val/psnr`` and ``val/ssim``
    of the reconstruction against the ground truth (fields in [0, 1]: a sigmoid output by default,
    clamped before scoring); ``val/residual`` on held-out measurements when the data holds some out.

    Args: as ``INRModule``; ``encoder.in_dim`` is the grid's dimension (2 for CT, 3 for 3D MRI).
        ``output_bias``: ``init`` keeps the initialisation's output bias (the paper's), ``data`` starts the network
        at the constant field that best explains the training measurements, c = Re⟨A1, y⟩/‖A1‖² (for MRI the mean
        the DC coefficient gives; ``inr.tasks.output_bias``).
    """

    default_in_dim = 2
    default_output_activation = "sigmoid"
    stackable = True  # its validation hooks and evaluate hand a stacked task to its members

    def __init__(
        self,
        encoder: Optional[Encoder] = None,
        network: Optional[NetworkFactory] = None,
        out_channels: int = 1,
        output_bias: str = "init",
        **kwargs: Any,
    ) -> None:
        super().__init__(encoder, network, out_channels, **kwargs)
        self._operator_device: Optional[str] = None
        self.output_bias = check_output_bias(output_bias, self.stack is not None, self.init_from)

    # --- the measurement ----------------------------------------------------------------------------
    @property
    def operator(self) -> Operator:
        """The data's operator, moved to this module's device once."""
        operator = self.data.operator
        if self._operator_device != str(self.device):
            operator.to(self.device)
            self._operator_device = str(self.device)
        return operator

    def measure(self, field: Tensor, batch: dict[str, Any]) -> Tensor:
        """A(f) at the batch's training measurements: the field (N, C) on the whole grid -> (C, *shape) -> A."""
        measured = self.operator(field.T.reshape(self.out_channels, *self.grid_shape))
        index = batch.get("measurement_index")
        return measured if index is None or len(index) == measured.shape[1] else measured.index_select(1, index)

    def loss(self, raw: Tensor, target: Tensor) -> Tensor:
        """L = mean |A(f) − y|²."""
        return (raw - target).abs().square().mean()

    def postprocess(self, raw: Tensor) -> Tensor:
        return raw.clamp(0.0, 1.0)

    def postprocess_measurement(self, raw: Tensor) -> Tensor:
        return raw

    def make_metrics(self) -> MetricCollection:
        return MetricCollection({"psnr": PSNR(data_range=1.0)})

    def make_train_metrics(self) -> MetricCollection:
        return MetricCollection({"residual": RelativeResidual()})

    def on_heldout_grid(self, pred: Tensor, target: Tensor) -> dict[str, float]:
        if pred.ndim not in (3, 4):  # (C, *shape): SSIM of an image or a volume only
            return {}
        value = ssim(pred, target, dims=pred.ndim - 1, name="val/ssim")
        return {} if value is None else {"ssim": value}

    def setup(self, stage: str) -> None:
        super().setup(stage)
        dm = getattr(self.trainer, "datamodule", None)
        if dm is not None and not hasattr(dm, "operator"):
            raise InputError(
                f"{type(self).__name__} needs a MeasurementDataModule (measurements and their operator), got {type(dm).__name__}"
            )
        if dm is not None:
            train = lambda: dm.measurement_split()[0]
            apply_output_bias(self, stage, lambda: constant_fit(dm.operator, dm.measurements, self.out_channels, train()))

    # --- validation ---------------------------------------------------------------------------------
    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        if self.stack is not None:
            return self.stack.validation_step(batch, batch_idx)
        if self.data.has_ground_truth:
            super().validation_step(batch, batch_idx)

    def on_validation_epoch_end(self) -> None:
        if self.stack is not None:  # the held-out residual is reported per member by evaluate()
            return self.stack.on_validation_epoch_end()
        if self.data.has_ground_truth:
            super().on_validation_epoch_end()
        heldout = self.heldout_residual()
        if heldout is not None:
            self.log_rank_equal({"val/residual": heldout}, prog_bar=True)

    @torch.no_grad()
    def heldout_residual(self) -> Optional[Tensor]:
        """‖A(f) − y‖/‖y‖ on the held-out measurements (None when none are held out)."""
        dm = self.data
        _, held = dm.measurement_split()
        if len(held) == 0:
            return None
        held = held.to(self.device)
        pred = self.operator(self.render()).index_select(1, held)
        target = dm.measurements.to(self.device).index_select(1, held)
        return ((pred - target).abs().square().sum() / target.abs().square().sum()).sqrt()

    # --- final report -------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """PSNR and SSIM of the reconstruction on the whole grid against the ground truth (when known) and
        the relative residual on the training (and held-out) measurements, in eval mode."""
        if self.stack is not None:
            return self.stack.evaluate()
        with eval_mode(self):
            dm, results = self.data, {}
            field = self.render()
            measured = self.operator(field)
            train, _ = dm.measurement_split()
            y = dm.measurements.to(self.device)
            train = train.to(self.device)
            residual = (measured - y).index_select(1, train)
            results["train/residual"] = float(
                (residual.abs().square().sum() / y.index_select(1, train).abs().square().sum()).sqrt()
            )
            heldout = self.heldout_residual()
            if heldout is not None:
                results["test/residual"] = float(heldout)
            if dm.has_ground_truth:
                truth = self.target_grid()
                results["full/psnr"] = psnr(field, truth)
                value = ssim(field, truth, dims=field.ndim - 1, name="full/ssim") if field.ndim in (3, 4) else None
                if value is not None:
                    results["full/ssim"] = value
        return results
