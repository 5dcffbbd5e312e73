"""``grid_size(resolution, ndim)``: the one reading of a resolution setting, an int or one int per axis.

Data modules (image, video, volume, measurements), the text generator and the mesh exporter all accept
``r`` for an r×…×r grid or ``[n_1, …, n_d]``; this is where that is parsed and refused in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from inr.errors import InputError


def grid_size(
    resolution: Union[int, Sequence[int]], ndim: int, name: str = "data.resolution", minimum: int = 2
) -> tuple[int, ...]:
    """An int r -> (r,)·ndim; a sequence of ``ndim`` ints -> that tuple; each at least ``minimum``.

    Example:
        >>> grid_size(4, 3), grid_size([2, 5], 2)
        ((4, 4, 4), (2, 5))
        >>> grid_size([2, 5], 3)
        Traceback (most recent call last):
        ...
        inr.errors.InputError: data.resolution must be an int or 3 ints, each ≥ 2, got [2, 5]
    """
    if isinstance(resolution, bool):
        size = None
    elif isinstance(resolution, int):
        size = [resolution] * ndim
    else:
        try:
            size = [int(r) for r in resolution if not isinstance(r, bool) and int(r) == r]
        except (TypeError, ValueError):
            size = None
        if size is not None and len(size) != len(list(resolution)):
            size = None
    if size is None or len(size) != ndim or min(size) < minimum:
        raise InputError(f"{name} must be an int or {ndim} ints, each ≥ {minimum}, got {resolution}")
    return tuple(size)
