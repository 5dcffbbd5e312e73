"""make_optimizer: the multi-tensor implementation for the device, bit for bit what torch's per-parameter Adam
computes on the CPU; a config's own choice kept; an optimizer without the keyword built as given."""

from functools import partial

import torch
from torch import nn

from inr.networks import MLP
from inr.tasks.optimizers import chosen_by_config, make_optimizer


def train(optimizer_of, steps: int = 20) -> list[torch.Tensor]:
    torch.manual_seed(0)
    network = MLP(16, 3, width=64, depth=3)
    optimizer = optimizer_of(list(network.parameters()))
    x, y = torch.randn(256, 16), torch.rand(256, 3)
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        (network(x) - y).square().mean().backward()
        optimizer.step()
    return [p.detach().clone() for p in network.parameters()] + [
        s[k] for s in optimizer.state.values() for k in ("exp_avg", "exp_avg_sq")
    ]


def test_foreach_adam_on_the_cpu_ends_bit_for_bit_where_per_parameter_adam_ends():
    factory = partial(torch.optim.Adam, lr=1e-2)
    chosen = train(lambda params: make_optimizer(factory, params))
    reference = train(lambda params: factory(params, foreach=False))
    for a, b in zip(chosen, reference, strict=True):
        assert torch.equal(a, b)


def test_a_config_that_chooses_an_implementation_keeps_it():
    factory = partial(torch.optim.Adam, lr=1e-3, foreach=False)
    assert chosen_by_config(factory) and not chosen_by_config(partial(torch.optim.Adam, lr=1e-3))
    optimizer = make_optimizer(factory, [nn.Parameter(torch.zeros(2))])
    assert optimizer.defaults["foreach"] is False and optimizer.defaults["lr"] == 1e-3
