"""Meta-SGD (``MetaLearning(algorithm="metasgd")``) at toy size: its inner loop is θ_i − exp(a_i)·∇_i L, checked in
float64 against the same steps written by hand with ``torch.autograd`` on an ordinary task (losses and the gradients
of θ and of the log-rates a_i); the rates change under the outer optimizer; an init written by ``meta_train`` holds
them and ``inner_rates`` reads them back, ``load_init`` reads its field; an init without rates gives None."""

import math
from functools import partial

import pytest
import torch
from torch import nn

from inr.codec.architecture import Architecture
from inr.data.signal_sets import SignalSet
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.methods.meta import MetaSettings, meta_train
from inr.networks import MLP
from inr.tasks import ImageFitting
from inr.tasks.adaptation import adapt, expand
from inr.tasks.init_from import INNER_RATES_KEY, inner_loop, inner_rates, load_init
from inr.tasks.meta import MetaLearning


def tiny_meta(**kwargs) -> MetaLearning:
    torch.manual_seed(0)
    return MetaLearning(
        encoder=GaussianEncoding(in_dim=2, num_features=8, sigma=2.0),
        network=partial(MLP, width=8, depth=1, output_activation="sigmoid"),
        out_channels=3,
        **kwargs,
    )


def double_batch(dm: SignalSet, signals: list[int]) -> dict:
    batch = dm.batch(torch.tensor(signals), "train", torch.device("cpu"))
    return {k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in batch.items()}


class MemberLoss(nn.Module):
    """L_k of an ordinary single task on the batch's k-th target (its parameters replaceable by functional_call)."""

    def __init__(self, single: nn.Module, k: int) -> None:
        super().__init__()
        self.single, self.k = single, k

    def forward(self, batch: dict) -> torch.Tensor:
        single = self.single
        return single.loss(single.measure(single.field(batch), batch), batch["targets"][self.k])


def test_the_inner_steps_are_theta_minus_exp_a_times_the_gradient(natural_signals):
    """Two inner steps with a different rate per tensor: the meta loss and its gradients with respect to θ and to
    each log-rate a_i equal the hand-written φ ← φ − exp(a_i)·∇_i L_k(φ) per member, to 1e-10 (float64)."""
    dm = natural_signals()
    meta = tiny_meta(algorithm="metasgd", inner_loop_steps=2, inner_loop_lr=0.5).double()
    meta.attach_data(dm)
    with torch.no_grad():  # distinct rates, so a rate applied to the wrong tensor shows
        for i, a in enumerate(meta.inner_log_rates):
            a.fill_(math.log(0.5) + 0.3 * i - 0.4)
    batch = double_batch(dm, [0, 2, 3])
    loss = meta.training_step(batch, 0)
    params, logs = list(meta.network.parameters()), list(meta.inner_log_rates)
    got = torch.autograd.grad(loss, params + logs)

    single = ImageFitting(encoder=meta.encoder, network=meta.factory, out_channels=3).double()  # θ's field, alone
    single.network.load_state_dict(meta.network.state_dict())
    single.attach_data(dm)
    names = [n for n, _ in single.network.named_parameters()]
    theta = [p.detach().clone().requires_grad_(True) for p in params]
    a = [x.detach().clone().requires_grad_(True) for x in logs]
    finals = []
    for k in range(3):
        member = MemberLoss(single, k)

        def value(phi: list, member: nn.Module = member) -> torch.Tensor:
            return torch.func.functional_call(member, {f"single.network.{n}": p for n, p in zip(names, phi)}, (batch,))

        phi = theta
        for _ in range(2):
            grads = torch.autograd.grad(value(phi), phi, create_graph=True)
            phi = [p - a_i.exp() * g for p, a_i, g in zip(phi, a, grads)]
        finals.append(value(phi))
    expected = torch.stack(finals).mean()
    want = torch.autograd.grad(expected, theta + a)

    assert abs(loss.item() - expected.item()) <= 1e-10
    assert all(g.abs().max() > 0 for g in got[len(params) :])  # every rate receives a gradient
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-10, rtol=0)


def test_the_rates_change_under_the_outer_optimizer_and_score_the_held_out_signals(quiet_trainer, natural_signals):
    dm = natural_signals()
    meta = tiny_meta(algorithm="metasgd", inner_loop_steps=2, inner_loop_lr=0.5, optimizer=partial(torch.optim.Adam, lr=1e-2))
    start = [a.item() for a in meta.inner_log_rates]
    assert start == pytest.approx([math.log(0.5)] * len(list(meta.network.parameters())), abs=1e-7)
    quiet_trainer(2).fit(meta, datamodule=dm)
    assert all(a.item() != s for a, s in zip(meta.inner_log_rates, start))
    scores = meta.adapted_scores(dm.batch(torch.tensor([0, 1]), "test", torch.device("cpu")))
    assert scores.shape == (2, len(meta.eval_steps)) and torch.isfinite(scores).all()


def test_adapt_with_a_rate_per_tensor_is_sgd_with_a_parameter_group_per_tensor():
    theta = {"w": torch.tensor([1.0, -2.0], dtype=torch.float64), "b": torch.tensor([0.5], dtype=torch.float64)}
    targets = torch.tensor([[0.0, 0.0], [2.0, 2.0]], dtype=torch.float64)
    losses = lambda phi: ((phi["w"] - targets) ** 2).sum(1) + (phi["b"] ** 2).sum(1)
    phi, _ = adapt(losses, expand(theta, 2), steps=1, lr={"w": 0.1, "b": 0.25})
    assert torch.allclose(phi["w"], theta["w"] - 0.1 * 2 * (theta["w"] - targets), atol=1e-15)
    assert torch.allclose(phi["b"], (theta["b"] - 0.25 * 2 * theta["b"]).expand(2, 1), atol=1e-15)
    with pytest.raises(ValueError, match="Adam takes one rate"):
        adapt(losses, expand(theta, 2), steps=1, lr={"w": 0.1, "b": 0.25}, optimizer="adam")


def test_meta_sgd_needs_the_inner_sgd():
    with pytest.raises(InputError, match="Meta-SGD differentiates through SGD steps"):
        tiny_meta(algorithm="metasgd", inner_loop_optimizer="adam")


@pytest.mark.parametrize("parts_only", [True, False])
def test_an_init_written_by_meta_train_holds_its_rates(tmp_path, parts_only):
    spec = Architecture("siren", 6, 2).resolve(16, 2)
    settings = MetaSettings(
        algorithm="metasgd",
        resolution=16,
        steps=2,
        inner_steps=2,
        inner_lr=0.5,
        inner_optimizer="sgd",
        signals_per_step=2,
        train_signals=4,
        test_signals=1,
        validations=1,
    )
    data = SignalSet(kind="text", train_signals=4, test_signals=1, resolution=16, signals_per_step=2)
    path = meta_train(spec, data, settings, tmp_path / "init.ckpt", {"settings": "a"}, label="tiny", parts_only=parts_only)
    rates = inner_rates(path)
    encoder, network, _ = spec.build()
    single = ImageFitting(encoder=encoder, network=network, out_channels=data.out_channels)
    assert rates is not None and set(rates) == {n for n, _ in single.network.named_parameters()}
    assert all(r > 0 and r != 0.5 for r in rates.values())  # learned: moved from the inner rate they started at
    load_init(single, path)  # the field alone, as from any init


def test_a_meta_sgd_training_continued_from_an_init_starts_at_its_rates(tmp_path, quiet_trainer, natural_signals):
    dm, path = natural_signals(), tmp_path / "meta.ckpt"
    first = tiny_meta(algorithm="metasgd", optimizer=partial(torch.optim.Adam, lr=1e-2))
    trainer = quiet_trainer(1)
    trainer.fit(first, datamodule=dm)
    trainer.save_checkpoint(path)
    rates = inner_rates(path)
    assert rates == {n: r.item() for n, r in first.inner_rates().items()}
    later = tiny_meta(algorithm="metasgd", init_from=str(path))
    quiet_trainer(0).fit(later, datamodule=natural_signals())
    assert {n: r.item() for n, r in later.inner_rates().items()} == pytest.approx(rates, rel=1e-6)


def test_an_init_without_rates_gives_none_and_bad_rates_are_refused(tmp_path):
    single = ImageFitting()
    path = tmp_path / "old.ckpt"
    torch.save({"state_dict": single.state_dict()}, path)
    assert inner_rates(path) is None
    load_init(ImageFitting(), path)
    for bad in ({"0.weight": -1.0}, {"0.weight": float("nan")}, [0.5], {}):
        torch.save({"state_dict": single.state_dict(), INNER_RATES_KEY: bad}, path)
        with pytest.raises(InputError, match=f"its {INNER_RATES_KEY} is not a mapping of tensor names to rates > 0"):
            inner_rates(path)


def test_the_log_rates_learn_at_their_own_rate(quiet_trainer, natural_signals):
    """Under MAML's outer Adam at 1e-4 every parameter moves by at most 1e-4·(1 − β₁)/√(1 − β₂) ≈ 3.2e-4 per step
    (Kingma & Ba 2015, section 2.1); the log-rates, in their own group at ``inner_log_rate_lr``, move by more than
    ten times that over the same steps, while θ keeps the outer rate's bound."""
    steps, outer = 3, 1e-4
    bound = steps * outer * (1 - 0.9) / math.sqrt(1 - 0.999)
    meta = tiny_meta(
        algorithm="metasgd", inner_loop_lr=0.5, inner_log_rate_lr=1e-2, optimizer=partial(torch.optim.Adam, lr=outer)
    )
    groups = meta.configure_optimizers().param_groups
    assert [g["lr"] for g in groups] == [outer, 1e-2]
    assert [id(a) for a in groups[1]["params"]] == [id(a) for a in meta.inner_log_rates]
    start_rates = [a.item() for a in meta.inner_log_rates]
    start_theta = [p.detach().clone() for p in meta.network.parameters()]
    quiet_trainer(steps).fit(meta, datamodule=natural_signals())
    moved = [abs(a.item() - s) for a, s in zip(meta.inner_log_rates, start_rates)]
    assert min(moved) > 10 * bound, moved
    assert max((p.detach() - s).abs().max().item() for p, s in zip(meta.network.parameters(), start_theta)) <= bound * 1.0001


def test_the_log_rates_need_a_finite_positive_rate_and_other_algorithms_keep_one_group():
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(InputError, match="model.inner_log_rate_lr must be a finite number > 0"):
            tiny_meta(algorithm="metasgd", inner_log_rate_lr=bad)
    assert len(tiny_meta(algorithm="maml").configure_optimizers().param_groups) == 1


def test_an_init_records_the_inner_steps_its_rates_were_learned_for(tmp_path, quiet_trainer, natural_signals):
    meta, path = tiny_meta(algorithm="metasgd", inner_loop_steps=3), tmp_path / "meta.ckpt"
    trainer = quiet_trainer(1)
    trainer.fit(meta, datamodule=natural_signals())
    trainer.save_checkpoint(path)
    loop = inner_loop(path)
    assert loop.steps == 3 and loop.rates == {n: r.item() for n, r in meta.inner_rates().items()}
