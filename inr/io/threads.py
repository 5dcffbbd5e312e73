"""``torch_threads``: run a block with a given number of torch CPU threads, then restore the previous number
(an experiment called from a test must not change the threads of the rest of the process)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Optional

import torch


@contextmanager
def torch_threads(count: Optional[int]) -> Iterator[None]:
    """``torch.set_num_threads(count)`` inside the block (``None``: leave torch's choice).

    Example:
        >>> before = torch.get_num_threads()
        >>> with torch_threads(1):
        ...     torch.get_num_threads()
        1
        >>> torch.get_num_threads() == before
        True
    """
    previous = torch.get_num_threads()
    if count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
