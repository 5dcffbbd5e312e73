"""The inner and outer loops of meta-learning an initialisation θ, as functions of parameter dictionaries.

The K signals of a step are K members of one stacked network (``inr.networks.stacked``): φ holds every tensor
of θ with a leading axis of K, and ``Losses`` maps φ to the members' own losses (K,), L_k depending on φ_k
alone. So the gradient of Σ_k L_k with respect to φ_k is ∇L_k(φ_k), and one step of SGD or Adam on the sum is a
step of K independent fits (as for ``model.members``).

- Inner loop (``adapt``): n steps of SGD (φ ← φ − α ∇) or Adam (torch's) from φ₀, on leaf copies: first order,
  nothing flows back to θ. With ``observe`` it also reports φ after each step (held-out scores).
- Reptile (Nichol et al. 2018): g = θ − mean_k φ_k after n inner steps (``reptile_gradient``); an outer SGD step
  of size ε on g is θ ← θ + ε·mean_k(φ_k − θ).
- MAML (Finn et al. 2017): L(θ) = mean_k L_k(φ_k^(n)(θ)), φ^(t+1) = φ^(t) − α ∇_φ Σ_k L_k(φ^(t)), each inner
  gradient taken with ``torch.func.grad``, so that ∂L/∂θ differentiates through every inner step (second order);
  the meta-gradient is checked against finite differences in float64 (tests/tasks/test_adaptation.py).
- Meta-SGD (Li et al. 2017): MAML's loop with a rate α_i per tensor i of θ (``Rates``: a mapping of tensors), so
  that L is differentiable with respect to the rates as well and the outer loop learns them with θ.

Example (one inner SGD step with ε = 1 is one SGD step on the mean loss):
    >>> theta = {"w": torch.tensor([1.0, -2.0])}
    >>> targets = torch.tensor([[0.0, 0.0], [2.0, 2.0]])         # K = 2 members
    >>> losses = lambda phi: ((phi["w"] - targets) ** 2).sum(1)  # (K,)
    >>> phi, _ = adapt(losses, expand(theta, 2), steps=1, lr=0.1)
    >>> theta["w"] - reptile_gradient(theta, phi)["w"]            # θ − 1·g
    tensor([ 1.0000, -1.4000])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Optional, Union

import torch
from torch import Tensor

# stacked parameters φ (each (K, ...)) -> the K members' losses (K,)
Losses = Callable[[dict[str, Tensor]], Tensor]
# the inner SGD's rate: one α for every tensor, or α_i per tensor of θ by name (Meta-SGD's, tensors that may carry a graph)
Rates = Union[float, Mapping[str, Union[float, Tensor]]]
INNER_OPTIMIZERS = ("sgd", "adam")


def expand(theta: Mapping[str, Tensor], count: int) -> dict[str, Tensor]:
    """Every member at θ: φ_k = θ for k < K, each tensor (…) -> (K, …), a view that keeps θ's graph."""
    return {name: p.unsqueeze(0).expand(count, *p.shape) for name, p in theta.items()}


def adapt(
    losses: Losses,
    start: Mapping[str, Tensor],
    steps: int,
    lr: Rates,
    optimizer: str = "sgd",
    observe: Optional[Callable[[int, dict[str, Tensor]], None]] = None,
) -> tuple[dict[str, Tensor], Tensor]:
    """n = ``steps`` first-order steps of ``optimizer`` (SGD, or torch's Adam with its defaults) at rate ``lr`` on
    Σ_k L_k from φ₀ = ``start`` (detached copies): -> (φ_n, the losses (n, K) before each step). ``observe(t, φ_t)``
    is called at t = 0 and after every step, with no gradient recorded. A ``lr`` per tensor (SGD only) gives each
    tensor its own parameter group."""
    phi = {name: p.detach().clone().requires_grad_(True) for name, p in start.items()}
    if optimizer == "sgd" and isinstance(lr, Mapping):
        step = torch.optim.SGD([{"params": [p], "lr": float(lr[name])} for name, p in phi.items()], lr=0.0)
    elif optimizer == "sgd":
        step = torch.optim.SGD(list(phi.values()), lr=lr)
    elif optimizer == "adam" and isinstance(lr, Mapping):
        raise ValueError("a rate per tensor is SGD's (Meta-SGD); Adam takes one rate")
    elif optimizer == "adam":
        step = torch.optim.Adam(list(phi.values()), lr=lr)
    else:
        raise ValueError(f"unknown inner optimizer {optimizer!r}; choose one of {', '.join(INNER_OPTIMIZERS)}")
    history = []
    if observe is not None:
        with torch.no_grad():
            observe(0, phi)
    for t in range(steps):
        step.zero_grad(set_to_none=True)
        values = losses(phi)  # (K,)
        history.append(values.detach())
        values.sum().backward()
        step.step()
        if observe is not None:
            with torch.no_grad():
                observe(t + 1, phi)
    done = {name: p.detach() for name, p in phi.items()}
    return done, torch.stack(history) if history else torch.zeros(0)


def reptile_gradient(theta: Mapping[str, Tensor], adapted: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """g = θ − mean_k φ_k: the Reptile direction as a gradient (an outer SGD step of size ε: θ + ε·mean_k(φ_k − θ))."""
    return {name: p.detach() - adapted[name].mean(0) for name, p in theta.items()}


def surrogate(theta: Mapping[str, Tensor], gradient: Mapping[str, Tensor], value: Tensor) -> Tensor:
    """A scalar whose value is ``value`` and whose gradient with respect to θ is ``gradient``:
    value + Σ ⟨θ, g⟩ − stop(Σ ⟨θ, g⟩), so an ordinary backward (and DDP's averaging of it) hands g to the outer
    optimizer."""
    dot = sum((p * gradient[name]).sum() for name, p in theta.items())
    return value.detach() + dot - dot.detach()


def maml_losses(losses: Losses, theta: Mapping[str, Tensor], count: int, steps: int, lr: Rates) -> tuple[Tensor, Tensor]:
    """(the K losses at θ, the K losses after n differentiable SGD steps from θ): φ^(t+1) = φ^(t) − α ∇ Σ_k L_k(φ^(t))
    with ``torch.func.grad``; the second is differentiable with respect to θ through every step (MAML), and with
    ``lr`` a mapping of tensors φ_i^(t+1) = φ_i^(t) − α_i ∇_i, differentiable with respect to each α_i (Meta-SGD)."""
    first, after, _ = differentiable_sgd(losses, expand(theta, count), steps, lr)
    return first, after


def differentiable_sgd(
    losses: Losses, start: Mapping[str, Tensor], steps: int, lr: Rates
) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
    """n SGD steps x^(t+1) = x^(t) − α_i ∇_i Σ_k L_k(x^(t)) from ``start`` that keep the graph of whatever ``start``,
    ``losses`` and ``lr`` depend on (each gradient with ``torch.func.grad``): -> (the K losses at the start, the K
    losses after the n steps, x^(n)). MAML's loop (x = φ) and the shift modulations' (x = s, ``inr.tasks.modulations``)."""
    rate = (lambda name: lr[name]) if isinstance(lr, Mapping) else (lambda name: lr)
    x = dict(start)
    total = lambda p: (lambda values: (values.sum(), values.detach()))(losses(p))
    first = None
    for _ in range(steps):
        grads, values = torch.func.grad(total, has_aux=True)(x)
        first = values if first is None else first
        x = {name: x[name] - rate(name) * grads[name] for name in x}
    after = losses(x)
    return (after.detach() if first is None else first), after, x
