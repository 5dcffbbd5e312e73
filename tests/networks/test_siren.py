"""SIREN: the paper's initialisation bounds, activation statistics through depth, layout, and a CLI run."""

import math
from pathlib import Path

import pytest
import torch
from torch import nn

from inr.networks import MLP, SIREN, Sine
from inr.run.cli import cli_main


def pre_activations(net, x):
    """ω₀(Wh + b) entering each sine, and the network output."""
    pres, h = [], x
    for m in net:
        if isinstance(m, Sine):
            pres.append(m.omega_0 * h)
        h = m(h)
    return pres, h


def test_weight_bounds_follow_the_paper():
    net = SIREN(2, 3, width=64, depth=3, first_omega_0=30.0, hidden_omega_0=20.0, bias_init="weight")
    linears = [m for m in net if isinstance(m, nn.Linear)]
    bounds = [1 / 2, math.sqrt(6 / 64) / 20, math.sqrt(6 / 64) / 20, math.sqrt(6 / 64) / 20]  # U(−1/n, 1/n), then U(±√(6/n)/ω₀)
    for lin, b in zip(linears, bounds):
        w = lin.weight.detach()
        assert w.abs().max() <= b and w.abs().max() > 0.9 * b  # fills the interval
        assert lin.bias.abs().max() <= b  # bias_init="weight": the same law
    assert [m.omega_0 for m in net if isinstance(m, Sine)] == [30.0, 20.0, 20.0]


@torch.no_grad()
def test_preactivations_stable_through_depth():
    # Sitzmann et al. 2020, supplement 1 (and its activation-statistics figure): the first sine sees a
    # wide pre-activation (std ≈ 10/√d from the weights, plus the bias), its output is arcsine
    # distributed (var 1/2, P(|y| > 0.9) = 1 − (2/π) asin 0.9 = 0.287); every later pre-activation is
    # ≈ N(0, 1). With Gaussian pre-activations the variance follows v' = 1 − e^{−2v} + 2/n
    # (E sin² z = (1 − e^{−2v})/2, Var ω₀b = 2/n), which settles at 0.90² from 1.0: we assert each layer
    # within 3% of that recursion, mean within ±0.05, and std within [0.85, 1.05] in all five layers.
    torch.manual_seed(0)
    n, depth = 256, 6
    net = SIREN(2, 3, width=n, depth=depth, bias_init="weight")
    pres, out = pre_activations(net, torch.rand(16384, 2))
    first = torch.sin(pres[0])
    assert pres[0].std() > 7.0
    assert abs(first.var().item() - 0.5) < 0.01 and abs((first.abs() > 0.9).float().mean().item() - 0.287) < 0.01
    v = 2 * first.pow(2).mean().item() + 2 / n
    for z in pres[1:]:
        assert abs(z.mean().item()) < 0.05
        assert 0.85 < z.std().item() < 1.05
        assert abs(z.std().item() / math.sqrt(v) - 1) < 0.03
        v = 1 - math.exp(-2 * v) + 2 / n
    assert out.std() < 0.1  # the linear head, U(±√(6/n)/ω₀), starts near zero


@torch.no_grad()
def test_reference_code_biases_are_the_default_and_inflate_the_variance():
    # PyTorch's default bias U(−1/√n, 1/√n) (vsitzmann/siren's layers keep it) times ω₀ adds ω₀²/(3n) = 1.17 at
    # n = 256: std ≈ √(0.9 + 1.17); ω₀b spans ±30/16 = ±1.875 rad in the hidden layers
    torch.manual_seed(0)
    net = SIREN(2, 3, width=256, depth=6)
    pres, _ = pre_activations(net, torch.rand(16384, 2))
    assert all(z.std().item() > 1.25 for z in pres[1:])
    hidden = [m for m in net if isinstance(m, nn.Linear)][1]
    assert 0.9 * 30 / 16 < 30 * float(hidden.bias.abs().max()) <= 30 / 16


def test_layout_matches_mlp_and_input_is_rescaled():
    siren, mlp = SIREN(2, 3, width=32, depth=3), MLP(2, 3, width=32, depth=3)
    shapes = lambda net: [tuple(m.weight.shape) for m in net if isinstance(m, nn.Linear)]
    assert shapes(siren) == shapes(mlp)
    # the first module maps [0, 1) to [−1, 1), so the first sine sees ω₀(W(2v − 1) + b)
    v = torch.rand(5, 2)
    lin = next(m for m in siren if isinstance(m, nn.Linear))
    torch.testing.assert_close(nn.Sequential(*list(siren)[:3])(v), torch.sin(30.0 * lin(2 * v - 1)))
    plain = SIREN(2, 3, width=32, depth=3, rescale_input=False)
    assert isinstance(plain[0], nn.Linear) and isinstance(SIREN(2, 1, depth=1, output_activation="sigmoid")[-1], nn.Sigmoid)


def test_trainable_omega_is_opt_in_and_learns():
    torch.manual_seed(0)
    fixed = SIREN(2, 3, width=16, depth=3)
    # the default adds no parameter: the state_dict holds the Linear layers only, as before the option
    assert all(k.endswith(("weight", "bias")) for k in fixed.state_dict())
    torch.manual_seed(0)
    net = SIREN(2, 3, width=16, depth=3, trainable_omega=True, first_omega_0=30.0, hidden_omega_0=20.0)
    omegas = [m.omega_0 for m in net if isinstance(m, Sine)]
    assert all(isinstance(w, nn.Parameter) for w in omegas) and [w.item() for w in omegas] == [30.0, 20.0, 20.0]
    # at init it is the fixed-ω₀ network with the same weights
    same = SIREN(2, 3, width=16, depth=3, first_omega_0=30.0, hidden_omega_0=20.0)
    same.load_state_dict({k: v for k, v in net.state_dict().items() if not k.endswith("omega_0")})
    x = torch.rand(64, 2)
    torch.testing.assert_close(net(x), same(x))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    net(x).square().mean().backward()
    assert all(w.grad is not None and w.grad.abs() > 0 for w in omegas)
    optimizer.step()
    assert [w.item() for w in omegas] != [30.0, 20.0, 20.0]


@pytest.mark.slow
def test_cli_runs_siren_config(tmp_path, capsys, tiny_flags):
    configs = ("image.yaml", "methods/siren.yaml")
    cli_main(
        [*tiny_flags(configs, 16, width=16, steps=3, bar=False, save_dir=tmp_path), "--trainer.default_root_dir", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert "summary:" in out and "steps 3" in out
    assert list(Path(tmp_path).glob("image_siren/version_0/config.yaml"))
