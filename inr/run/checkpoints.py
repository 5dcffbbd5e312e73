"""Checkpoints: written atomically, read as data only (never executed), checked against the model.

Every checkpoint this project reads goes through ``read_checkpoint``: ``torch.load(weights_only=True)``
unpickles tensors, containers and plain values only, so a crafted file cannot run code on load (it is
refused with one line naming what it asked to run). Before that, the archive's directory is read: a file
whose entries would expand beyond its own size (``torch.save`` stores them uncompressed) or beyond memory is
refused before anything is inflated.

A checkpoint written by the command line records its model's configuration (``MODEL_CONFIG_KEY``: class
paths and init args); a checkpoint is used only by a command whose model has the same configuration
(``check_same_model_config``), so weights of a ReLU network never drive a tanh one silently.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import re
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Optional, Union

import lightning as L
import torch
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
from torch import nn

from inr.errors import InputError, check_memory
from inr.io.files import atomic_write

MODEL_CONFIG_KEY = "inr_model_config"  # the model section of the config that wrote the checkpoint
# init args that change how a model is evaluated or trained, not what its weights mean
NOT_COMPARED = (
    "optimizer",
    "scheduler",
    "render_chunk",
    "compile",
    "cache_encoding",
    "out_channels",
    "mode",
    "inner_steps",
    "cuda_graphs",
)
ZIP_SLACK = 1 << 20  # bytes an archive's entries may exceed its file by (headers are counted in the file only)


class CheckpointError(InputError):
    """A checkpoint that cannot be used: unreadable, truncated, unsafe, or made by another model."""


class AtomicCheckpointIO(TorchCheckpointIO):
    """``torch.save`` into a temporary file beside the target, fsync, rename; loads with ``weights_only=True``.

    A crash or a full disk during a save leaves the previous file whole. (Lightning's own save stages the
    bytes in the system's temporary directory and copies them over when that is another file system,
    which can leave a truncated checkpoint; and it loads with ``torch.load``'s default.)

    With ``strategy`` given and several processes, a load reads the file on rank 0 only and sends its bytes to
    the other ranks (every rank loads at once: Lightning's restore), so the checkpoint needs to exist on rank 0's
    node alone (``inr.run.cluster``: rank 0 writes, a node-local output directory elsewhere stays empty).
    """

    def __init__(self, strategy: Optional[Any] = None) -> None:
        super().__init__()
        self.strategy = strategy

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Union[str, Path], storage_options: Optional[Any] = None) -> None:
        if "://" in str(path):  # remote storage: its own semantics
            return super().save_checkpoint(checkpoint, path, storage_options)
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__} takes no storage_options")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path) as f:
            try:
                torch.save(checkpoint, f)
            except RuntimeError as exc:  # torch's zip writer reports a failed write (ENOSPC, EFBIG) as its own error
                cause = exc.__cause__ or exc.__context__
                if isinstance(cause, OSError):
                    raise OSError(cause.errno, cause.strerror, str(path)) from None
                raise
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, str(path)) from None

    def load_checkpoint(
        self,
        path: Union[str, Path],
        map_location: Optional[Callable] = lambda storage, loc: storage,
        weights_only: Optional[bool] = None,
    ) -> dict[str, Any]:
        strategy = self.strategy
        if strategy is None or strategy.world_size < 2 or not torch.distributed.is_initialized():
            return super().load_checkpoint(path, map_location=map_location, weights_only=True)
        data = read_on_rank_zero(path, strategy.global_rank, strategy.root_device)
        return torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)


def read_on_rank_zero(path: Union[str, Path], rank: int, device: torch.device) -> bytes:
    """The bytes of ``path`` as rank 0 reads them, on every rank (a collective: every rank calls it). A file rank 0
    cannot read is one ``CheckpointError`` on every rank."""
    data, reason = b"", "see rank 0"
    if rank == 0:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            data, reason = None, exc.strerror or str(exc)
    size = torch.tensor([-1 if data is None else len(data)], dtype=torch.int64, device=device)
    torch.distributed.broadcast(size, src=0)
    if int(size) < 0:
        raise CheckpointError(f"{path}: rank 0 cannot read it ({reason})")
    buffer = torch.zeros(int(size), dtype=torch.uint8, device=device)
    if rank == 0 and data:
        buffer.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))
    torch.distributed.broadcast(buffer, src=0)
    return data if rank == 0 else buffer.cpu().numpy().tobytes()


def read_checkpoint(path: Union[str, Path]) -> dict[str, Any]:
    """The checkpoint at ``path`` as data (tensors on the CPU), or ``CheckpointError`` with one line saying why not.

    Example:
        >>> import tempfile, pathlib
        >>> bad = pathlib.Path(tempfile.mkdtemp()) / "bad.ckpt"
        >>> _ = bad.write_bytes(b"not a checkpoint")
        >>> read_checkpoint(bad)
        Traceback (most recent call last):
        ...
        inr.run.checkpoints.CheckpointError: ...bad.ckpt: not a readable checkpoint (truncated, damaged or not a checkpoint)
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: {'a directory, not a checkpoint file' if path.is_dir() else 'file not found'}")
    check_expanded_size(path)
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        unsafe = re.search(r"GLOBAL ([\w.]+)", str(exc))
        if unsafe:
            raise CheckpointError(
                f"{path}: refused: loading it would call {unsafe.group(1)}; checkpoints are read as tensors and "
                "plain data only, and nothing in this file was run"
            ) from None
        raise CheckpointError(f"{path}: not a readable checkpoint (truncated, damaged or not a checkpoint)") from None
    except (RuntimeError, EOFError, OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise CheckpointError(f"{path}: not a readable checkpoint (truncated, damaged or not a checkpoint)") from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), dict):
        raise CheckpointError(f"{path}: not a training checkpoint (it has no state_dict)")
    return checkpoint


def check_expanded_size(path: Path) -> None:
    """Refuse, before anything is inflated, a checkpoint whose archive entries add up to more than its file
    (``torch.save`` writes them uncompressed; a deflated entry can stand for any size) or than memory allows.
    A file that is not a zip archive is not one ``torch.save`` has written since torch 1.6."""
    size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise CheckpointError(f"{path}: not a readable checkpoint (truncated, damaged or not a checkpoint)") from None
    if expanded > size + ZIP_SLACK:
        raise CheckpointError(
            f"{path}: its entries expand to {expanded / 2**20:,.1f} MiB from a {size / 2**20:,.1f} MiB file; torch.save "
            "stores them uncompressed, so this file was not written by it (refused before inflating anything)"
        )
    check_memory(f"checkpoint {path}", expanded, advice="load it on a machine with more memory")


def check_finite(checkpoint: dict[str, Any], path: Union[str, Path]) -> None:
    """Refuse a checkpoint whose weights hold NaN or inf (a model saved after its loss diverged renders black)."""
    for key, value in checkpoint["state_dict"].items():
        if isinstance(value, torch.Tensor) and value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise CheckpointError(f"{path}: its parameters are not finite ({key} holds NaN or inf); use an earlier checkpoint")


def check_training_state(checkpoint: dict[str, Any], path: Union[str, Path]) -> None:
    """Refuse, before Lightning restores it, training state of the wrong shape: loops and callbacks must be
    mappings of mappings, optimizer and scheduler states lists of mappings (an optimizer's with ``state`` and
    ``param_groups``)."""

    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"{path}: its {what} is damaged; resume from another checkpoint, or start a new run")

    for key in ("loops", "callbacks"):
        value = checkpoint.get(key)
        if value is not None and not (isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())):
            raise bad(f"{key} state")
    optimizers = checkpoint.get("optimizer_states")
    if optimizers is not None and not (
        isinstance(optimizers, list)
        and all(
            isinstance(o, dict) and isinstance(o.get("state"), dict) and isinstance(o.get("param_groups"), list)
            for o in optimizers
        )
    ):
        raise bad("optimizer state")
    schedulers = checkpoint.get("lr_schedulers")
    if schedulers is not None and not (isinstance(schedulers, list) and all(isinstance(s, dict) for s in schedulers)):
        raise bad("learning-rate scheduler state")


def first_difference(saved: Any, given: Any, where: str) -> Optional[str]:
    """The first key path where two plain config trees differ, as ``path: A in the checkpoint, B here``.

    Example:
        >>> first_difference({"a": {"s": 10.0}}, {"a": {"s": 3.0}}, "model")
        'model.a.s is 10.0 in the checkpoint and 3.0 here'
    """
    if isinstance(saved, dict) and isinstance(given, dict):
        for key in [*saved, *(k for k in given if k not in saved)]:
            found = first_difference(saved.get(key), given.get(key), f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(saved, list) and isinstance(given, list) and len(saved) == len(given):
        for i, (a, b) in enumerate(zip(saved, given)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    same = saved == given or (
        isinstance(saved, (int, float))
        and isinstance(given, (int, float))
        and not isinstance(saved, bool)
        and math.isclose(saved, given, rel_tol=1e-12, abs_tol=0.0)
    )
    return None if same else f"{where} is {saved!r} in the checkpoint and {given!r} here"


def _compared(config: Any) -> Any:
    """The model section without the keys that do not change what the weights mean (``NOT_COMPARED``)."""
    if not isinstance(config, dict):
        return config
    config = dict(config)
    if isinstance(config.get("init_args"), dict):
        config["init_args"] = {k: v for k, v in config["init_args"].items() if k not in NOT_COMPARED}
    return config


def recorded_model_config(checkpoint: dict[str, Any], path: Union[str, Path]) -> Optional[dict[str, Any]]:
    """The model section of the config that wrote the checkpoint: recorded in it, or else its run's
    ``config.yaml`` (two folders up, where the command line saves it), read as data; None when neither is there."""
    recorded = checkpoint.get(MODEL_CONFIG_KEY)
    if isinstance(recorded, dict):
        return recorded
    run_config = Path(path).resolve().parent.parent / "config.yaml"
    if not run_config.is_file():
        return None
    import yaml

    try:
        model = (yaml.safe_load(run_config.read_text()) or {}).get("model")
    except (yaml.YAMLError, UnicodeDecodeError, OSError, AttributeError):
        return None
    return model if isinstance(model, dict) else None


def check_same_model_config(
    checkpoint: dict[str, Any], model_config: Optional[dict[str, Any]], path: Union[str, Path], resume: bool = False
) -> None:
    """Refuse a checkpoint written by a model configured otherwise than ``model_config`` (the command's model
    section: class paths and init args), naming the first difference; for a resume (``resume``) the optimizer
    class must match too (its saved state is what continues)."""
    if model_config is None:
        return
    saved = recorded_model_config(checkpoint, path)
    if saved is None:
        return
    difference = first_difference(_compared(saved), _compared(model_config), "model")
    if difference is None and resume:
        optimizer = lambda config: ((config.get("init_args") or {}).get("optimizer") or {}).get("class_path")
        if optimizer(saved) and optimizer(model_config) and optimizer(saved) != optimizer(model_config):
            raise CheckpointError(
                f"{path}: its optimizer state is {optimizer(saved)}'s and this config's optimizer is {optimizer(model_config)}; "
                f"resume with {optimizer(saved)}, or start a new run"
            )
    if difference is not None:
        raise CheckpointError(
            f"{path}: made by another model: {difference}; use the config of the run that wrote it (its config.yaml)"
        )


def check_matches_model(checkpoint: dict[str, Any], model: nn.Module, path: Union[str, Path]) -> None:
    """Refuse, with one line, a checkpoint whose parameters and buffers differ in name or shape from ``model``'s."""
    saved, expected = checkpoint["state_dict"], model.state_dict()
    missing = [k for k in expected if k not in saved]
    extra = [k for k in saved if k not in expected]
    shapes = [
        (k, tuple(getattr(saved[k], "shape", ())), tuple(v.shape))
        for k, v in expected.items()
        if k in saved and tuple(getattr(saved[k], "shape", ())) != tuple(v.shape)
    ]
    if not (missing or extra or shapes):
        return
    if shapes:
        key, there, here = shapes[0]
        what = f"{key} is {list(there)} there and {list(here)} in this config"
        if len(shapes) > 1:
            what += f" ({len(shapes) - 1} more tensors differ)"
    else:
        what = f"tensors missing: {', '.join(missing[:3])}" if missing else f"tensors not in this model: {', '.join(extra[:3])}"
    raise CheckpointError(
        f"{path}: made by another model: {what}; resume it with the config of the run that wrote it (its config.yaml)"
    )


def checkpoint_step(checkpoint: dict[str, Any]) -> int:
    return int(checkpoint.get("global_step", 0))


def newest_first(paths: Iterable[Path]) -> list[Path]:
    """Checkpoint files, newest modification first (``last*`` before others written in the same instant)."""
    return sorted(paths, key=lambda p: (p.stat().st_mtime_ns, p.name.startswith("last")), reverse=True)


def last_good_checkpoint(trainer: L.Trainer) -> Optional[str]:
    """The newest checkpoint this run has written that still reads back, or None."""
    paths = []
    for cb in trainer.checkpoint_callbacks:
        paths += [p for p in (getattr(cb, "last_model_path", ""), getattr(cb, "best_model_path", "")) if p]
    for path in newest_first(Path(p) for p in dict.fromkeys(paths) if os.path.isfile(p)):
        try:
            read_checkpoint(path)
            return str(path)
        except CheckpointError:
            continue
    return None
