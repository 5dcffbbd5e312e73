"""BACON: band-limited by construction (measured with the project's DFT), frozen integer frequencies, its init."""

import math
from functools import partial

import pytest
import torch
from torch import nn

from inr.data.grid import Grid
from inr.encoders import IdentityEncoding
from inr.errors import InputError
from inr.networks import BACON, SIREN, BandLimitedSineFilter
from inr.spectral import grid_dft, grid_frequencies, radial_frequency
from inr.tasks import INRModule


def field(network, in_dim: int = 2) -> INRModule:
    """The task-level field f(v) = network(v) on raw coordinates; ``render`` evaluates it as the callbacks do."""
    return INRModule(encoder=IdentityEncoding(in_dim=in_dim), network=network, out_channels=1)


@torch.no_grad()
def render64(net: nn.Module, shape) -> torch.Tensor:
    """The network on the task's grid (v = i/N) in float64, (C, *shape), so rounding sits near 1e-16."""
    coords = Grid(shape).all_coords().double()
    return net.double()(coords).T.reshape(-1, *shape)  # (N, C) -> (C, *shape)


def energy_by_box(spectrum: torch.Tensor, shape, limit: float) -> tuple[float, float]:
    """Fraction of Σ|c_k|² with max_d |k_d| > limit, and fraction in the top shell limit − 1 < max_d |k_d| ≤ limit."""
    box = torch.stack(torch.meshgrid(*[k.abs() for k in grid_frequencies(shape)], indexing="ij")).amax(0)
    power = spectrum.abs().square().sum(0)  # (C, *shape) -> (*shape)
    total = power.sum()
    return float(power[box > limit].sum() / total), float(power[(box > limit - 1) & (box <= limit)].sum() / total)


def test_output_is_band_limited_on_a_fine_grid():
    # bandwidth 6 over 3 filters -> m = (2, 2, 2), M = 6 cycles per unit per axis. On a 64² grid (Nyquist 32,
    # so nothing above M can alias back) in float64 the energy beyond the box |k|∞ ≤ 6 is rounding
    # (< 1e-24 of the total; a band-limited f has none), while the outer shell 5 < |k|∞ ≤ 6 carries a
    # visible share (> 1e-3: the top frequencies are present, the limit is not met trivially).
    # Seed 0 measures 8.5e-31 beyond and 0.033 in the shell; float32 rendering 2.6e-13 beyond.
    torch.manual_seed(0)
    task = field(partial(BACON, width=64, depth=2, bandwidth=6.0))
    assert task.network.max_frequency == 6
    spectrum = grid_dft(render64(task.network, (64, 64)))
    beyond, shell = energy_by_box(spectrum, (64, 64), 6)
    assert beyond < 1e-24 and shell > 1e-3
    # radially: nothing beyond the box's corner √2·M
    power = spectrum.abs().square().sum(0)
    assert float(power[radial_frequency((64, 64)) > 6 * math.sqrt(2) + 1e-9].sum() / power.sum()) < 1e-24
    # the task's own float32 render (what the spectral callback sees): float32 rounding, < 1e-10
    beyond32, _ = energy_by_box(grid_dft(task.float().render((64, 64)).double()), (64, 64), 6)
    assert beyond32 < 1e-10


def test_band_limit_survives_training_and_the_frequencies_stay_frozen():
    # train on white noise (all frequencies up to Nyquist present): the fit can only use |k|∞ ≤ M
    torch.manual_seed(0)
    task = field(partial(BACON, width=32, depth=2, bandwidth=4.0), in_dim=1).double()
    before = [f.frequencies.clone() for f in task.network.filters]
    assert not any(name.endswith("frequencies") for name, _ in task.named_parameters())
    x = torch.arange(128, dtype=torch.float64)[:, None] / 128
    target = torch.randn(128, 1, dtype=torch.float64)
    optimizer = torch.optim.Adam(task.parameters(), lr=1e-2)
    losses = []
    for _ in range(50):
        loss = (task(x) - target).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.9 * losses[0]  # it did learn the in-band part
    assert all(torch.equal(b, f.frequencies) for b, f in zip(before, task.network.filters))
    beyond, shell = energy_by_box(grid_dft(render64(task.network, (128,))), (128,), task.network.max_frequency)
    assert beyond < 1e-24 and shell > 1e-3


def test_the_measurement_sees_out_of_band_energy_when_there_is_some():
    # the same measurement on a SIREN (no band limit) finds energy beyond |k|∞ = 6 far above rounding (0.07)
    torch.manual_seed(0)
    spectrum = grid_dft(render64(SIREN(2, 1, width=64, depth=2), (64, 64)))
    beyond, _ = energy_by_box(spectrum, (64, 64), 6)
    assert beyond > 1e-3


def test_frequency_and_weight_initialisation():
    # K uniform on {−m, …, m}: on 4096 × 2 draws with m = 8 each of the 17 values has frequency 1/17 ± 0.015
    # (sd 0.0027), mean within ±0.2 of 0 (sd 0.055), variance within 5 % of m(m + 1)/3 = 24 (sd ≈ 1.3 %)
    torch.manual_seed(0)
    filt = BandLimitedSineFilter(2, 4096, 8)
    k = filt.frequencies.flatten()
    assert torch.equal(k, k.round()) and k.abs().max() == 8
    counts = torch.bincount((k + 8).long(), minlength=17).double() / k.numel()
    assert (counts - 1 / 17).abs().max() < 0.015
    assert abs(k.mean().item()) < 0.2 and abs(k.var().item() / 24 - 1) < 0.05
    assert math.pi * 0.99 < filt.phase.abs().max() <= math.pi
    # linear layers and head: U(−√(6/n), √(6/n)) (modules.py mfn_weights_init)
    net = BACON(2, 3, width=512, depth=2, bandwidth=64.0, filter_fractions=[0.25, 0.25, 0.5])
    assert [f.max_frequency for f in net.filters] == [16, 16, 32] and net.max_frequency == 64
    bound = math.sqrt(6 / 512)
    for lin in [*net.linears, net.head]:
        assert lin.weight.abs().max() <= bound and (lin.out_features < 512 or lin.weight.abs().max() > 0.99 * bound)


@pytest.mark.parametrize("in_dim", [1, 2, 3])
def test_shapes(in_dim):
    net = BACON(in_dim, 4, width=16, depth=3, bandwidth=8.0)
    assert net(torch.rand(9, in_dim)).shape == (9, 4) and len(net.filters) == 4 and len(net.linears) == 3


def test_bad_fractions_are_refused():
    with pytest.raises(InputError, match="filter_fractions"):
        BACON(2, 3, depth=2, filter_fractions=[0.5, 0.5])
    with pytest.raises(InputError, match="bandwidth"):
        BACON(2, 3, bandwidth=0.0)
