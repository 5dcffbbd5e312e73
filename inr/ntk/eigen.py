"""Eigen-decompositions of kernel matrices: sorted spectra, mode decay under gradient descent, circulant spectra."""

from __future__ import annotations

from typing import Union

import torch
from torch import Tensor


def kernel_eigh(k: Tensor, descending: bool = True) -> tuple[Tensor, Tensor]:
    """Eigenvalues λ (N,) and orthonormal eigenvectors V (N, N) of the symmetric part of ``k``, K = V diag(λ) Vᵀ.

    Computed in float64 (a float32 NTK has eigenvalues spanning many decades) and returned in ``k``'s dtype;
    sorted largest first unless ``descending=False``.

    Example:
        >>> lam, v = kernel_eigh(torch.tensor([[2.0, 1.0], [1.0, 2.0]]))
        >>> lam
        tensor([3., 1.])
    """
    if k.ndim != 2 or k.shape[0] != k.shape[1]:
        raise ValueError(f"kernel_eigh needs a square matrix, got shape {tuple(k.shape)}")
    sym = 0.5 * (k + k.T).to(torch.float64)
    lam, vec = torch.linalg.eigh(sym)  # ascending
    if descending:
        lam, vec = lam.flip(0), vec.flip(1)
    return lam.to(k.dtype), vec.to(k.dtype)


def top_eigenvalues(k: Tensor, count: int) -> Tensor:
    """The ``count`` largest eigenvalues of a symmetric kernel matrix, largest first."""
    return kernel_eigh(k)[0][:count]


def mode_decay(eigenvalues: Tensor, lr: float, t: Union[float, Tensor], n: int, discrete: bool = False) -> Tensor:
    """Factor by which GD on L = (1/2N)‖f − y‖² shrinks the residual along each eigenvector after time t.

    Continuous (gradient flow): e^{−ηλt/N}; ``discrete``: (1 − ηλ/N)^t after t (whole) steps of size η.
    ``t`` may be a tensor of times (T,): the result is then (T, N).
    """
    t = torch.as_tensor(t, dtype=eigenvalues.dtype, device=eigenvalues.device)
    rate = lr * eigenvalues / n  # (N,)
    if discrete:
        return (1.0 - rate) ** t[..., None]
    return torch.exp(-rate * t[..., None])


def residual_modes(eigenvectors: Tensor, residual: Tensor) -> Tensor:
    """Components Vᵀ r of a residual r (N,) or (N, C) along the kernel's eigenvectors."""
    return eigenvectors.T @ residual


def circulant_spectrum(row: Tensor) -> Tensor:
    """Eigenvalues of the circulant matrix with first row ``row`` (N,), ordered by frequency k = 0..N−1.

    A stationary kernel on a periodic grid, K_ij = k(v_i − v_j), is circulant; its eigenvectors are the
    Fourier modes e^{2πi kj/N} and its eigenvalues the DFT of the kernel profile, λ_k = Σ_j k(v_j) e^{−2πi kj/N}
    (real for a symmetric profile; the real part is returned).

    Example:
        >>> circulant_spectrum(torch.tensor([2.0, 1.0, 0.0, 1.0]))
        tensor([4., 2., 0., 2.])
    """
    return torch.fft.fft(row.to(torch.float64)).real.to(row.dtype)
