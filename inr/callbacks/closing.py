"""The closing metrics of a command — fit's closing evaluation (``test/psnr``, ``full/psnr``, ``full/ssim``, IoU,
Chamfer, …), validate's and test's scores — in every logger and in ``metrics.json`` of the run directory.

- every logger gets them as metrics at the run's last step (``log_metrics``), so a CSV has their columns and
  MLflow and Comet their values;
- TensorBoard also gets its HParams entry: the config's hyper-parameters (``config_hparams``) with these metrics
  and ``hp_metric``, the headline metric's value (``headline``: held-out PSNR where there is one), written once,
  at the end — Lightning's placeholder ``hp_metric = −1`` at the start is left out (``hold_loggers``: the start's
  ``log_hyperparams`` is given no metrics), since TensorBoard shows only the first HParams entry of a run;
- W&B's run summary gets them (the values its table of runs shows);
- ``metrics.json`` holds them with the command and the step, written whole or not at all.

Lightning closes the loggers when its ``fit``/``validate``/``test`` returns, before the closing evaluation: a
TensorBoard writer written to after that starts a second event file. ``hold_loggers`` keeps each logger's
``finalize("success")`` until ``HeldLoggers.release`` (a failure's ``finalize("failed")`` passes at once).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, Union

import lightning as L
from lightning.pytorch.utilities import rank_zero_only

from inr.io.files import atomic_write

METRICS_NAME = "metrics.json"
# the metric TensorBoard's hp_metric shows, the first present: held-out PSNR, the whole grid's (an inverse
# problem's reconstruction), the members' mean, a shape's IoU; else the first test/ metric, else the first
HEADLINES = ("test/psnr", "full/psnr", "test/psnr/mean", "full/psnr/mean", "test/iou_uniform", "val/psnr")
# the Trainer settings that say how long and how a run trained, beside the model and data sections
TRAINER_KEYS = ("max_steps", "max_epochs", "precision", "accumulate_grad_batches", "gradient_clip_val")


def headline(metrics: Mapping[str, float]) -> Optional[str]:
    """The key of the metric that stands for the run (TensorBoard's ``hp_metric``).

    Example:
        >>> headline({"train/psnr": 30.0, "full/psnr": 27.0, "test/psnr": 25.0}), headline({"test/iou_near": 0.9})
        ('test/psnr', 'test/iou_near')
    """
    for key in HEADLINES:
        if key in metrics:
            return key
    tests = sorted(k for k in metrics if k.startswith("test/"))
    return tests[0] if tests else min(metrics, default=None)


def _scalar(value: Any) -> Union[int, float, str, bool]:
    """A value TensorBoard's HParams can show: numbers and text as they are, anything else as its text."""
    if isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else str(value)


def flatten(section: Any, prefix: str) -> dict[str, Any]:
    """A config section as ``prefix.key.sub`` -> value, without the ``init_args`` level of each class.

    Example:
        >>> flatten({"class_path": "inr.encoders.GaussianEncoding", "init_args": {"sigma": 10.0, "seed": 0}}, "model.encoder")
        {'model.encoder.class_path': 'inr.encoders.GaussianEncoding', 'model.encoder.sigma': 10.0, 'model.encoder.seed': 0}
    """
    if not isinstance(section, Mapping):
        return {prefix: _scalar(section)}
    out: dict[str, Any] = {}
    for key, value in section.items():
        out.update(flatten(value, prefix if key == "init_args" else f"{prefix}.{key}"))
    return out


def config_hparams(config: Mapping[str, Any]) -> dict[str, Any]:
    """The hyper-parameters of a command's config as flat keys: the model and data sections, the seed and the
    Trainer's length and precision (callbacks and loggers observe and are left out).

    Example:
        >>> config = {"seed_everything": 0, "model": {"class_path": "inr.tasks.ImageFitting", "init_args": {"out_channels": 3}},
        ...           "trainer": {"max_steps": 300, "callbacks": []}}
        >>> config_hparams(config)
        {'model.class_path': 'inr.tasks.ImageFitting', 'model.out_channels': 3, 'seed_everything': 0, 'trainer.max_steps': 300}
    """
    out: dict[str, Any] = {}
    for name in ("model", "data"):
        if config.get(name) is not None:
            out.update(flatten(config[name], name))
    if "seed_everything" in config:
        out["seed_everything"] = _scalar(config["seed_everything"])
    trainer = config.get("trainer") or {}
    out.update({f"trainer.{k}": _scalar(trainer[k]) for k in TRAINER_KEYS if k in trainer})
    return out


def _is_tensorboard(logger: Any) -> bool:
    """Lightning's TensorBoard logger (of either package), which writes TensorBoard's HParams entry."""
    from lightning.fabric.loggers import TensorBoardLogger as FabricTensorBoard
    from lightning.pytorch.loggers import TensorBoardLogger

    return isinstance(logger, (TensorBoardLogger, FabricTensorBoard))


class HeldLoggers:
    """The loggers whose ``finalize("success")`` waits for ``release``, and whose TensorBoard ``log_hyperparams``
    writes no metrics (Lightning's placeholder ``hp_metric``) until then (``hold_loggers``)."""

    def __init__(self, loggers: list[Any]) -> None:
        self.loggers, self.pending, self.released = loggers, [], False
        for logger in loggers:
            original = logger.finalize

            def finalize(status: str = "success", original=original) -> None:
                if status == "success" and not self.released:
                    self.pending.append(original)
                else:
                    original(status)

            logger.finalize = finalize  # an instance attribute: this logger only, until release
            if _is_tensorboard(logger):
                log_hyperparams = logger.log_hyperparams

                def hparams_only(params: Any, metrics: Any = None, step: Optional[int] = None, log=log_hyperparams) -> None:
                    # no metrics given: Lightning's TensorBoardLogger would write hp_metric = −1 and the HParams entry
                    # now; an empty dict keeps the parameters (hparams.yaml) and writes neither
                    log(params, {} if metrics is None else metrics, step=step)

                logger.log_hyperparams = hparams_only

    def release(self) -> None:
        """Restore each logger's own ``finalize`` and ``log_hyperparams`` and run the closings held; a second call
        does nothing."""
        if self.released:
            return
        self.released = True
        for logger in self.loggers:
            for name in ("finalize", "log_hyperparams"):
                vars(logger).pop(name, None)
        held, self.pending = self.pending, []
        for finalize in held:
            finalize("success")


def hold_loggers(trainer: L.Trainer) -> HeldLoggers:
    """Before the Trainer runs: each logger's closing waits for the closing metrics, and TensorBoard writes no
    placeholder ``hp_metric`` (its HParams entry is written once, with the real metrics)."""
    return HeldLoggers(list(trainer.loggers))


def tensorboard_hparams(logger: Any, hparams: Mapping[str, Any], metrics: Mapping[str, float], step: int) -> None:
    """TensorBoard's HParams entry of the run: the hyper-parameters and the names of ``metrics``, whose values
    TensorBoard reads from the run's scalars of those names (as Lightning's ``log_hyperparams`` writes it)."""
    from torch.utils.tensorboard.summary import hparams as hparams_summary

    experiment, start, end = hparams_summary({k: _scalar(v) for k, v in hparams.items()}, dict(metrics))
    writer = logger.experiment._get_file_writer()
    for summary in (experiment, start, end):
        writer.add_summary(summary, step)


@rank_zero_only
def log_closing_metrics(
    trainer: L.Trainer, metrics: Mapping[str, float], hparams: Mapping[str, Any], step: int, logged: bool = False
) -> Optional[str]:
    """Send the closing metrics to every logger of ``trainer`` at ``step`` (see the module docstring); ``logged``:
    the Trainer has logged them already (validate, test), so only ``hp_metric``, TensorBoard's HParams entry and
    W&B's summary are added. Returns the headline metric's key."""
    values = {k: float(v) for k, v in metrics.items()}
    key = headline(values)
    for logger in trainer.loggers:
        scalars = {} if logged else dict(values)
        if _is_tensorboard(logger):
            if key is not None:
                scalars["hp_metric"] = values[key]
            tensorboard_hparams(logger, hparams, {**values, **scalars}, step)
        if scalars:
            logger.log_metrics(scalars, step)
        summary = getattr(getattr(logger, "experiment", None), "summary", None)
        if callable(getattr(summary, "update", None)):  # W&B's run summary
            summary.update(values)
        logger.save()
    return key


def json_value(value: float) -> Optional[float]:
    """A metric for JSON: finite as it is, ±∞ and NaN as null (an exact fit's PSNR is +∞).

    Example:
        >>> json_value(27.5), json_value(float("inf"))
        (27.5, None)
    """
    return value if math.isfinite(value) else None


@rank_zero_only
def write_metrics(directory: Union[str, Path], metrics: Mapping[str, float], **record: Any) -> Path:
    """``<directory>/metrics.json``: ``record`` (command, step, …) and ``metrics`` (non-finite values as null),
    atomically; returns the file."""
    path = Path(directory) / METRICS_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    values = {k: json_value(float(v)) for k, v in sorted(metrics.items())}
    with atomic_write(path, "w") as f:
        f.write(json.dumps({**record, "metrics": values}, indent=1, allow_nan=False) + "\n")
    return path
