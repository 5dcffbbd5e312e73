"""``Operator``: a linear measurement y = A x of a field x sampled on a regular grid, with its adjoint."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import vjp


def real_inner(a: Tensor, b: Tensor) -> Tensor:
    """⟨a, b⟩ = Re Σ conj(a) b, the real inner product of (possibly complex) tensors.

    Example:
        >>> float(real_inner(torch.tensor([1 + 2j]), torch.tensor([3 - 1j])))
        1.0
    """
    return (a.conj() * b).real.sum() if a.is_complex() or b.is_complex() else (a * b).sum()


class Operator(nn.Module):
    """A = the measurement of a field: x (C, *field_shape), real, -> y (C, *measurement_shape).

    Subclasses implement ``forward`` (differentiable: the loss back-propagates through it) and may give
    ``adjoint`` in closed form; the default adjoint is exact for any linear ``forward``: Aᵀy is the
    vector-Jacobian product of A at x = 0 with cotangent y (autograd's transpose of every op in ``forward``).
    Complex measurements use the real inner product ⟨u, v⟩ = Re Σ conj(u) v, so Aᵀy = Re(Aᴴ y).

    Attributes:
        field_shape: the grid the operator reads, without the channel axis.
    """

    def __init__(self, field_shape: Sequence[int]) -> None:
        super().__init__()
        self.field_shape = tuple(int(s) for s in field_shape)

    def forward(self, x: Tensor) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def adjoint(self, y: Tensor) -> Tensor:
        """Aᵀy (C, *field_shape): the exact transpose of ``forward``, by autograd."""
        channels = y.shape[0]
        dtype = y.real.dtype if y.is_complex() else y.dtype
        x0 = torch.zeros(channels, *self.field_shape, dtype=dtype, device=y.device)
        _, pullback = vjp(self.forward, x0)
        return pullback(y)[0]

    def simulate(self, x: Tensor, seed: int = 0) -> Tensor:
        """The measurements a simulation records from the field x: A x here; an operator that carries its own
        noise model (``DeepinvOperator``) draws it with ``seed``."""
        return self(x)

    def measurement_shape(self, channels: int) -> tuple[int, ...]:
        """Shape of A x for a field of ``channels`` channels (computed by one forward pass of zeros)."""
        with torch.no_grad():
            return tuple(self.forward(torch.zeros(channels, *self.field_shape, device=self._device())).shape)

    def display(self, y: Tensor) -> Tensor:
        """A picture of measurements for TensorBoard, (C∈{1,3}, H, W) in [0, 1]; default: |y| of a 2D
        measurement scaled by its maximum."""
        image = y.abs().float()
        if image.ndim == 2:  # (C, M) -> (C, 1, M)
            image = image[:, None, :]
        elif image.ndim > 3:  # (C, a, b, ...) -> (C, a, b·...)
            image = image.flatten(2)
        if image.shape[0] not in (1, 3):
            image = image[:1]
        return image / image.max().clamp_min(1e-12)

    def _device(self) -> torch.device:
        tensors = list(self.buffers()) + list(self.parameters())
        return tensors[0].device if tensors else torch.device("cpu")
