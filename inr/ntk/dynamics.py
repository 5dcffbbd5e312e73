"""Closed-form function-space dynamics of gradient descent on a mean-squared error with a fixed kernel.

Normalisation: L(f) = (1/2N) Σ_i ‖f(x_i) − y_i‖² over the N training points, learning rate η. With a fixed
(linearised) NTK K = Θ(X, X), gradient flow in function space is df/dt = −(η/N) K (f − y), whose solution is

    f_t(X)  = y + e^{−ηKt/N} (f₀(X) − y),
    f_t(x*) = f₀(x*) + K(x*, X) K^{−1} (I − e^{−ηKt/N}) (y − f₀(X)),

computed through K = V diag(λ) Vᵀ, with K^{−1}(I − e^{−ηKt/N}) → V diag((1 − e^{−ηλt/N})/λ) Vᵀ (= ηt/N
for λ → 0, so a singular K is fine). As t → ∞ the test form is kernel regression, K(x*, X) K^{−1} y when f₀ = 0.
For the mean over N·C entries, L = (1/NC)‖f − y‖², pass lr = 2η and the full (N·C)² kernel (or, in the
wide limit Θ_{oo′} = δ_{oo′}Θ, per channel lr = 2η/C).
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Union

import torch
from torch import Tensor

from inr.ntk.eigen import kernel_eigh


class GDPrediction(NamedTuple):
    """Predicted outputs: ``train`` (*T, N[, C]) and ``test`` (*T, M[, C]) or None."""

    train: Tensor
    test: Optional[Tensor]


def predict_gd_mse(
    k_train_train: Tensor,
    y_train: Tensor,
    lr: float,
    t: Union[float, Tensor],
    k_test_train: Optional[Tensor] = None,
    f0_train: Optional[Tensor] = None,
    f0_test: Optional[Tensor] = None,
    discrete: bool = False,
) -> GDPrediction:
    """Outputs after gradient descent for time t (η·t = lr × steps) on L = (1/2N)‖f − y‖², from the closed form.

    Args:
        k_train_train: K = Θ(X, X), (N, N).
        y_train: targets (N,) or (N, C); every column evolves independently under the same K.
        lr: η. ``t``: steps (a float or a tensor of times (T,)).
        k_test_train: Θ(X*, X), (M, N); gives ``test``.
        f0_train, f0_test: outputs at initialisation, shaped like the targets; default 0.
        discrete: use t steps of discrete GD, (1 − ηλ/N)^t, instead of gradient flow e^{−ηλt/N}.

    Returns:
        ``GDPrediction(train, test)``, with a leading (T,) axis when ``t`` is a tensor of times.

    Example:
        >>> k = torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
        >>> y = torch.tensor([1.0, 1.0], dtype=torch.float64)
        >>> predict_gd_mse(k, y, lr=1.0, t=2.0).train   # 1 − e^{−λt/2} for λ = 2, 1
        tensor([0.8647, 0.6321], dtype=torch.float64)
    """
    n = k_train_train.shape[0]
    if k_train_train.shape != (n, n) or y_train.shape[0] != n:
        raise ValueError(
            f"predict_gd_mse: K must be (N, N) and y (N, ...), got {tuple(k_train_train.shape)} and {tuple(y_train.shape)}"
        )
    dtype = torch.promote_types(k_train_train.dtype, torch.float64)
    lam, vec = kernel_eigh(k_train_train.to(dtype))
    lam = lam.clamp_min(0.0)  # round-off can leave tiny negative eigenvalues of a PSD kernel
    vector = y_train.ndim == 1
    y = (y_train[:, None] if vector else y_train).to(dtype)  # (N, C)
    f0 = torch.zeros_like(y) if f0_train is None else (f0_train[:, None] if vector else f0_train).to(dtype)
    times = torch.as_tensor(t, dtype=dtype, device=y.device)
    rate = lr * lam / n  # (N,)
    tt = times[..., None]  # (*T, 1)
    # discrete: Σ_{s<t} (1 − ηλ/N)^s · η/N = (1 − (1 − ηλ/N)^t)/λ, the same gain as the flow's; both → ηt/N as λ → 0
    decay = (1.0 - rate) ** tt if discrete else torch.exp(-rate * tt)
    small = lr * tt / n
    safe = torch.where(lam > 0, lam, torch.ones_like(lam))
    gain = torch.where(lam * small > 1e-12, (1.0 - decay) / safe, small.expand_as(decay))  # (*T, N)
    coeff = vec.T @ (f0 - y)  # residual along each eigenvector, (N, C)
    train = y + vec @ (decay[..., :, None] * coeff)  # (*T, N, C)
    test = None
    if k_test_train is not None:
        if k_test_train.shape[1] != n:
            raise ValueError(f"k_test_train must be (M, {n}), got {tuple(k_test_train.shape)}")
        m = k_test_train.shape[0]
        g0 = torch.zeros(m, y.shape[1], dtype=dtype, device=y.device) if f0_test is None else f0_test.reshape(m, -1).to(dtype)
        test = g0 - (k_test_train.to(dtype) @ vec) @ (gain[..., :, None] * coeff)  # (*T, M, C)
    out_dtype = y_train.dtype if y_train.is_floating_point() else k_train_train.dtype
    if vector:
        train = train[..., 0]
        test = None if test is None else test[..., 0]
    return GDPrediction(train.to(out_dtype), None if test is None else test.to(out_dtype))
