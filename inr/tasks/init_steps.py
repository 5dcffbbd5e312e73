"""The first steps of a fit started from a Meta-SGD init: the inner loop the init was meta-trained for.

Meta-SGD (Li et al. 2017) learns θ together with a rate α_i per network tensor, for n inner steps of plain SGD,
φ_i ← φ_i − α_i ∇_i L(φ). Its init is θ *and* that loop: a fit from it (``INRModule(init_from=...)`` of a
checkpoint holding ``inr_inner_rates``, ``inr.tasks.init_from.inner_loop``) takes its first n optimizer steps
exactly so, and then continues with its configured optimizer, whose state (Adam's moments, the scheduler's count)
starts at step n as it would at step 0 of any fit. Only the network's tensors move in those n steps, as in the
meta-training's inner loop (an encoder's trainable tensors, an output bias, hold). Reptile's and MAML's inits hold
no rates: their fits are ordinary from step 0.

An init meta-learned to adapt shift modulations only (``adapts`` ``modulations``, ``inr.tasks.modulations``) is θ and
n SGD steps on the shifts s_l of its hidden layers from s = 0, θ held. A shift is added to its layer's bias, so those
steps are n SGD steps b_l ← b_l − α_l ∇_{b_l} L on the hidden layers' biases alone, every other tensor held: the
fit's first n steps are that, then its configured optimizer on every tensor.

The n steps go through the Trainer's strategy with a ``torch.optim.SGD`` of one parameter group per tensor (lr α_i,
no momentum, no weight decay), so the precision plugin and any gradient clipping the Trainer sets apply to them as
to every other step.

Example (two tensors, their own rates):
    >>> w, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.zeros(1))
    >>> opt = init_optimizer({"w": w, "b": b}, InnerLoop({"w": 0.5, "b": 2.0}, 1))
    >>> (w.sum() + 3 * b.sum()).backward(); opt.step()
    >>> w.tolist(), b.tolist()
    ([0.5, 0.5], [-6.0])
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

from inr.errors import InputError
from inr.tasks.init_from import InnerLoop
from inr.tasks.modulations import shift_names

__all__ = ["InnerLoop", "adapted_names", "init_optimizer", "check_names"]


def adapted_names(loop: InnerLoop, network: torch.nn.Module) -> list[str]:
    """The network tensors the init's first steps move: every one, or the hidden layers' biases (modulations)."""
    if loop.adapts == "modulations":
        return shift_names(network)
    return [n for n, _ in network.named_parameters()]


def check_names(loop: InnerLoop, names: list[str], where: str) -> None:
    """Refuse rates that do not name exactly the tensors the loop adapts (``adapted_names``: another architecture's,
    or a damaged entry)."""
    missing, extra = sorted(set(names) - set(loop.rates)), sorted(set(loop.rates) - set(names))
    if missing or extra:
        what = f"no rate for {missing[0]}" if missing else f"a rate for {extra[0]}, not a tensor of the network"
        raise InputError(f"{where}: its inner rates do not match the network ({what})")


def init_optimizer(params: Mapping[str, Tensor], loop: InnerLoop) -> torch.optim.SGD:
    """Plain SGD with tensor i at rate α_i: one step is θ_i ← θ_i − α_i ∇_i L for every tensor of ``params`` that the
    loop has a rate for (the others held: a modulations init moves its hidden layers' biases alone)."""
    groups = [{"params": [p], "lr": float(loop.rates[name])} for name, p in params.items() if name in loop.rates]
    return torch.optim.SGD(groups, lr=0.0, momentum=0.0, weight_decay=0.0)
