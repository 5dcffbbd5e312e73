"""Pictures of a comparison: every method's reconstruction beside the ground truth, one row per signal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch


def picture(field: torch.Tensor) -> np.ndarray:
    """A reconstruction as something ``imshow`` draws: (C, H, W) -> (H, W) for one channel or (H, W, 3); a volume
    (C, D, H, W) shows its middle slice along D; values clipped to [0, 1], the range of every target here.

    Example:
        >>> picture(torch.zeros(1, 5, 4, 3)).shape, float(picture(torch.full((3, 4, 3), 2.0)).max())
        ((4, 3), 1.0)
    """
    field = field.detach().float().cpu()
    if field.ndim == 4:  # (C, D, H, W): the middle slice
        field = field[:, field.shape[1] // 2]
    if field.ndim != 3:
        raise ValueError(f"expected a (C, H, W) or (C, D, H, W) field, got shape {tuple(field.shape)}")
    image = field.clamp(0, 1).numpy()
    return image[0] if image.shape[0] == 1 else np.moveaxis(image[:3], 0, -1)


def reconstruction_grid(
    truths: Sequence[torch.Tensor], recons: dict[str, Sequence[torch.Tensor]], labels: Sequence[str], path: Path
) -> Path:
    """One row per signal (``labels``), the ground truth then one column per method, written as a PNG at ``path``.

    ``recons[method][i]`` is that method's reconstruction of signal ``i``; a method missing a signal (a stopped
    run) leaves its cell empty.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = ["ground truth", *recons]
    fig, axes = plt.subplots(len(truths), len(columns), figsize=(1.5 * len(columns), 1.5 * len(truths)), squeeze=False)
    for row, truth in enumerate(truths):
        for col, name in enumerate(columns):
            ax = axes[row, col]
            ax.set_xticks([]), ax.set_yticks([])
            field = truth if name == "ground truth" else (recons[name][row] if row < len(recons[name]) else None)
            if field is not None:
                ax.imshow(picture(field), cmap="gray", vmin=0, vmax=1)
            if row == 0:
                ax.set_title(name, fontsize=7)
            if col == 0:
                ax.set_ylabel(labels[row], fontsize=7)
    fig.tight_layout(pad=0.2)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
