"""``NTKCallback``: the empirical NTK of the task on fixed probe points during training: drift, spectrum,
a kernel slice, and the training loss the kernel at the start predicts vs the one observed."""

from __future__ import annotations

import math
from typing import Any, Literal, Optional

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only, rank_zero_warn
from torch import Tensor

from inr.callbacks.media import log_figure, log_image
from inr.data.grid import Grid
from inr.errors import InputError
from inr.modes import eval_mode
from inr.ntk import empirical_ntk, predict_gd_mse, top_eigenvalues


def kernel_drift(k: Tensor, k0: Tensor) -> float:
    """‖K − K₀‖_F / ‖K₀‖_F."""
    return float((k - k0).norm() / k0.norm().clamp_min(torch.finfo(k0.dtype).tiny))


def slice_plane(shape: tuple[int, ...], resolution: int) -> tuple[Tensor, tuple[int, ...], int]:
    """A regular sub-grid through the grid's centre for a kernel slice: the last two axes (every
    ⌈size/resolution⌉-th point), the others fixed at their middle; 1D grids give a line.

    Returns the linear indices of the slice (M,), its shape, and the linear index of the centre point.
    """
    centre = [s // 2 for s in shape]
    axes = list(range(max(0, len(shape) - 2), len(shape)))
    ranges = [torch.arange(0, shape[a], max(1, math.ceil(shape[a] / resolution))) for a in axes]
    mesh = torch.meshgrid(*ranges, indexing="ij")
    pos = torch.tensor(centre).repeat(mesh[0].numel(), 1)  # (M, d)
    for a, m in zip(axes, mesh):
        pos[:, a] = m.reshape(-1)
    strides = torch.tensor([math.prod(shape[i + 1 :]) for i in range(len(shape))])
    centre_index = int((torch.tensor(centre) * strides).sum())
    return (pos * strides).sum(1), tuple(len(r) for r in ranges), centre_index


class NTKCallback(L.Callback):
    """Every ``every_n_epochs`` epochs, the empirical NTK Θ_t of the task (encoder + network) on probes.

    Probes: ``num_probes`` training points drawn once from the task's grid (seeded by ``seed``). The kernel
    at the start of training, K₀ (output trace), and the outputs f₀ there are kept. Logged (step = global step):

    - ``ntk/drift``: ‖K_t − K₀‖_F / ‖K₀‖_F (0 in the infinite-width "lazy" limit);
    - ``ntk/eigenvalue_i``: the top ``num_eigenvalues`` eigenvalues of K_t/N (N probes), i.e. of the kernel's
      integral operator over the training distribution;
    - ``ntk/kernel_slice``: Θ_t(x_c, v) for v on a regular plane through the grid centre x_c (at most
      ``slice_resolution`` points per axis), shown as (1 + k/max|k|)/2 (grey = 0); a plot for 1D data;
    - ``ntk/probe_mse_observed`` and ``ntk/probe_mse_predicted``: the mean squared error on the probes, and the
      one gradient descent with the fixed kernel K₀ predicts (``predict_gd_mse``) for the time ∑_k η_k
      elapsed (η_k: learning rate of step k). With the MSE averaged over N·C entries, the full (N·C)² kernel
      and lr 2η are used. The probes stand in for the training set, (1/N_train)∑_train ≈ (1/N)∑_probes:
      exact (up to linearisation) when they are the whole training set (``num_probes`` ≥ its size), and
      optimistic with fewer, as N points are fitted faster than N_train (measured on a 64-pixel training set:
      7% apart with all 64 as probes, the prediction 26% low with 32). It is the prediction of plain
      (stochastic) gradient descent; with Adam or momentum it is a reference only, and a warning says so.

    Runs on global rank 0 only, with no collective inside; eval mode while measuring, then back. Its state
    (probes, K₀, f₀, elapsed time) is in the checkpoint, so a resumed run keeps measuring against its K₀.

    Args:
        every_n_epochs: measure every this many epochs (and at the start).
        num_probes: probe points (the NTK is num_probes² · C² numbers).
        seed: seed of the probe draw.
        method: ``empirical_ntk`` implementation.
        num_eigenvalues: eigenvalues logged.
        slice_resolution: points per axis of the kernel slice (0: no slice).
        chunk_size: ``empirical_ntk`` block size.
    """

    def __init__(
        self,
        every_n_epochs: int = 10,
        num_probes: int = 256,
        seed: int = 0,
        method: Literal["auto", "structured", "jacobian", "ntvp"] = "auto",
        num_eigenvalues: int = 8,
        slice_resolution: int = 64,
        chunk_size: Optional[int] = None,
    ) -> None:
        if every_n_epochs < 1 or num_probes < 2 or num_eigenvalues < 0 or slice_resolution < 0:
            raise InputError("NTKCallback needs every_n_epochs ≥ 1, num_probes ≥ 2, num_eigenvalues ≥ 0, slice_resolution ≥ 0")
        self.every_n_epochs, self.num_probes, self.seed, self.method = every_n_epochs, num_probes, seed, method
        self.num_eigenvalues, self.slice_resolution, self.chunk_size = num_eigenvalues, slice_resolution, chunk_size
        self.probe_index: Optional[Tensor] = None  # linear grid indices (N,)
        self.k0: Optional[Tensor] = None  # full kernel at the reference, (N, N, C, C)
        self.f0: Optional[Tensor] = None  # raw outputs at the reference, (N, C)
        self.elapsed = 0.0  # ∑ η_k over the steps since the reference
        self.reference_step = 0
        self.last: dict[str, float] = {}
        self._warned = False

    @property
    def state_key(self) -> str:
        return self._generate_state_key(num_probes=self.num_probes, seed=self.seed)

    # --- hooks -------------------------------------------------------------------------------------------
    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self.k0 is None:
            self.set_reference(trainer, pl_module)
            self.measure(trainer, pl_module)

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        self._count_step(trainer)

    def on_inner_step_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Between two optimizer steps of one Lightning step (``inner_steps`` K > 1): the K − 1 steps before the
        group's last count here, the last one in ``on_train_batch_end``, so Σ η counts every optimizer step."""
        self._count_step(trainer)

    def _count_step(self, trainer: L.Trainer) -> None:
        if trainer.optimizers:
            self.elapsed += float(trainer.optimizers[0].param_groups[0]["lr"])

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if (trainer.current_epoch + 1) % self.every_n_epochs == 0:
            self.measure(trainer, pl_module)

    def state_dict(self) -> dict[str, Any]:
        return {
            "probe_index": self.probe_index,
            "k0": self.k0,
            "f0": self.f0,
            "elapsed": self.elapsed,
            "reference_step": self.reference_step,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.probe_index, self.k0, self.f0 = state_dict["probe_index"], state_dict["k0"], state_dict["f0"]
        self.elapsed, self.reference_step = float(state_dict["elapsed"]), int(state_dict["reference_step"])

    # --- measurements (rank 0) ---------------------------------------------------------------------------
    def _probes(self, pl_module: L.LightningModule) -> tuple[Tensor, Tensor]:
        dm = pl_module.data
        index = self.probe_index.to(dm.values.device)
        return dm.grid.coords(index).to(pl_module.device), dm.values[index].to(pl_module.device)

    def _ntk(self, pl_module: L.LightningModule, x1: Tensor, x2: Optional[Tensor] = None, full: bool = False) -> Tensor:
        return empirical_ntk(pl_module, x1, x2, method=self.method, full=full, chunk_size=self.chunk_size)

    @rank_zero_only
    def set_reference(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Draw the probes; keep K₀ and f₀ there."""
        train_index = pl_module.data.train_index
        gen = torch.Generator().manual_seed(self.seed)
        pick = torch.randperm(len(train_index), generator=gen)[: self.num_probes]
        self.probe_index = train_index[pick.sort().values].cpu()
        with eval_mode(pl_module):
            x, _ = self._probes(pl_module)
            self.k0 = self._ntk(pl_module, x, full=True).detach().cpu()
            with torch.no_grad():
                self.f0 = pl_module(x).detach().cpu()
        self.elapsed, self.reference_step = 0.0, trainer.global_step
        opt = trainer.optimizers[0] if trainer.optimizers else None
        if (
            opt is not None
            and (type(opt) is not torch.optim.SGD or any(g.get("momentum", 0) for g in opt.param_groups))
            and not self._warned
        ):
            rank_zero_warn(
                f"NTKCallback: ntk/probe_mse_predicted assumes plain gradient descent; the optimizer is {type(opt).__name__}"
            )
            self._warned = True

    @rank_zero_only
    def measure(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Compute Θ_t on the probes and log drift, eigenvalues, the kernel slice and the predicted loss."""
        if self.k0 is None:
            return
        with eval_mode(pl_module):
            x, y = self._probes(pl_module)
            k = self._ntk(pl_module, x).detach().cpu()
            with torch.no_grad():
                f = pl_module(x).detach().cpu()
            image = self._slice(pl_module) if self.slice_resolution > 0 else None
        y = y.cpu()
        n, c = y.shape
        k0_trace = self.k0.diagonal(dim1=2, dim2=3).sum(-1)  # (N, N)
        metrics = {"ntk/drift": kernel_drift(k, k0_trace), "ntk/probe_mse_observed": float(((f - y) ** 2).mean())}
        # L = (1/NC)‖f − y‖² over N·C entries is (1/2M)‖f − y‖² with M = NC at twice the step
        k_full = self.k0.permute(0, 2, 1, 3).reshape(n * c, n * c)  # (N, N, C, C) -> (N·C, N·C)
        pred = predict_gd_mse(k_full.double(), y.reshape(-1).double(), 2.0, self.elapsed, f0_train=self.f0.reshape(-1).double())
        metrics["ntk/probe_mse_predicted"] = float(((pred.train - y.reshape(-1).double()) ** 2).mean())
        for i, lam in enumerate(top_eigenvalues(k.double() / n, self.num_eigenvalues).tolist()):
            metrics[f"ntk/eigenvalue_{i}"] = lam
        self.last = metrics
        if trainer.logger is not None:
            trainer.logger.log_metrics(metrics, step=trainer.global_step)
        if isinstance(image, Tensor):
            log_image(trainer, "ntk/kernel_slice", image, trainer.global_step)
        elif image is not None:
            log_figure(trainer, "ntk/kernel_slice", image, trainer.global_step)

    def _slice(self, pl_module: L.LightningModule) -> Any:
        """Θ_t(x_c, ·) on the slice plane: a (1, h, w) image in [0, 1], or a figure for 1D grids."""
        shape = tuple(pl_module.data.shape)
        index, plane, centre = slice_plane(shape, self.slice_resolution)
        grid = Grid(shape)
        v = grid.coords(index).to(pl_module.device)
        row = self._ntk(pl_module, v, grid.coords(torch.tensor([centre])).to(pl_module.device))[:, 0].detach().cpu()
        if len(plane) == 1:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(5, 2.5))
            ax.plot(v[:, -1].cpu().numpy(), row.numpy())
            ax.set_xlabel("v")
            ax.set_ylabel("Θ(v, v_c)")
            fig.tight_layout()
            return fig
        scale = row.abs().max().clamp_min(torch.finfo(row.dtype).tiny)
        return ((1 + row / scale) / 2).reshape(1, *plane)  # (M,) -> (1, h, w)
