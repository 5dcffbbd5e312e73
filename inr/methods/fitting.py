"""``fit``: a signal, an image or a volume fitted by one method of the registry, in three lines of Python, on the
tasks, data modules and Lightning Trainer that the command line and the comparisons use (no second engine).

    import inr
    model = inr.fit("data/astronaut.png", method="gaussian", steps=300)  # a file, or an array (see below)
    image = model.render((512, 512))    # (3, 512, 512): the field at twice the grid, in chunks; model.predict(coords)
    print(model.summary)                # {'test/psnr': ..., 'full/psnr': ..., 'full/ssim': ..., 'seconds': ..., ...}

What it builds: the data module of the input (``ImageDataModule`` for an image file, ``SignalDataModule`` for a
.wav, ``VolumeDataModule`` in density mode for a volume file or a scan; an array as given, ``ArrayDataModule``), the
method resolved by the registry for that grid (``inr.methods.registry``: the grid rule and the protocol's
learning rate — the paper's natural-image settings for images, the ``signal`` and ``volume`` protocols otherwise),
the task (``ImageFitting``, ``SignalFitting``, ``VolumeFitting``) and the experiments' quiet Trainer
(``inr.methods.training.fit_row``: ``steps`` optimizer steps, no checkpoints or logs unless ``logger`` is given). The training
split is the paper's ``every_other`` (``split="all"`` trains on every sample); the closing evaluation
(``evaluate()``, on the device that trained) is ``model.summary``. The model comes back on the CPU in eval mode,
its data attached: ``render()`` without a shape renders the data's grid, and ``evaluate()`` scores it again.

Arrays (numpy or torch) are channel-last: (N,) or, with ``kind="signal"``, (N, C) a signal; (H, W) and (H, W, C)
with C ≤ 4 an image; (D, H, W) and (D, H, W, C) a volume. uint8 and uint16 values are scaled to [0, 1]; the
values of an image or a volume must lie in [0, 1] (its network ends in a sigmoid), a signal's may be any real
numbers (PSNR is taken over their range).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Optional, Union

import lightning as L
import numpy as np
import torch
from torch import Tensor

from inr.callbacks.closing import HeldLoggers, log_closing_metrics
from inr.data.image import IMAGE_EXTENSIONS, ImageDataModule
from inr.data.medical import is_scan
from inr.data.module import GridDataModule
from inr.data.paths import resolve_data_path
from inr.data.signal import WAV_EXTENSIONS, SignalDataModule
from inr.data.volume import VolumeDataModule, read_volume_array
from inr.errors import InputError
from inr.methods.protocols import PROTOCOLS
from inr.methods.registry import METHODS, Setting
from inr.methods.training import fit_row
from inr.run.cli import DropAdvertisements  # noqa: F401 - importing it keeps Lightning's advertisements out, as in the command
from inr.tasks import ImageFitting, INRModule, SignalFitting, VolumeFitting

Kind = Literal["signal", "image", "volume"]
# per kind: grid dimension, the registry's protocol, the network's output activation
KINDS: dict[str, tuple[int, str, str]] = {
    "signal": (1, "signal", "none"),
    "image": (2, "natural", "sigmoid"),
    "volume": (3, "volume", "sigmoid"),
}
# integer samples as the readers scale them: 8-bit and 16-bit to [0, 1]
INTEGER_SCALE = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}


class ArrayDataModule(GridDataModule):
    """A target given as an array (*grid, C), on its grid as it is, with the split and batches of any grid data.

    Example:
        >>> dm = ArrayDataModule(torch.rand(8, 6, 3), split="every_other")
        >>> dm.shape, dm.out_channels, dm.train_shape
        ((8, 6), 3, (4, 3))
    """

    def __init__(self, values: Tensor, label: str = "the given array", mode: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._given, self.label, self.mode = values, label, mode  # ``mode``: what VolumeFitting checks

    def load_values(self) -> Tensor:
        return self._given

    def describe(self) -> str:
        return self.label


def infer_kind(ndim: int, channels_last: int) -> Kind:
    """The kind of an array from its dimensions: 1-D a signal, 2-D a gray image, 3-D an image when its last axis
    holds at most 4 channels (else a volume), 4-D a volume.

    Example:
        >>> infer_kind(1, 1024), infer_kind(2, 64), infer_kind(3, 3), infer_kind(3, 32), infer_kind(4, 1)
        ('signal', 'image', 'image', 'volume', 'volume')
    """
    if ndim == 1:
        return "signal"
    if ndim == 2:
        return "image"
    if ndim == 3:
        return "image" if channels_last <= 4 else "volume"
    if ndim == 4:
        return "volume"
    raise InputError(f"fit: an array of {ndim} dimensions is no signal (N,), image (H, W[, C]) or volume (D, H, W[, C])")


def array_values(array: Any, kind: Optional[Kind]) -> tuple[Tensor, Kind]:
    """A numpy array or tensor as values (*grid, C) float32 and its kind (``kind`` or inferred); integer images and
    volumes scaled to [0, 1], and refused in one line where they do not fit the kind."""
    data = array.detach().cpu().numpy() if isinstance(array, Tensor) else np.asarray(array)
    if data.dtype == bool:
        data = data.astype(np.float32)
    if not (np.issubdtype(data.dtype, np.floating) or np.issubdtype(data.dtype, np.integer)):
        raise InputError(f"fit: an array of {data.dtype} values; give numbers")
    kind = kind or infer_kind(data.ndim, data.shape[-1] if data.ndim else 0)
    if kind not in KINDS:
        raise InputError(f"fit: unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    dims = KINDS[kind][0]
    if data.ndim not in (dims, dims + 1):
        raise InputError(f"fit: a {kind} array is {dims}-D or {dims + 1}-D with channels last, got shape {list(data.shape)}")
    if data.size == 0 or min(data.shape[:dims]) < 2:
        raise InputError(f"fit: a {kind} needs 2 samples or more per axis, got shape {list(data.shape)}")
    scale = INTEGER_SCALE.get(data.dtype) if kind != "signal" else None
    values = torch.from_numpy(np.ascontiguousarray(data, dtype=np.float64) / (scale or 1.0)).to(torch.float32)
    values = values[..., None] if data.ndim == dims else values  # (*grid) -> (*grid, 1)
    if not torch.isfinite(values).all():
        raise InputError("fit: the array contains NaN or infinite values")
    low, high = float(values.min()), float(values.max())
    if low == high:
        raise InputError(f"fit: the array is constant ({low:g}); nothing to fit")
    if kind != "signal" and (low < 0.0 or high > 1.0):
        raise InputError(
            f"fit: {kind} values must lie in [0, 1] (uint8 and uint16 are scaled), got [{low:.4g}, {high:.4g}]; "
            "scale them, or fit them as kind='signal'"
        )
    return values, kind


def file_data(path: Path, kind: Optional[Kind], resolution: Any, **data: Any) -> tuple[GridDataModule, Kind]:
    """The data module that reads ``path``, by its extension (``kind`` decides a TIFF: an image unless "volume")."""
    suffix = "".join(path.suffixes[-2:]).lower() if path.name.lower().endswith(".nii.gz") else path.suffix.lower()
    if kind in (None, "image") and suffix in IMAGE_EXTENSIONS:
        return ImageDataModule(path=str(path), resolution=resolution, **data), "image"
    if kind in (None, "signal") and suffix in WAV_EXTENSIONS:
        return SignalDataModule(path=str(path), length=resolution, **data), "signal"
    if suffix in (".npy", ".npz"):
        array = read_volume_array(path)  # a .npy is memory-mapped: its header says what it holds
        found = kind or infer_kind(array.ndim, array.shape[-1] if array.ndim else 0)
        if found == "volume":
            return VolumeDataModule(path=str(path), resolution=resolution, mode="density", **data), "volume"
        if resolution is not None:
            raise InputError(f"fit: {path}: resolution resamples images, sounds and volumes, not a saved {found}")
        values, found = array_values(np.asarray(array), found)
        return ArrayDataModule(values, str(path), **data), found
    if kind in (None, "volume") and (suffix in (".tif", ".tiff") or is_scan(path)):
        return VolumeDataModule(path=str(path), resolution=resolution, mode="density", **data), "volume"
    accepted = [*IMAGE_EXTENSIONS, *WAV_EXTENSIONS, ".npy", ".npz", ".nii", ".nii.gz", ".dcm", ".h5"]
    what = f" as a {kind}" if kind else ""
    raise InputError(
        f"fit: {path}: cannot read a {suffix or 'file without an extension'}{what}; use one of {', '.join(accepted)}"
    )


def fit(
    signal: Union[str, Path, np.ndarray, Tensor],
    method: str = "gaussian",
    steps: int = 300,
    *,
    kind: Optional[Kind] = None,
    resolution: Union[int, list[int], None] = None,
    split: Literal["every_other", "all"] = "every_other",
    batch_size: Optional[int] = None,
    width: int = 256,
    seed: int = 0,
    logger: Any = False,
    callbacks: Sequence[L.Callback] = (),
    **trainer_kwargs: Any,
) -> INRModule:
    """Fit ``signal`` (a file or an array, module docstring) with ``method`` of the registry for ``steps`` optimizer
    steps; returns the trained task with ``summary``, its closing metrics with the wall ``seconds`` and ``steps``.

    Args:
        signal: a path (image, .wav, .npy/.npz, multi-page TIFF with ``kind="volume"``, NIfTI/DICOM/fastMRI scan) or
            an array (numpy or torch, channels last).
        method: a name of ``inr.methods.registry.METHODS`` (``none``, ``basic``, ``positional``, ``gaussian``,
            ``siren``, ``hashgrid``, ``wire``, ...).
        steps: optimizer steps (full batch unless ``batch_size``).
        kind: ``signal``, ``image`` or ``volume``, where the input does not say (an (N, C) array is a signal).
        resolution: for a file, the size it is resampled to (images: a side or [h, w]; volumes: a side or
            [d, h, w]; sounds: the samples kept); None keeps it as it is.
        split: ``every_other`` (train on [::2, ...], score the held-out rest) or ``all``.
        batch_size: random samples per step instead of the full training split.
        width: hidden width of the MLP methods (the registry's other methods keep their own).
        seed: seeds the network's initialisation, the method's random features and the batches.
        logger, callbacks, trainer_kwargs: passed on to the Lightning Trainer (e.g. ``accelerator="gpu"``); each
            logger also gets the closing metrics of ``summary`` at the last step (TensorBoard its HParams entry with
            the call's settings, W&B its run summary), as the ``fit`` command sends them (``inr.callbacks.closing``).

    Example (a random 16² image, 20 steps):
        >>> import numpy as np
        >>> model = fit(np.random.default_rng(0).random((16, 16, 3)), method="gaussian", steps=20)
        >>> tuple(model.render((32, 32)).shape), tuple(model.predict(torch.rand(5, 2)).shape)
        ((3, 32, 32), (5, 3))
        >>> sorted(model.summary)
        ['full/psnr', 'full/ssim', 'seconds', 'steps', 'test/psnr', 'train/psnr']
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise InputError(f"fit: steps must be a whole number ≥ 1, got {steps!r}")
    if method not in METHODS:
        raise InputError(f"fit: unknown method {method!r}; choose one of {', '.join(METHODS)}")
    data = {"split": split, "batch_size": batch_size, "seed": seed}
    if isinstance(signal, (str, Path)):
        dm, kind = file_data(resolve_data_path(signal), kind, resolution, **data)
    else:
        if resolution is not None:
            raise InputError("fit: resolution resamples a file; an array is fitted on its own grid")
        values, kind = array_values(signal, kind)
        dm = ArrayDataModule(values, mode="density" if kind == "volume" else None, **data)
    dims, protocol, activation = KINDS[kind]
    if dm.ndim != dims:
        raise InputError(f"fit: {dm.describe()} is {dm.ndim}-D, not a {kind}")
    setting = Setting(
        in_dim=dims,
        train_side=min(dm.train_shape),
        protocol=PROTOCOLS[protocol],
        output_activation=activation,
        width=width,
        seed=seed,
        steps=steps,
    )
    try:
        spec = METHODS[method].resolve(setting)
    except ValueError as exc:  # a method of other dimensions, a grid too coarse for its band
        raise InputError(f"fit: {exc}") from None
    L.seed_everything(seed, verbose=False)
    encoder, network, optimizer = spec.build()
    parts = {"encoder": encoder, "network": network, "optimizer": optimizer, "scheduler": spec.build_scheduler()}
    if kind == "image":
        model = ImageFitting(**parts, out_channels=dm.out_channels)
    elif kind == "signal":
        span = float(dm.values.max() - dm.values.min())
        model = SignalFitting(**parts, out_channels=dm.out_channels, data_range=max(span, 1e-12))
    else:
        model = VolumeFitting(**parts, out_channels=dm.out_channels, mode="density")
    loggers = given_loggers(logger, trainer_kwargs.get("default_root_dir"))
    held = HeldLoggers(loggers)  # their closing waits for the closing metrics (one TensorBoard event file)
    try:
        seconds = fit_row(model, dm, steps, callbacks=callbacks, logger=loggers or False, label=f"fit {method}", **trainer_kwargs)
        model.attach_data(dm)
        model.to(model.trainer.strategy.root_device)  # Lightning's teardown moved it to the CPU: evaluate where it trained
        summary = model.evaluate()
        model.cpu().eval()
        step = model.trainer.global_step
        if loggers:
            settings = {"method": method, "steps": steps, "width": width, "seed": seed, "split": split, "batch_size": batch_size}
            log_closing_metrics(model.trainer, summary, {"kind": kind, **settings}, step)
    finally:
        held.release()
    model.summary = {**summary, "seconds": seconds, "steps": step}
    return model


def given_loggers(logger: Any, root: Optional[str]) -> list[Any]:
    """``fit``'s ``logger`` as a list of Lightning loggers: False or None none; True Lightning's default (a
    TensorBoard logger under ``root``, the working directory by default); a logger or several as given."""
    if logger is None or logger is False:
        return []
    if logger is True:
        from lightning.pytorch.loggers import TensorBoardLogger

        return [TensorBoardLogger(root or Path.cwd())]
    return list(logger) if isinstance(logger, (list, tuple)) else [logger]
