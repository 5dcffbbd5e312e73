"""Shift modulations (``MetaLearning(adapt="modulations")``, ``inr.tasks.modulations``) at toy size (16², width 8):
the modulated members with zero shifts are the unmodulated network exactly, and with shifts the hand-written
act(W h + b + s); the inner loop is K SGD steps on the shifts alone, θ held — its shifts, losses and the outer
gradients of θ and of the per-layer log-rates equal a hand-written float64 loop with ``torch.autograd``; θ does not
move in the inner loop and the outer gradient reaches every tensor of θ; the checkpoint says what the init adapts,
with its K and rates; bad settings are refused in one line; ``adapt="all"`` is the unchanged loop."""

import math
from functools import partial

import pytest
import torch

from inr.data.signal_sets import SignalSet
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting, InverseFitting, VolumeFitting
from inr.tasks.adaptation import expand
from inr.tasks.init_from import INNER_ADAPTS_KEY, INNER_RATES_KEY, INNER_STEPS_KEY, inner_loop
from inr.tasks.meta import MemberField, MetaLearning
from inr.tasks.modulations import modulated, shift_losses, zero_shifts

SIGNALS = [0, 2, 3]  # K = 3 members


def tiny_meta(**kwargs) -> MetaLearning:
    torch.manual_seed(0)
    return MetaLearning(
        encoder=GaussianEncoding(in_dim=2, num_features=8, sigma=2.0),
        network=partial(MLP, width=8, depth=2, output_activation="sigmoid"),
        out_channels=3,
        adapt="modulations",
        **kwargs,
    )


def double_batch(dm: SignalSet) -> dict:
    batch = dm.batch(torch.tensor(SIGNALS), "train", torch.device("cpu"))
    return {k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in batch.items()}


def by_hand(meta: MetaLearning, theta: list, shifts: list, coords: torch.Tensor) -> torch.Tensor:
    """f(v) of the 8-8 ReLU MLP with a sigmoid, every hidden layer act(W h + b + s), written out: (N, 3)."""
    (w0, b0, w1, b1, w2, b2), (s0, s1) = theta, shifts
    h = meta.encoder(coords)
    h = torch.relu(h @ w0.T + b0 + s0)
    h = torch.relu(h @ w1.T + b1 + s1)
    return torch.sigmoid(h @ w2.T + b2)


def members_field(meta: MetaLearning, phi: dict, coords: torch.Tensor) -> torch.Tensor:
    stacked = meta.members_task(len(SIGNALS), torch.device("cpu"))
    params = {f"task.network.{n}": p for n, p in phi.items()}
    return torch.func.functional_call(MemberField(stacked), params, ({"coords": coords},), {"measure": False})


def test_zero_shifts_are_the_unmodulated_network_and_shifts_are_act_w_h_plus_b_plus_s():
    meta = tiny_meta(algorithm="maml").double()
    theta = meta.theta()
    coords = torch.rand(50, 2, dtype=torch.float64)
    assert meta.shift_names == ["0.bias", "2.bias"]  # the two hidden layers, not the output layer
    plain = members_field(meta, expand(theta, 3), coords)  # (K, N, 3)
    zero = members_field(meta, modulated(theta, zero_shifts(theta, meta.shift_names, 3)), coords)
    assert torch.equal(zero, plain)
    single = meta.network(meta.encoder(coords))
    assert all(torch.allclose(plain[k], single, atol=1e-14, rtol=0) for k in range(3))
    shifts = {n: torch.randn(3, 8, dtype=torch.float64) for n in meta.shift_names}
    got = members_field(meta, modulated(theta, shifts), coords)
    params = [p.detach() for p in theta.values()]
    for k in range(3):
        want = by_hand(meta, params, [shifts["0.bias"][k], shifts["2.bias"][k]], coords)
        assert torch.allclose(got[k], want, atol=1e-13, rtol=0)
    assert (got - plain).abs().max() > 1e-3  # the shifts change the field


@pytest.mark.parametrize("algorithm", ["maml", "metasgd"])
def test_the_inner_loop_is_sgd_on_the_shifts_alone_against_a_hand_written_loop(algorithm, natural_signals):
    """K = 3 inner steps s_l ← s_l − α_l ∇_{s_l} L_k (distinct α_l per layer for Meta-SGD), θ held: the shifts, the
    losses after them, the meta loss and its gradients with respect to θ and to the log-rates equal the same steps
    written by hand in float64 (1e-10); θ is where it was after the step; every tensor of θ gets a gradient."""
    steps, alpha = 3, 0.7
    dm = natural_signals()
    meta = tiny_meta(algorithm=algorithm, inner_loop_steps=steps, inner_loop_lr=alpha).double()
    meta.attach_data(dm)
    if algorithm == "metasgd":
        assert len(meta.inner_log_rates) == 2  # one rate per shifted layer
        with torch.no_grad():
            for i, a in enumerate(meta.inner_log_rates):
                a.fill_(math.log(alpha) + 0.5 * i - 0.2)
    batch = double_batch(dm)
    before = {n: p.detach().clone() for n, p in meta.theta().items()}
    stacked = meta.members_task(3, torch.device("cpu"))
    rates = meta.inner_rates()
    _, after, shifts = shift_losses(meta.losses_at(stacked, batch), meta.theta(), meta.shift_names, 3, steps, rates)
    loss = meta.training_step(batch, 0)
    params = list(meta.network.parameters())
    logs = list(meta.inner_log_rates) if algorithm == "metasgd" else []
    got = torch.autograd.grad(loss, params + logs)
    assert all(torch.equal(p, before[n]) for n, p in meta.theta().items())  # θ held in the inner loop

    theta = [p.detach().clone().requires_grad_(True) for p in params]
    a = [x.detach().clone().requires_grad_(True) for x in logs]
    rate = [x.exp() for x in a] if a else [alpha, alpha]
    coords = batch["coords"]
    finals, hand_shifts = [], []
    for k in range(3):
        target = batch["targets"][k]
        s = [torch.zeros(8, dtype=torch.float64, requires_grad=True) for _ in range(2)]
        for _ in range(steps):
            value = (by_hand(meta, theta, s, coords) - target).square().mean()
            grads = torch.autograd.grad(value, s, create_graph=True)
            s = [s_l - r * g for s_l, r, g in zip(s, rate, grads)]
        finals.append((by_hand(meta, theta, s, coords) - target).square().mean())
        hand_shifts.append(s)
    expected = torch.stack(finals).mean()
    want = torch.autograd.grad(expected, theta + a)

    for l, name in enumerate(meta.shift_names):
        hand = torch.stack([hand_shifts[k][l] for k in range(3)]).detach()
        assert torch.allclose(shifts[name].detach(), hand, atol=1e-10, rtol=0), name
        assert hand.abs().max() > 1e-3  # the shifts moved
    assert torch.allclose(after.detach(), torch.stack(finals).detach(), atol=1e-10, rtol=0)
    assert abs(loss.item() - expected.item()) <= 1e-10
    assert all(g.abs().max() > 0 for g in got)  # the outer gradient reaches every tensor of θ and every rate
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-10, rtol=0)


def test_the_held_out_scores_adapt_the_shifts_alone(quiet_trainer, natural_signals):
    dm = natural_signals()
    meta = tiny_meta(algorithm="metasgd", optimizer=partial(torch.optim.Adam, lr=1e-2))
    quiet_trainer(2).fit(meta, datamodule=dm)
    before = {n: p.detach().clone() for n, p in meta.theta().items()}
    seen = []
    losses_at = meta.losses_at

    def spying(stacked, batch):
        losses = losses_at(stacked, batch)
        return lambda phi: (seen.append({n: p.detach() for n, p in phi.items()}), losses(phi))[1]

    meta.losses_at = spying
    scores = meta.adapted_scores(dm.batch(torch.tensor([0, 1]), "test", torch.device("cpu")))
    assert scores.shape == (2, len(meta.eval_steps)) and torch.isfinite(scores).all()
    assert len(seen) == max(meta.eval_steps)
    for phi in seen:  # every inner step's members: θ's weights, θ's biases plus shifts
        for name, value in phi.items():
            if name in meta.shift_names:
                continue
            assert torch.equal(value, before[name].expand_as(value)), name
    assert any((seen[-1][n] - before[n]).abs().max() > 0 for n in meta.shift_names)
    assert all(torch.equal(p, before[n]) for n, p in meta.theta().items())


@pytest.mark.parametrize("algorithm", ["maml", "metasgd"])
def test_the_checkpoint_says_the_init_adapts_modulations_with_its_steps_and_rates(
    tmp_path, quiet_trainer, algorithm, natural_signals
):
    meta, path = tiny_meta(algorithm=algorithm, inner_loop_steps=3, inner_loop_lr=0.5), tmp_path / "meta.ckpt"
    trainer = quiet_trainer(1)
    trainer.fit(meta, datamodule=natural_signals())
    trainer.save_checkpoint(path)
    checkpoint = torch.load(path, weights_only=True)
    assert checkpoint[INNER_ADAPTS_KEY] == "modulations" and checkpoint[INNER_STEPS_KEY] == 3
    loop = inner_loop(path)
    assert loop.adapts == "modulations" and loop.steps == 3 and set(loop.rates) == {"0.bias", "2.bias"}
    if algorithm == "maml":
        assert loop.rates == {"0.bias": 0.5, "2.bias": 0.5}
    else:
        assert loop.rates == pytest.approx({n: r.item() for n, r in meta.inner_rates().items()}, rel=1e-12)
        later = tiny_meta(algorithm="metasgd", init_from=str(path))  # a meta-training continued from it: its rates
        quiet_trainer(0).fit(later, datamodule=natural_signals())
        assert {n: r.item() for n, r in later.inner_rates().items()} == pytest.approx(loop.rates, rel=1e-6)


def test_adapt_all_is_the_unchanged_loop(tmp_path, quiet_trainer, natural_signals):
    """``adapt="all"`` (the default) gives the same loss as a model built without it, and its MAML checkpoint holds
    no rates and says nothing of what it adapts."""
    dm = natural_signals()
    torch.manual_seed(0)
    kwargs = dict(
        encoder=GaussianEncoding(in_dim=2, num_features=8, sigma=2.0),
        network=partial(MLP, width=8, depth=2, output_activation="sigmoid"),
        out_channels=3,
        algorithm="maml",
    )
    plain = MetaLearning(**kwargs).double()
    torch.manual_seed(0)
    kwargs["encoder"] = GaussianEncoding(in_dim=2, num_features=8, sigma=2.0)
    named = MetaLearning(**kwargs, adapt="all").double()
    named.load_state_dict(plain.state_dict())
    for m in (plain, named):
        m.attach_data(dm)
    assert torch.equal(plain.training_step(double_batch(dm), 0), named.training_step(double_batch(dm), 0))
    path = tmp_path / "maml.ckpt"
    trainer = quiet_trainer(1)
    kwargs["encoder"] = GaussianEncoding(in_dim=2, num_features=8, sigma=2.0)
    trainer.fit(MetaLearning(**kwargs, adapt="all"), datamodule=natural_signals())
    trainer.save_checkpoint(path)
    checkpoint = torch.load(path, weights_only=True)
    assert not {INNER_ADAPTS_KEY, INNER_RATES_KEY, INNER_STEPS_KEY} & set(checkpoint) and inner_loop(path) is None


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"adapt": "shifts"}, "model.adapt: unknown 'shifts'; choose all or modulations"),
        ({"algorithm": "reptile"}, "model.adapt modulations: Reptile steps θ toward the adapted weights"),
        ({"network": partial(MLP, width=8, depth=0)}, "model.adapt modulations: MLP has no hidden layer to shift"),
    ],
)
def test_bad_modulation_settings_are_refused_in_one_line(settings, message):
    kwargs = {"algorithm": "maml", **settings}
    torch.manual_seed(0)
    with pytest.raises(InputError, match=message) as info:
        MetaLearning(
            encoder=GaussianEncoding(in_dim=2, num_features=8, sigma=2.0),
            out_channels=3,
            **{"network": partial(MLP, width=8, depth=2), "adapt": "modulations", **kwargs},
        )
    assert "\n" not in str(info.value)


class MemberLoss(torch.nn.Module):
    """L_k of an ordinary single task on the batch's k-th target, through its own field, measurement and loss."""

    def __init__(self, single: torch.nn.Module, k: int) -> None:
        super().__init__()
        self.single, self.k = single, k

    def forward(self, batch: dict) -> torch.Tensor:
        single = self.single
        return single.loss(single.measure(single.field(batch), batch), batch["targets"][self.k])


KINDS = {  # kind -> (task, single task class, output activation, extra, resolution)
    "natural": ("inr.tasks.ImageFitting", ImageFitting, "sigmoid", {}, 16),
    "ct": ("inr.tasks.InverseFitting", InverseFitting, "sigmoid", {}, 16),
    "shape": ("inr.tasks.VolumeFitting", VolumeFitting, "none", {"mode": "occupancy"}, 8),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_adapts_its_shifts_through_its_own_task(kind):
    """Images, CT (through its projections) and occupancy: the meta loss and its gradient with respect to θ equal
    n = 2 SGD steps on the hidden layers' biases alone of the ordinary single task, member by member, through its
    own ``field``, ``measure`` and ``loss`` (float64, 1e-10): the shifts enter where the biases do."""
    task, cls, output, extra, side = KINDS[kind]
    dm = SignalSet(kind=kind, train_signals=4, test_signals=2, resolution=side, signals_per_step=3)
    dm.setup("fit")
    torch.manual_seed(0)
    meta = MetaLearning(
        encoder=GaussianEncoding(in_dim=3 if kind == "shape" else 2, num_features=8, sigma=2.0),
        network=partial(MLP, width=8, depth=2, output_activation=output),
        out_channels=3 if kind == "natural" else 1,
        task=task,
        algorithm="maml",
        adapt="modulations",
        inner_loop_lr=0.5,
        **extra,
    ).double()
    meta.attach_data(dm)
    batch = double_batch(dm)
    loss = meta.training_step(batch, 0)
    params = list(meta.network.parameters())
    got = torch.autograd.grad(loss, params)

    single = cls(encoder=meta.encoder, network=meta.factory, out_channels=meta.out_channels, **extra).double()
    single.attach_data(dm)
    names = [n for n, _ in single.network.named_parameters()]
    theta = [p.detach().clone().requires_grad_(True) for p in params]

    def value(phi: list, k: int) -> torch.Tensor:
        return torch.func.functional_call(MemberLoss(single, k), {f"single.network.{n}": p for n, p in zip(names, phi)}, (batch,))

    finals = []
    for k in range(3):
        phi = list(theta)
        for _ in range(2):
            hidden = [i for i, n in enumerate(names) if n in meta.shift_names]
            grads = torch.autograd.grad(value(phi, k), [phi[i] for i in hidden], create_graph=True)
            for i, g in zip(hidden, grads):
                phi[i] = phi[i] - 0.5 * g
        finals.append(value(phi, k))
    expected = torch.stack(finals).mean()
    want = torch.autograd.grad(expected, theta)
    assert abs(loss.item() - expected.item()) <= 1e-10
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-10, rtol=0)
