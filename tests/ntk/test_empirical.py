"""The three empirical NTK implementations agree with each other and with a per-point autograd loop."""

import pytest
import torch
from torch import nn

from inr.encoders import GaussianEncoding, IdentityEncoding
from inr.networks import MLP
from inr.ntk import NTKMLP, NTKMethod, empirical_ntk, mlp_structure
from inr.tasks import ImageFitting

METHODS = ["structured", "jacobian", "ntvp"]


def reference_ntk(model: nn.Module, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
    """Θ[i, j, o, p] from explicit Jacobian rows, one autograd call per point and output (the slow truth)."""
    params = [p for p in model.parameters() if p.requires_grad]

    def rows(x):
        out = []
        for xi in x:
            f = model(xi[None]).reshape(-1)
            out.append(
                torch.stack(
                    [
                        torch.cat([g.reshape(-1) for g in torch.autograd.grad(f[o], params, retain_graph=True)])
                        for o in range(len(f))
                    ]
                )
            )
        return torch.stack(out)  # (N, O, P)

    return torch.einsum("iap,jbp->ijab", rows(x1), rows(x2))


def image_task(dtype=torch.float64):
    torch.manual_seed(0)
    enc = GaussianEncoding(in_dim=2, num_features=6, sigma=3.0, seed=1)
    task = ImageFitting(
        encoder=enc, network=lambda i, o: MLP(i, o, width=7, depth=2, output_activation="sigmoid"), out_channels=3
    )
    return task.to(dtype)


def test_all_methods_match_the_reference_in_float64():
    task = image_task()
    x1 = torch.rand(7, 2, dtype=torch.float64)
    x2 = torch.rand(5, 2, dtype=torch.float64)
    ref = reference_ntk(task, x1, x2)  # (7, 5, 3, 3)
    for method in METHODS:
        full = empirical_ntk(task, x1, x2, method=method, full=True, chunk_size=3)  # 3 does not divide 7 or 5
        trace = empirical_ntk(task, x1, x2, method=method, chunk_size=3)
        # float64: agreement to round-off, relative 1e-12 of the kernel's scale
        torch.testing.assert_close(full, ref, rtol=1e-12, atol=1e-12 * ref.abs().max().item())
        torch.testing.assert_close(trace, ref.diagonal(dim1=2, dim2=3).sum(-1), rtol=1e-12, atol=1e-12 * ref.abs().max().item())
    # the task registers its network under two names; the functional calls must leave it intact
    assert all(isinstance(p, nn.Parameter) for p in task.parameters()) and task(x1).requires_grad


def test_symmetric_path_matches_explicit_x2_and_is_psd():
    task = image_task()
    x = torch.rand(9, 2, dtype=torch.float64)
    for method in METHODS:
        sym = empirical_ntk(task, x, method=method, chunk_size=4)
        torch.testing.assert_close(sym, empirical_ntk(task, x, x.clone(), method=method, chunk_size=4), rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(sym, sym.T, rtol=0, atol=0)
        assert torch.linalg.eigvalsh(sym).min() > -1e-10 * sym.diagonal().max()
        full = empirical_ntk(task, x, method=method, full=True, chunk_size=4)
        torch.testing.assert_close(full, full.permute(1, 0, 3, 2), rtol=1e-12, atol=1e-14)


def test_float32_agreement_and_default_chunks():
    task = image_task(torch.float32)
    x = torch.rand(33, 2)
    k = {m: empirical_ntk(task, x, method=m) for m in METHODS}
    scale = k["structured"].abs().max().item()
    for m in ("jacobian", "ntvp"):
        # float32: relative round-off of sums over ~100 parameters, stated as 1e-5 of the scale
        torch.testing.assert_close(k[m], k["structured"], rtol=1e-5, atol=1e-5 * scale)


def test_ntk_parametrized_mlp_with_bias_and_encoder_prefix():
    torch.manual_seed(3)
    net = nn.Sequential(
        GaussianEncoding(in_dim=1, num_features=4, sigma=2.0), NTKMLP(8, 2, width=6, depth=2, weight_std=1.3, bias_std=0.4)
    ).double()
    x1, x2 = torch.rand(6, 1, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64)
    ref = reference_ntk(net, x1, x2)
    for method in METHODS:
        torch.testing.assert_close(empirical_ntk(net, x1, x2, method=method, full=True), ref, rtol=1e-12, atol=1e-13)


def test_trainable_input_map_is_included_and_frozen_parameters_are_not():
    torch.manual_seed(4)
    net = nn.Sequential(nn.Linear(2, 5), nn.Softplus(), nn.LayerNorm(5), nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 2)).double()
    structure = mlp_structure(net)
    assert len(structure.prefix) == 3 and len(structure.layers) == 2  # LayerNorm ends the MLP tail
    x = torch.rand(5, 2, dtype=torch.float64)
    ref = reference_ntk(net, x, x)
    torch.testing.assert_close(empirical_ntk(net, x, method="structured", full=True), ref, rtol=1e-12, atol=1e-13)
    net[3].weight.requires_grad_(False)
    net[5].bias.requires_grad_(False)
    ref = reference_ntk(net, x, x)
    for method in METHODS:
        torch.testing.assert_close(empirical_ntk(net, x, method=method, full=True), ref, rtol=1e-12, atol=1e-13)


def test_scalar_output_and_network_alone():
    task = ImageFitting(encoder=IdentityEncoding(2), network=lambda i, o: MLP(i, o, width=5, depth=1), out_channels=1).double()
    x = torch.rand(4, 2, dtype=torch.float64)
    k_task = empirical_ntk(task, x, method="structured")
    assert k_task.shape == (4, 4)
    # a fixed identity encoder adds no parameters: the network's NTK on the features is the same kernel
    torch.testing.assert_close(
        empirical_ntk(task.network, task.encoder(x), method=NTKMethod.JACOBIAN), k_task, rtol=1e-12, atol=1e-14
    )


class Scaled(nn.Module):
    """Not a Sequential: only the generic paths apply."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 3)
        self.gain = nn.Parameter(torch.tensor(1.5))

    def forward(self, x):
        return self.gain * torch.sin(self.lin(x))


def test_generic_module_auto_fallback_and_errors():
    model = Scaled().double()
    x = torch.rand(5, 2, dtype=torch.float64)
    ref = reference_ntk(model, x, x)
    torch.testing.assert_close(empirical_ntk(model, x, full=True), ref, rtol=1e-12, atol=1e-13)  # auto -> jacobian
    torch.testing.assert_close(empirical_ntk(model, x, method="ntvp", full=True), ref, rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match="neither an INRModule nor an nn.Sequential"):
        empirical_ntk(model, x, method="structured")
    with pytest.raises(ValueError, match="unknown NTK method 'fast'"):
        empirical_ntk(model, x, method="fast")
    with pytest.raises(ValueError, match="chunk_size"):
        empirical_ntk(model, x, method="jacobian", chunk_size=0)


class Tied(nn.Module):
    """One weight used by two layers, and a module registered under two names."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.b.weight = self.a.weight
        self.alias = self.a

    def forward(self, x):
        return self.b(torch.tanh(self.alias(x)))


def test_tied_and_aliased_parameters_count_once_and_survive():
    model = Tied().double()
    x = torch.rand(4, 3, dtype=torch.float64)
    ref = reference_ntk(model, x, x)
    for method in ("jacobian", "ntvp"):
        torch.testing.assert_close(empirical_ntk(model, x, method=method, full=True), ref, rtol=1e-12, atol=1e-13)
    assert all(isinstance(p, nn.Parameter) for p in (model.a.weight, model.b.weight, model.alias.bias))
    assert model.b.weight is model.a.weight and model(x).requires_grad
