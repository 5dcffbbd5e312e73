"""Gaussian windows never hand subnormal floats to the next operation: their tails below τ = tiny/ε are 0.

Subnormal numbers make CPU arithmetic several times slower (benchmarks/subnormals.py), and a window
e^{−(s z)²} with s = 10 produces them for most pre-activations beyond |z| ≈ 0.93. The flushed values differ from
the exact window by at most τ (9.9e-32 in float32), and a training run with the flush ends with the same
weights, bit for bit, as one without it.
"""

import pytest
import torch

from inr.networks import WIRE, GaussMLP
from inr.networks.gauss import GaussActivation
from inr.networks.layers import flush_negligible
from inr.networks.wire import ComplexGabor

TINY = torch.finfo(torch.float32).tiny  # the smallest normal float32
CUTOFF = TINY / torch.finfo(torch.float32).eps  # τ = 9.9e-32


def subnormal_count(t: torch.Tensor) -> int:
    return int(((t != 0) & (t.abs() < TINY)).sum())


def test_flush_keeps_values_above_the_cutoff_and_zeroes_the_rest():
    w = torch.tensor([1.0, 0.5, 1e-20, 2 * CUTOFF, 0.5 * CUTOFF, 1e-35, 1e-40, 0.0])
    assert torch.equal(flush_negligible(w), torch.tensor([1.0, 0.5, 1e-20, 2 * CUTOFF, 0.0, 0.0, 0.0, 0.0]))
    assert flush_negligible(w, inplace=True) is w and w[4] == 0
    # float64 keeps down to its own tiny/ε (1e-292)
    assert flush_negligible(torch.tensor([1e-250], dtype=torch.float64)).item() == 1e-250


def test_gauss_activation_has_no_subnormals_and_is_within_the_cutoff_of_exact():
    z = torch.linspace(-2, 2, 10001, requires_grad=True)
    out = GaussActivation(scale=10.0)(z)
    exact = torch.exp(-((10.0 * z.detach().double()) ** 2))
    # the plain formula does produce subnormals on this range: the case the flush is for
    assert subnormal_count(torch.exp(-((10.0 * z.detach()) ** 2))) > 0
    assert subnormal_count(out) == 0
    # float32 rounding of (s z)² ≤ 400 moves the exponent by ≤ 400·2ε, so 1e-4 relative; the flush adds ≤ τ
    assert bool(((out.detach().double() - exact).abs() <= CUTOFF + 1e-4 * exact).all())
    out.backward(torch.ones_like(out))
    assert subnormal_count(z.grad) == 0


@pytest.mark.parametrize("real_input", [True, False])
@pytest.mark.parametrize("trainable", [False, True])
def test_gabor_activation_has_no_subnormals(real_input, trainable):
    torch.manual_seed(0)
    z = (torch.randn(4096, 64) * 2).requires_grad_()
    act = ComplexGabor(omega_0=20.0, scale=10.0, trainable=trainable, real_input=real_input)
    out = act(z)
    assert subnormal_count(out) == 0
    out.backward(torch.randn_like(out))
    assert subnormal_count(z.grad) == 0
    # and its values: the complex formula, flushed where |ψ| < ε²
    with torch.no_grad():
        zd = z.detach().double()
        zc = torch.complex(zd, torch.zeros_like(zd)) if real_input else torch.complex(*zd.chunk(2, dim=-1))
        psi = torch.exp(1j * 20.0 * zc - (10.0 * zc.abs()) ** 2)
        expected = torch.cat([psi.real, psi.imag], dim=-1)
        assert float((out.double() - expected).abs().max()) <= 1e-6


@pytest.mark.parametrize("make", [GaussMLP, WIRE], ids=["gauss", "wire"])
def test_a_training_step_reads_and_writes_no_subnormals(make):
    torch.manual_seed(0)
    net = make(2, 3)
    x, y = torch.rand(1024, 2), torch.rand(1024, 3)
    seen = []
    hooks = [
        m.register_forward_hook(lambda m, i, o: seen.append(subnormal_count(o))) for m in net.modules() if not list(m.children())
    ]
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    for h in hooks:
        h.remove()
    assert sum(seen) == 0, seen
    assert sum(subnormal_count(p.grad) for p in net.parameters() if p.grad is not None) == 0


@pytest.mark.parametrize("make", [GaussMLP, WIRE], ids=["gauss", "wire"])
def test_training_with_the_flush_ends_with_the_same_weights_bit_for_bit(make, monkeypatch):
    """40 Adam steps with and without the flush, from the same start: equal weights. The tails flushed are
    below anything float32 training can resolve (the cutoff's docstring)."""
    import inr.networks.gauss as gauss_module
    import inr.networks.wire as wire_module

    x, y = torch.rand(1024, 2, generator=torch.Generator().manual_seed(0)), torch.rand(1024, 3)
    torch.manual_seed(0)
    start = make(2, 3, width=64).state_dict()
    ends, subnormal_windows = [], []

    def unflushed(window, inplace=False):
        subnormal_windows.append(subnormal_count(window))
        return window

    for flush in (True, False):
        if not flush:
            for module in (gauss_module, wire_module):
                monkeypatch.setattr(module, "flush_negligible", unflushed)
        net = make(2, 3, width=64)
        net.load_state_dict(start)
        opt = torch.optim.Adam(net.parameters(), lr=2e-3)
        for _ in range(40):
            opt.zero_grad()
            (net(x) - y).square().mean().backward()
            opt.step()
        ends.append(net.state_dict())
    assert sum(subnormal_windows) > 0  # the unflushed run did meet subnormals: the comparison tests something
    for key in ends[0]:
        assert torch.equal(ends[0][key], ends[1][key]), key
