"""``SpectralBiasCallback``: the residual's relative error per radial frequency band during training, logged
to the run's loggers (figures also as PNG files: ``inr.callbacks.media``) and kept as ``spectral_history.npz``
in the run directory."""

from __future__ import annotations

import os
from typing import Any, Literal, Optional, Union

import lightning as L
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_only, rank_zero_warn
from torch import Tensor

from inr.callbacks.budget import budget_of
from inr.callbacks.media import log_figure
from inr.errors import InputError
from inr.io.files import atomic_write
from inr.io.run_dir import shared_run_dir
from inr.modes import eval_mode
from inr.spectral import BandPartition, MaxFrequency, grid_dft, resolve_max_frequency, summarise_band_errors
from inr.spectral.plots import band_spread_figure, heatmap_figure, spectra_figure

SOURCES = ("auto", "train", "full")
HISTORY_KEYS = ("epochs", "steps", "errors", "dc", "low", "high", "all", "prediction_power", "residual_power")
SCALAR_KEYS = ("dc", "low", "high", "all")
# A figure draw costs about a hundred measurements (benchmarks/spectral_overhead.py: 198 ms against 2.7 ms); until
# one has been timed, the monitoring budget expects that of the first draw
FIGURE_COST_IN_MEASUREMENTS = 100


def dc_bin(spectrum: Tensor) -> Tensor:
    """The DC bin of every channel of a (C, *shape) spectrum -> (C,)."""
    return spectrum.reshape(spectrum.shape[0], -1)[:, 0]  # (C, *shape) -> (C, numel); k = 0 is flat index 0


def target_is_field(pl_module: L.LightningModule) -> bool:
    """Whether the task's field can be compared with a ground truth: its data's target is the field, or the task
    gives the field's truth through ``target_grid()`` (e.g. gradient supervision: the image whose gradient the
    data holds)."""
    channels = getattr(pl_module, "target_channels", lambda: pl_module.out_channels)()
    return channels == pl_module.out_channels or pl_module.target_grid().shape[0] == pl_module.out_channels


def field_truth(pl_module: L.LightningModule, grid: str) -> Tensor:
    """The field's ground truth on the ``train`` grid (C, *train_shape) or the task's render grid (``target_grid``)."""
    dm = pl_module.data
    if grid != "train":
        return pl_module.target_grid()
    if getattr(pl_module, "target_channels", lambda: pl_module.out_channels)() == pl_module.out_channels:
        return dm.values_grid(dm.train_index, dm.train_shape)
    full = pl_module.target_grid()  # (C, *shape): the truth of a task whose data is not the field
    return full.reshape(full.shape[0], -1)[:, dm.train_index.to(full.device)].reshape(full.shape[0], *dm.train_shape)


def measurement_bytes(numel: int, channels: int) -> int:
    """Memory of one measurement: prediction, target, the cached target DFT, residual and prediction DFTs
    (complex64), their powers, and the two band assignments (int64), in bytes."""
    return numel * (channels * (4 + 4 + 8 + 8 + 8 + 4 + 4) + 2 * 8 + 8)


class SpectralBiasCallback(L.Callback):
    """Which frequencies has the network learned? Δ_b = ‖F[f − y]‖_b / ‖F[y]‖_b per radial band, every epoch.

    Every ``every_n_epochs`` training epochs (and once when training ends) the callback takes the field on
    a regular grid of the task, computes the band errors (``inr.spectral``) and radial power spectra, and
    logs ``spectral/rel_err/band_XX`` (bands without target energy are not logged), ``spectral/rel_err/dc``
    (the mean colour's error, kept out of every band: ``inr.spectral``), ``/low`` and ``/high`` (pooled over
    the lower and upper half of the bands) and ``/all`` (every band; none of the three includes DC); every
    ``figure_every_n_epochs`` epochs also the figures ``spectral/heatmap`` (steps × bands) and
    ``spectral/spectra``. The whole history is saved to ``<log_dir>/<filename>`` after each measurement.

    Args:
        every_n_epochs: measure every this many epochs.
        every_n_steps: measure every this many optimizer steps instead (also between the steps of one Lightning
            step, ``inner_steps``), e.g. 10 on an epoch of 100 full-batch steps.
        num_bands, spacing, max_frequency: the bands, as in ``inr.spectral.band_relative_error``.
        source: the grid measured. ``auto``: the training grid when the task's last step was a full batch on
            it (its prediction is reused: no extra forward pass), otherwise the whole data grid, rendered.
            ``train``: always the training grid (predicted when there is nothing to reuse). ``full``: always
            the whole grid (with ``split: every_other`` this includes the held-out pixels).
        figure_every_n_epochs: draw the figures every this many epochs (0: only when training ends). A draw
            costs about a hundred measurements (benchmarks/spectral_overhead.py), hence its own cadence.
        spectrum_bins: bins of the radial spectra (default one per cycle per unit up to e_B).
        max_memory_mb: a grid whose measurement needs more than this is skipped, with one warning.
        filename: name of the history file in the run directory.

    A reused prediction is the one the last step computed before its update, so it is recorded at step
    ``global_step − 1``; rendered ones at ``global_step``. Runs on global rank 0 only and issues no collective
    there, so other DDP ranks never wait on it. Its history is part of the checkpoint: a resumed run
    continues it. With a ``MonitoringBudget`` among the callbacks (``inr.callbacks.budget``) a measurement or a
    figure draw that would take the run's observation beyond its share of the wall time is skipped (the closing
    measurement and figures never are).

    A model with members (``model.members`` K) is measured member by member against its own target: the
    history holds each member's values (errors (E, K, B), dc/low/high/all (E, K)); logged are the bands' mean
    and std over the members (``spectral/rel_err/band_XX/mean`` and ``/std``, population std) and dc, low, high
    and all per member (``.../m{k}``) with their mean and std; the figures show the members' mean, and
    ``spectral/bands`` the latest band errors as mean ± std with each member's line.
    """

    supports_members = True

    def __init__(
        self,
        every_n_epochs: int = 1,
        every_n_steps: Optional[int] = None,
        num_bands: int = 16,
        spacing: Literal["linear", "log"] = "linear",
        max_frequency: Union[float, Literal["nyquist", "corner"]] = "nyquist",
        source: Literal["auto", "train", "full"] = "auto",
        figure_every_n_epochs: int = 25,
        spectrum_bins: Optional[int] = None,
        max_memory_mb: float = 1024.0,
        filename: str = "spectral_history.npz",
    ) -> None:
        if every_n_epochs < 1 or figure_every_n_epochs < 0 or num_bands < 1 or (every_n_steps is not None and every_n_steps < 1):
            raise InputError(
                "SpectralBiasCallback needs every_n_epochs ≥ 1, every_n_steps ≥ 1 (or null), figure_every_n_epochs ≥ 0, num_bands ≥ 1"
            )
        self.every_n_steps = every_n_steps
        if not max_memory_mb > 0:  # 0 would skip every measurement: the callback there and measuring nothing
            raise InputError(f"SpectralBiasCallback.max_memory_mb must be > 0 MiB, got {max_memory_mb:g}")
        if source not in SOURCES:
            raise ValueError(f"SpectralBiasCallback.source must be one of {', '.join(SOURCES)}, got {source!r}")
        self.every_n_epochs, self.num_bands, self.spacing = every_n_epochs, num_bands, spacing
        self.max_frequency: MaxFrequency = max_frequency
        self.source, self.figure_every_n_epochs, self.spectrum_bins = source, figure_every_n_epochs, spectrum_bins
        self.max_memory_mb, self.filename = max_memory_mb, filename
        self.history: dict[str, Any] = self._empty_history()
        self.skipped = False
        self.run_dir: Optional[str] = None
        self._targets: dict[tuple, dict[str, Any]] = {}
        self._drawn_step: Optional[int] = None

    @staticmethod
    def _empty_history() -> dict[str, Any]:
        return {
            **{k: [] for k in HISTORY_KEYS},
            "grid": None,
            "shape": None,
            "edges": None,
            "spectrum_edges": None,
            "target_power": None,
            "target_energy": None,
        }

    # --- hooks (every rank) ---------------------------------------------------------------------------
    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        # a broadcast from rank 0: it must be read here, on all ranks, never in rank-0 code
        self.run_dir = str(shared_run_dir(trainer))
        if stage == "fit":
            self.check_before_fit(pl_module, pl_module.data)

    def check_before_fit(self, pl_module: L.LightningModule, datamodule: Any) -> None:
        """Refuse a grid that holds no frequency band: an axis of 1 point (Nyquist radius 0), as the every_other
        training grid of ``data.resolution 2``, which would fail at the closing measurement. Called by the command
        before anything is written (``inr.run.preflight``) and again at setup; ``auto`` is checked on the training
        grid, the one it measures whenever the task's steps allow."""
        full = self.source == "full"
        shape = getattr(datamodule, "shape", None) if full else getattr(datamodule, "train_shape", None)
        if full:
            try:  # the task's render grid (a radiance field's image size), once it knows its data
                shape = pl_module.grid_shape
            except RuntimeError:
                pass
        if shape is not None and min(shape) < 2:
            raise InputError(
                f"SpectralBiasCallback: the {'whole' if full else 'training'} grid {'×'.join(map(str, shape))} has an "
                "axis of fewer than 2 points, so it holds no frequency band; choose a larger data.resolution, or leave "
                "the callback out"
            )

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        self._measure_at_step(trainer, pl_module, ends_batch=True)

    def on_inner_step_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Between two optimizer steps of one Lightning step (``inner_steps``): a measurement due at this step."""
        if self._due_at_step(trainer):
            pl_module.refresh_grid_prediction()  # the prediction of the step just taken, for reuse
            self._measure_at_step(trainer, pl_module)

    def _due_at_step(self, trainer: L.Trainer) -> bool:
        step = trainer.global_step
        return self.every_n_steps is not None and step % self.every_n_steps == 0 and not self._measured_step(step)

    def _measured_step(self, step: int) -> bool:
        """A measurement at this global step (or, reused, the step before) is in the history already (a resume)."""
        return bool(self.history["steps"]) and self.history["steps"][-1] >= step - 1

    def _measure_at_step(self, trainer: L.Trainer, pl_module: L.LightningModule, ends_batch: bool = False) -> None:
        if self._due_at_step(trainer) and not final_step(trainer):
            every_figure = self.figure_every_n_epochs * self.every_n_steps  # with every_n_steps: in measurements
            figures = self.figure_every_n_epochs > 0 and trainer.global_step % every_figure == 0
            ends_epoch = ends_batch and trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
            self.measure(trainer, pl_module, final=False, figures=figures, epochs_done=trainer.current_epoch + ends_epoch)

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self.every_n_steps is not None:
            return
        epoch = trainer.current_epoch
        if self.history["epochs"] and self.history["epochs"][-1] >= epoch + 1:
            return  # this epoch's end was measured before the checkpoint a resumed run started from
        if (epoch + 1) % self.every_n_epochs == 0:
            # the last epoch's figures would be drawn again moments later by on_train_end
            last = (0 < trainer.max_steps <= trainer.global_step) or (0 < (trainer.max_epochs or 0) <= epoch + 1)
            figures = self.figure_every_n_epochs > 0 and (epoch + 1) % self.figure_every_n_epochs == 0 and not last
            self.measure(trainer, pl_module, final=False, figures=figures)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.measure(trainer, pl_module, final=True, figures=True)

    # --- the measurement (rank 0) ---------------------------------------------------------------------
    @rank_zero_only
    def measure(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        final: bool = False,
        figures: bool = False,
        epochs_done: Optional[int] = None,
    ) -> None:
        """Measure the current field, log it, append it to the history and save the history file. ``epochs_done``:
        the training epochs completed (default: this epoch's end, or when training ends the counter's value)."""
        if self.skipped:
            return
        if not target_is_field(pl_module):
            rank_zero_warn(
                f"SpectralBiasCallback: {type(pl_module).__name__}'s target is not its field ({pl_module.target_channels()} "
                f"channels for {pl_module.out_channels} outputs) and its target_grid() does not give the field's "
                "ground truth; spectral logging is skipped"
            )
            self.skipped = True
            return
        dm, members = pl_module.data, getattr(pl_module, "members", None)
        grid = self._choose_grid(pl_module)
        shape = tuple(dm.train_shape) if grid == "train" else tuple(pl_module.grid_shape)  # the task's render() grid
        needed = measurement_bytes(int(np.prod(shape)), dm.out_channels * (members or 1))
        if needed > self.max_memory_mb * 2**20:
            rank_zero_warn(
                f"SpectralBiasCallback: measuring the {grid} grid {shape} × {dm.out_channels} channels needs about "
                f"{needed / 2**20:.0f} MiB, over max_memory_mb={self.max_memory_mb:g}; spectral logging is skipped"
            )
            self.skipped = True
            return
        reuse = grid == "train" and not final and self._reusable(pl_module)
        step = trainer.global_step - 1 if reuse else trainer.global_step
        if final and self.history["steps"] and self.history["steps"][-1] >= step:
            if figures and self._drawn_step != self.history["steps"][-1]:
                self._draw(trainer)
            return
        # epochs completed: the counter has already moved on when training ends
        epochs = epochs_done if epochs_done is not None else trainer.current_epoch + (0 if final else 1)
        budget = budget_of(trainer)
        if budget is None or final:
            self._measure(trainer, pl_module, (grid, shape, members), reuse, step, epochs)
            if figures:
                self._draw(trainer)
            return
        if not budget.allows("spectral"):
            return
        with budget.timed("spectral"):
            self._measure(trainer, pl_module, (grid, shape, members), reuse, step, epochs)
        estimate = FIGURE_COST_IN_MEASUREMENTS * budget.costs["spectral"]
        if figures and budget.allows("spectral figures", estimate=estimate):
            with budget.timed("spectral figures"):
                self._draw(trainer)

    def _measure(
        self, trainer: L.Trainer, pl_module: L.LightningModule, where: tuple, reuse: bool, step: int, epochs: int
    ) -> None:
        """One measurement of the field on ``where`` (grid name, shape, members), recorded, logged and saved."""
        grid, shape, members = where
        with torch.no_grad():
            pred = (pl_module.last_train_grid_prediction if reuse else self._predict(pl_module, grid)).detach()
            if members is None:
                result = self._compute(pl_module, grid, shape, pred)
            else:  # (K, C, *shape): each member against its own target
                result = stack_results([self._compute(pl_module, grid, shape, p, member=k) for k, p in enumerate(pred)])
        self._record(epochs, step, grid, shape, result)
        self._log_scalars(trainer, step, result)
        self.save()

    def _reusable(self, pl_module: L.LightningModule) -> bool:
        pred = getattr(pl_module, "last_train_grid_prediction", None)
        shape = tuple(pl_module.data.train_shape)  # the prediction is (C, *shape), or (K, C, *shape) for members
        return pred is not None and tuple(pred.shape[-len(shape) :]) == shape

    def _choose_grid(self, pl_module: L.LightningModule) -> str:
        if self.source != "auto":
            return self.source
        if self.history["grid"] is not None:  # a run keeps the grid it started on (e.g. the final measurement)
            return self.history["grid"]
        return "train" if self._reusable(pl_module) else "full"

    def _predict(self, pl_module: L.LightningModule, grid: str) -> Tensor:
        """The field on the chosen grid, (C, *shape), in eval mode and chunked; the mode is restored."""
        with eval_mode(pl_module):
            if grid == "full":
                return pl_module.render()
            dm = pl_module.data
            chunks = dm.train_index.split(pl_module.render_chunk)
            out = torch.cat([pl_module.predict(dm.grid.coords(c.to(pl_module.device))) for c in chunks], dim=-2)
            # (N, C) -> (C, *train_shape); members: (K, N, C) -> (K, C, *train_shape)
            return out.transpose(-1, -2).reshape(*out.shape[:-2], out.shape[-1], *dm.train_shape)

    def _target(self, pl_module: L.LightningModule, grid: str, shape: tuple, member: Optional[int] = None) -> dict[str, Any]:
        """The target's DFT, band energies and spectrum on the chosen grid, computed once per grid/device (and,
        for a model with members, once per target: a shared one once)."""
        dm = pl_module.data
        targets = int(getattr(dm, "targets", 1))
        index = None if member is None else (member if targets > 1 else 0)
        key = (grid, shape, str(pl_module.device), index)
        if key not in self._targets:
            target = field_truth(pl_module, grid)
            if index is not None:  # (T·C, *shape) of the data, or (K, C, *shape) of the task -> this member's (C, *shape)
                target = target.reshape(-1, pl_module.out_channels, *shape)[index]
            target = target.to(pl_module.device)
            bands = BandPartition(shape, self.num_bands, self.spacing, self.max_frequency, device=target.device)
            f = resolve_max_frequency(shape, self.max_frequency)
            spectrum = BandPartition(shape, self.spectrum_bins or max(1, int(np.ceil(f))), "linear", f, device=target.device)
            target_hat = grid_dft(target)
            power = target_hat.abs().square()
            self._targets[key] = {
                "target": target,
                "hat": target_hat,
                "bands": bands,
                "spectrum": spectrum,
                "energy": bands.sum(power),
                "dc_energy": dc_bin(power).sum(),
                "power": spectrum.mean(power),
            }
        return self._targets[key]

    def _compute(
        self, pl_module: L.LightningModule, grid: str, shape: tuple, pred: Tensor, member: Optional[int] = None
    ) -> dict[str, Any]:
        t = self._target(pl_module, grid, shape, member)
        residual_hat = grid_dft(pred.to(t["target"].dtype) - t["target"])  # F[f − y], one FFT per measurement
        residual_power = residual_hat.abs().square()
        summary = summarise_band_errors(t["bands"].sum(residual_power), t["energy"], dc_bin(residual_power).sum(), t["dc_energy"])
        return {
            **summary,
            "prediction_power": t["spectrum"].mean((residual_hat + t["hat"]).abs().square()),  # F[f] = F[f − y] + F[y]
            "residual_power": t["spectrum"].mean(residual_power),
            "t": t,
        }

    def _record(self, epoch: int, step: int, grid: str, shape: tuple, r: dict[str, Any]) -> None:
        h, t = self.history, r["t"]
        edges = t["bands"].edges.tolist()
        if h["edges"] is not None and (h["edges"] != edges or h["grid"] != grid):
            rank_zero_warn("SpectralBiasCallback: the grid or bands changed since the stored history; starting a new one")
            h = self.history = self._empty_history()
        if h["edges"] is None:
            h.update(
                grid=grid,
                shape=list(shape),
                edges=edges,
                spectrum_edges=t["spectrum"].edges.tolist(),
                target_power=t["power"].double().cpu().tolist(),
                target_energy=t["energy"].double().cpu().tolist(),
            )
        h["epochs"].append(int(epoch))
        h["steps"].append(int(step))
        for key in ("errors", "prediction_power", "residual_power"):
            h[key].append(r[key].double().cpu().tolist())
        for key in SCALAR_KEYS:  # a number, or one per member
            h[key].append(float(r[key]) if r[key].ndim == 0 else r[key].double().cpu().tolist())

    def _log_scalars(self, trainer: L.Trainer, step: int, r: dict[str, Any]) -> None:
        width = max(2, len(str(self.num_bands - 1)))
        if r["errors"].ndim == 2:  # members: (K, B)
            metrics = member_scalars(r, width)
        else:
            metrics = {f"spectral/rel_err/band_{b:0{width}d}": e for b, e in enumerate(r["errors"].tolist()) if np.isfinite(e)}
            metrics.update({f"spectral/rel_err/{k}": float(r[k]) for k in SCALAR_KEYS if np.isfinite(float(r[k]))})
        for logger in trainer.loggers:
            logger.log_metrics(metrics, step=step)

    def _draw(self, trainer: L.Trainer) -> None:
        h = self.history
        if not h["steps"]:
            return
        step = self._drawn_step = h["steps"][-1]
        errors, dc = np.array(h["errors"]), np.array(h["dc"])
        members = errors.shape[1] if errors.ndim == 3 else None  # (E, K, B): the members' mean is drawn
        spectra = {"target": h["target_power"], "prediction": h["prediction_power"][-1], "residual": h["residual_power"][-1]}
        what = f"spectral bias ({h['grid']} grid)"
        if members is not None:
            spectra = {name: np.mean(np.array(power), axis=0) for name, power in spectra.items()}
            spread = band_spread_figure(np.array(h["edges"]), errors[-1], f"band errors of {members} members, step {step}")
            log_figure(trainer, "spectral/bands", spread, step)
            errors, dc, what = errors.mean(axis=1), dc.mean(axis=1), f"{what}, mean of {members} members"
        heat = heatmap_figure(h["steps"], np.array(h["edges"]), errors, what, dc=dc)
        spec = spectra_figure(np.array(h["spectrum_edges"]), spectra, f"radial power spectra, step {step}")
        log_figure(trainer, "spectral/heatmap", heat, step)
        log_figure(trainer, "spectral/spectra", spec, step)

    # --- the history ----------------------------------------------------------------------------------
    def history_arrays(self) -> dict[str, np.ndarray]:
        """The history as arrays: epochs (training epochs completed), steps (E,); errors (E, B); dc/low/high/all (E,); edges (B+1,);
        target_energy (B,); spectrum_edges (S+1,); target_power (S,); prediction/residual_power (E, S);
        grid (the grid's name) and shape. For K members: errors (E, K, B), dc/low/high/all (E, K), target_energy
        (K, B), target_power (K, S), prediction/residual_power (E, K, S)."""
        h = self.history
        out = {k: np.asarray(h[k], dtype=np.int64 if k in ("epochs", "steps") else np.float64) for k in HISTORY_KEYS}
        for k in ("edges", "spectrum_edges", "target_power", "target_energy"):
            out[k] = np.asarray(h[k] if h[k] is not None else [], dtype=np.float64)
        out["grid"], out["shape"] = np.asarray(h["grid"] or ""), np.asarray(h["shape"] or [], dtype=np.int64)
        return out

    def save(self, path: Optional[str] = None) -> Optional[str]:
        """Write the history (``history_arrays``) to ``path`` (default the run directory), atomically."""
        path = path or (os.path.join(self.run_dir, self.filename) if self.run_dir else None)
        if path is None:
            return None
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with atomic_write(path) as f:  # readers never see a half-written file; the run's usual file mode
            np.savez(f, **self.history_arrays())
        return path

    def state_dict(self) -> dict[str, Any]:
        return {"history": self.history, "skipped": self.skipped}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.history = {**self._empty_history(), **state_dict.get("history", {})}
        if len(self.history["dc"]) < len(self.history["steps"]):  # a history saved before DC was kept apart
            self.history["dc"] = [float("nan")] * len(self.history["steps"])
        self.skipped = bool(state_dict.get("skipped", False))


def stack_results(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The measurements of K members as one: every value stacked on a first axis of K (bands and spectra shared)."""
    out = {key: torch.stack([r[key] for r in results]) for key in results[0] if key != "t"}
    first = results[0]["t"]
    out["t"] = {
        "bands": first["bands"],
        "spectrum": first["spectrum"],
        **{key: torch.stack([r["t"][key] for r in results]) for key in ("power", "energy")},
    }
    return out


def member_scalars(r: dict[str, Any], width: int) -> dict[str, float]:
    """Logged values of K members' measurement: each band's mean and std over the members (bands without target
    energy left out), and dc/low/high/all per member with their mean and std (population std, ddof 0)."""
    errors = r["errors"].double()  # (K, B)
    metrics = {}
    for b, (mean, std) in enumerate(zip(errors.mean(0).tolist(), errors.std(0, correction=0).tolist())):
        if np.isfinite(mean):
            metrics[f"spectral/rel_err/band_{b:0{width}d}/mean"] = mean
            metrics[f"spectral/rel_err/band_{b:0{width}d}/std"] = std
    for key in SCALAR_KEYS:
        values = r[key].double()
        if not torch.isfinite(values).all():
            continue
        metrics.update({f"spectral/rel_err/{key}/m{k}": float(v) for k, v in enumerate(values)})
        metrics[f"spectral/rel_err/{key}/mean"] = float(values.mean())
        metrics[f"spectral/rel_err/{key}/std"] = float(values.std(correction=0))
    return metrics


def final_step(trainer: L.Trainer) -> bool:
    """The run's last optimizer step was just taken (max_steps): ``on_train_end`` measures it."""
    return trainer.max_steps is not None and 0 <= trainer.max_steps <= trainer.global_step
