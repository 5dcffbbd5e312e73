"""``eval_mode(module)``: evaluate a module in eval mode and give it back in the mode it was in.

Callbacks, exporters and evaluation hooks render a model in the middle of training; dropout-free networks
give the same values either way, but a user's subclass (batch norm, dropout) must see eval mode there and
training mode again afterwards, also when the rendering raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn


@contextmanager
def eval_mode(module: nn.Module) -> Iterator[nn.Module]:
    """``module.eval()`` inside the block, its previous ``training`` flag restored on the way out.

    Example:
        >>> net = nn.Dropout()
        >>> with eval_mode(net):
        ...     net.training
        False
        >>> net.training
        True
    """
    was_training = module.training
    module.eval()
    try:
        yield module
    finally:
        module.train(was_training)
