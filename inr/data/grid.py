"""Regular coordinate grids on [0,1)^d: coordinates computed from linear indices, and the data splits.

Convention: sample i along an axis of length N sits at v = i / N (the cell's lower corner), so a grid of
N points covers [0, 1) and the discrete Fourier transform of grid samples measures frequency in cycles per
unit length, bin k ↔ k cycles. A grid rendered at another resolution covers the same domain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

SPLITS = ("all", "every_other")


class Grid:
    """A regular grid of ``shape`` (row-major, last axis fastest) whose coordinates are never stored.

    Example:
        >>> g = Grid((2, 4))
        >>> g.coords(torch.tensor([0, 5, 7]))
        tensor([[0.0000, 0.0000],
                [0.5000, 0.2500],
                [0.5000, 0.7500]])
    """

    def __init__(self, shape: Sequence[int]) -> None:
        self.shape = tuple(int(s) for s in shape)
        if not self.shape or any(s < 1 for s in self.shape):
            raise ValueError(f"grid shape must be non-empty with positive sizes, got {self.shape}")
        self.ndim = len(self.shape)
        self._sizes: dict[torch.device, Tensor] = {}  # the sizes as a float32 tensor per device, made once
        self.numel = math.prod(self.shape)

    def unravel(self, index: Tensor) -> Tensor:
        """Linear indices (N,) -> integer positions (N, d)."""
        out = []
        rest = index
        for size in reversed(self.shape):
            out.append(rest % size)
            rest = torch.div(rest, size, rounding_mode="floor")
        return torch.stack(out[::-1], dim=-1)  # (N, d)

    def coords(self, index: Tensor) -> Tensor:
        """Coordinates v = i / N of linear indices (N,) -> (N, d), float32, on the indices' device."""
        if index.device not in self._sizes:  # a host-to-device copy: once, not at every training step
            self._sizes[index.device] = torch.tensor(self.shape, dtype=torch.float32, device=index.device)
        return self.unravel(index).to(torch.float32) / self._sizes[index.device]

    def all_coords(self) -> Tensor:
        """Every coordinate of the grid, (numel, d); only for grids small enough to hold."""
        return self.coords(torch.arange(self.numel))

    def __repr__(self) -> str:
        return f"Grid(shape={self.shape})"


def grid_coordinates(shape: Sequence[int]) -> Tensor:
    """Coordinates of a regular grid as a tensor (*shape, d), v = i / N on every axis."""
    axes = [torch.arange(n, dtype=torch.float32) / n for n in shape]
    return torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1)


def subgrid_index(shape: Sequence[int], start: int, step: int) -> tuple[Tensor, tuple[int, ...]]:
    """Linear indices of the sub-grid ``[start::step]`` on every axis, and that sub-grid's shape.

    Example:
        >>> subgrid_index((4, 4), start=1, step=2)
        (tensor([ 5,  7, 13, 15]), (2, 2))
    """
    full = torch.arange(math.prod(shape)).reshape(*shape)
    sub = full[tuple(slice(start, None, step) for _ in shape)]
    return sub.reshape(-1), tuple(sub.shape)


def split_indices(shape: Sequence[int], split: str) -> dict[str, tuple[Tensor, tuple[int, ...]]]:
    """Train and test index sets of a split, each with the regular shape it forms.

    ``all``: train and test are the whole grid (no held-out pixels).
    ``every_other``: train on [::2, ::2, ...], test on [1::2, 1::2, ...] (Tancik et al. 2020), both regular
    grids of half the resolution; they are disjoint, and along an odd-sized axis the test grid is one shorter.
    """
    if split == "all":
        index = torch.arange(math.prod(shape))
        return {"train": (index, tuple(shape)), "test": (index, tuple(shape))}
    if split == "every_other":
        if min(shape) < 2:
            raise ValueError(f"split 'every_other' needs at least 2 samples per axis, got shape {tuple(shape)}")
        return {"train": subgrid_index(shape, 0, 2), "test": subgrid_index(shape, 1, 2)}
    raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
