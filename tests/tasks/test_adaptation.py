"""The loops of ``inr.tasks.adaptation`` on small closed-form problems in float64: the inner loop's members are
independent fits, SGD and Adam are torch's, Reptile's outer step is θ + ε·mean_k(φ_k − θ), and MAML's
meta-gradient is the exact derivative through the inner steps (central finite differences, float64)."""

import pytest
import torch

from inr.tasks.adaptation import adapt, expand, maml_losses, reptile_gradient, surrogate

F64 = torch.float64
X = torch.randn(6, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
Y = torch.randn(3, 6, generator=torch.Generator().manual_seed(1), dtype=F64)  # K = 3 members, each its own target


def losses(phi):
    """A two-layer tanh network per member on the shared inputs X: (K,) mean squared errors."""
    hidden = torch.tanh(torch.einsum("nd,kod->kno", X, phi["w1"]) + phi["b1"][:, None])
    out = torch.einsum("kno,kpo->knp", hidden, phi["w2"])[..., 0]
    return ((out - Y) ** 2).mean(1)


def theta0():
    g = torch.Generator().manual_seed(2)
    return {
        "w1": torch.randn(4, 3, generator=g, dtype=F64).requires_grad_(),
        "b1": torch.randn(4, generator=g, dtype=F64).requires_grad_(),
        "w2": torch.randn(1, 4, generator=g, dtype=F64).requires_grad_(),
    }


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_the_members_adapt_as_independent_fits_with_torchs_optimizer(optimizer):
    theta = theta0()
    adapted, history = adapt(losses, expand(theta, 3), steps=4, lr=0.05, optimizer=optimizer)
    assert history.shape == (4, 3)
    for k in range(3):  # member k alone, its own optimizer
        single = {n: p.detach().clone()[None].requires_grad_() for n, p in theta.items()}
        opt = (torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam)(list(single.values()), lr=0.05)
        for _ in range(4):
            opt.zero_grad()
            loss = ((torch.tanh(X @ single["w1"][0].T + single["b1"][0]) @ single["w2"][0].T)[:, 0] - Y[k]).pow(2).mean()
            loss.backward()
            opt.step()
        for name in theta:
            assert torch.allclose(adapted[name][k], single[name][0], atol=1e-14, rtol=0)


def test_sgd_steps_are_phi_minus_lr_gradient():
    theta = theta0()
    adapted, _ = adapt(losses, expand(theta, 3), steps=1, lr=0.3)
    start = expand({n: p.detach().requires_grad_() for n, p in theta.items()}, 3)
    start = {n: p.clone() for n, p in start.items()}
    grads = torch.autograd.grad(losses(start).sum(), list(start.values()))
    for (name, p), g in zip(start.items(), grads):
        assert torch.allclose(adapted[name], p - 0.3 * g, atol=1e-15, rtol=0)


def test_observe_sees_every_step_from_zero():
    seen = []
    adapt(losses, expand(theta0(), 3), steps=3, lr=0.1, observe=lambda t, phi: seen.append((t, float(losses(phi).sum()))))
    assert [t for t, _ in seen] == [0, 1, 2, 3]
    assert seen[-1][1] < seen[0][1]


def test_reptile_with_one_sgd_step_and_epsilon_one_is_one_sgd_step_on_the_mean_loss():
    theta = theta0()
    alpha = 0.2
    adapted, _ = adapt(losses, expand(theta, 3), steps=1, lr=alpha)
    g = reptile_gradient(theta, adapted)
    mean_loss = losses(expand(theta, 3)).mean()  # every member at θ
    grads = torch.autograd.grad(mean_loss, list(theta.values()))
    for (name, p), grad in zip(theta.items(), grads):
        assert torch.allclose(p - 1.0 * g[name], p - alpha * grad, atol=1e-15, rtol=0)


def test_the_surrogate_hands_its_gradient_to_backward():
    theta = theta0()
    direction = {n: torch.randn_like(p) for n, p in theta.items()}
    value = surrogate(theta, direction, torch.tensor(0.25))
    assert float(value.detach()) == 0.25
    value.backward()
    assert all(torch.equal(p.grad, direction[n]) for n, p in theta.items())


def meta_loss(theta, steps=3, lr=0.1):
    return maml_losses(losses, theta, 3, steps, lr)[1].mean()


def test_maml_meta_gradient_equals_finite_differences():
    """∂/∂θ mean_k L_k(φ_k^(3)(θ)) against (L(θ + εe_i) − L(θ − εe_i)) / 2ε, ε = 1e-6, every entry of θ: agreement to
    1e-7 relative to the gradient's largest entry (truncation O(ε²), rounding ≈ 1e-10 here)."""
    theta = theta0()
    grads = torch.autograd.grad(meta_loss(theta), list(theta.values()))
    eps, scale = 1e-6, max(float(g.abs().max()) for g in grads)
    for (name, p), grad in zip(theta.items(), grads):
        fd = torch.zeros_like(p)
        for i in range(p.numel()):
            step = torch.zeros(p.numel(), dtype=F64).index_fill_(0, torch.tensor(i), eps).view_as(p)
            plus = {n: (q + step if n == name else q).detach() for n, q in theta.items()}
            minus = {n: (q - step if n == name else q).detach() for n, q in theta.items()}
            fd.view(-1)[i] = (meta_loss(plus) - meta_loss(minus)) / (2 * eps)
        assert float((fd - grad).abs().max()) <= 1e-7 * scale, name


def test_maml_is_second_order():
    """Dropping the second-order terms (inner gradients detached) changes the meta-gradient well beyond the
    finite-difference agreement above: the exact one differentiates through the inner steps."""
    theta = theta0()
    exact = torch.autograd.grad(meta_loss(theta), list(theta.values()))
    phi = expand(theta, 3)
    for _ in range(3):
        grads = torch.autograd.grad(losses(phi).sum(), list(phi.values()))
        phi = {n: phi[n] - 0.1 * g.detach() for n, g in zip(phi, grads)}
    first_order = torch.autograd.grad(losses(phi).mean(), list(theta.values()))
    assert max(float((a - b).abs().max()) for a, b in zip(exact, first_order)) > 1e-3


def test_maml_reports_the_losses_before_adapting():
    theta = theta0()
    before, after = maml_losses(losses, theta, 3, steps=2, lr=0.1)
    assert torch.allclose(before, losses(expand(theta, 3)).detach())
    assert float(after.detach().sum()) < float(before.sum())
