"""Checkpoints: written atomically, read as data only (never executed), checked against the model.

Every checkpoint this project reads goes through ``read_checkpoint``: ``torch.load(weights_only=True)``
unpickles tensors, containers and plain values only, so a crafted file cannot run code on load (it is
refused with one line naming what it asked to run).
"""

from __future__ import annotations

import os
import pickle
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Optional, Union

import lightning as L
import torch
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
from torch import nn

from inr.errors import InputError
from inr.io.files import atomic_write


class CheckpointError(InputError):
    """A checkpoint that cannot be used: unreadable, truncated, unsafe, or made by another model."""


class AtomicCheckpointIO(TorchCheckpointIO):
    """``torch.save`` into a temporary file beside the target, fsync, rename; loads with ``weights_only=True``.

    A crash or a full disk during a save leaves the previous file whole. (Lightning's own save stages the
    bytes in the system's temporary directory and copies them over when that is another file system,
    which can leave a truncated checkpoint; and it loads with ``torch.load``'s default.)
    """

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
        return super().load_checkpoint(path, map_location=map_location, weights_only=True)


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
        raise CheckpointError(f"{path}: file not found")
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
