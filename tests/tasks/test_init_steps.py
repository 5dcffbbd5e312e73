"""A fit from a Meta-SGD init (``inr.tasks.init_steps``): its first n steps are plain SGD with tensor i at the init's
learned rate α_i, then the configured optimizer from its own step 0 — checked in float64 against a hand-written loop
(the field network(encoder(v)), its mean squared error on the training pixels, ``torch.autograd``); a fit from an
init without rates (Reptile's, MAML's) and a plain fit are the configured optimizer from step 0, against the same
loop; a fit from a modulations init takes its first n steps on shifts of its hidden layers alone, against a
hand-written loop on the shifts; the scheduler counts the configured optimizer's steps only; bad rates are refused
in one line."""

from functools import partial

import pytest
import torch

from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting
from inr.tasks.init_from import INIT_KEY, INNER_ADAPTS_KEY, INNER_RATES_KEY, INNER_STEPS_KEY, architecture, inner_loop

LR = 1e-2  # the configured Adam's
N = 3  # the init's inner steps
AFTER = 2  # the configured optimizer's steps after them
TOL = 1e-12  # float64: the two loops differ only by the order of floating-point sums


def make(seed: int, **kwargs) -> ImageFitting:
    torch.manual_seed(seed)
    return ImageFitting(
        encoder=GaussianEncoding(num_features=8, sigma=3.0, seed=seed),
        network=partial(MLP, width=16, depth=2, output_activation="sigmoid"),
        optimizer=partial(torch.optim.Adam, lr=LR),
        **kwargs,
    ).double()


def rates_of(model: ImageFitting) -> dict[str, float]:
    """A different rate per tensor (a rate applied to the wrong tensor shows), large enough to move the field."""
    return {name: 0.5 * (1.5**i) for i, (name, _) in enumerate(model.network.named_parameters())}


def write_init(path, rates=None, steps=N, adapts=None) -> dict[str, torch.Tensor]:
    model = make(0)
    checkpoint = {"state_dict": model.state_dict(), INIT_KEY: architecture(model)}
    if adapts is not None:
        checkpoint[INNER_ADAPTS_KEY] = adapts
    if rates is not None:
        checkpoint[INNER_RATES_KEY] = rates
    if steps is not None:
        checkpoint[INNER_STEPS_KEY] = steps
    torch.save(checkpoint, path)
    return model.state_dict()


def in_float64(dm):
    """The DataModule with its batches in float64 (its grid coordinates are computed in float32)."""
    gather = dm.gather
    dm.gather = lambda index, device: {
        k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in gather(index, device).items()
    }
    return dm


def fitted(quiet_trainer, model: ImageFitting, steps: int, **overrides) -> tuple[ImageFitting, ImageDataModule, object]:
    dm = in_float64(ImageDataModule(resolution=16))
    trainer = quiet_trainer(steps, precision="64-true", **overrides)
    trainer.fit(model, datamodule=dm)
    return model, dm, trainer


def by_hand(start: dict[str, torch.Tensor], dm: ImageDataModule, rates, n: int, after: int) -> dict[str, torch.Tensor]:
    """n steps θ_i ← θ_i − α_i ∇_i L, then ``after`` steps of torch's Adam at LR, with L = mean((f(v) − y)²) over the
    training pixels: the network's tensors after them."""
    reference = make(1)
    reference.load_state_dict(start)
    coords = dm.grid.coords(dm.train_index).double()  # (N, 2)
    values = dm.values[dm.train_index].double()  # (N, 3)
    params = dict(reference.network.named_parameters())

    def loss() -> torch.Tensor:
        return (reference.network(reference.encoder(coords)) - values).square().mean()

    for _ in range(n):
        grads = torch.autograd.grad(loss(), list(params.values()))
        with torch.no_grad():
            for (name, p), g in zip(params.items(), grads):
                p -= rates[name] * g
    adam = torch.optim.Adam(reference.parameters(), lr=LR)
    for _ in range(after):
        adam.zero_grad()
        loss().backward()
        adam.step()
    return {n: p.detach() for n, p in params.items()}


def test_the_first_n_steps_take_the_init_rates_then_the_configured_optimizer(tmp_path, quiet_trainer):
    path = tmp_path / "metasgd.ckpt"
    rates = rates_of(make(0))
    start = write_init(path, rates)
    model, dm, _ = fitted(quiet_trainer, make(1, init_from=str(path)), N + AFTER)
    want = by_hand(start, dm, rates, N, AFTER)
    for name, p in model.network.named_parameters():
        assert (p.detach() - want[name]).abs().max() <= TOL, name
    # the check can fail: the same fit with one rate for every tensor, or Adam from step 0, ends elsewhere
    uniform = by_hand(start, dm, {k: 0.5 for k in rates}, N, AFTER)
    adam_only = by_hand(start, dm, rates, 0, N + AFTER)
    for other in (uniform, adam_only):
        assert max((p.detach() - other[n]).abs().max() for n, p in model.network.named_parameters()) > 1e-6


@pytest.mark.parametrize("init", ["without rates", "none"])
def test_a_fit_from_an_init_without_rates_and_a_plain_fit_are_the_configured_optimizer_from_step_0(tmp_path, quiet_trainer, init):
    path = tmp_path / "reptile.ckpt"
    start = write_init(path, rates=None, steps=None)  # as Reptile's and MAML's inits: no rates
    model = make(1, init_from=str(path)) if init == "without rates" else make(0)
    assert init == "none" or inner_loop(path) is None
    model, dm, _ = fitted(quiet_trainer, model, N + AFTER)
    want = by_hand(start, dm, {}, 0, N + AFTER)
    for name, p in model.network.named_parameters():
        assert (p.detach() - want[name]).abs().max() <= TOL, name


def test_the_scheduler_counts_the_configured_optimizer_steps_only(tmp_path, quiet_trainer):
    path = tmp_path / "metasgd.ckpt"
    write_init(path, rates_of(make(0)))
    halve = partial(torch.optim.lr_scheduler.StepLR, step_size=1, gamma=0.5)
    _, _, trainer = fitted(quiet_trainer, make(1, init_from=str(path), scheduler=halve), N + AFTER)
    assert trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(LR * 0.5**AFTER, rel=1e-12)


SHIFT_RATES = {"0.bias": 0.8, "2.bias": 2.0}  # one per hidden layer of the 16-16 MLP


def shifts_by_hand(start: dict[str, torch.Tensor], dm: ImageDataModule, n: int, after: int) -> dict[str, torch.Tensor]:
    """n steps s_l ← s_l − α_l ∇_{s_l} L from s = 0 with every hidden layer act(W h + b + s) and θ held, then the
    biases b + s and ``after`` steps of torch's Adam at LR on every tensor: the network's tensors after them."""
    reference = make(1)
    reference.load_state_dict(start)
    coords = dm.grid.coords(dm.train_index).double()  # (N, 2)
    values = dm.values[dm.train_index].double()  # (N, 3)
    theta = {k: v.detach() for k, v in reference.network.named_parameters()}
    shifts = {k: torch.zeros_like(theta[k], requires_grad=True) for k in SHIFT_RATES}
    for _ in range(n):
        params = {k: theta[k] + shifts[k] if k in shifts else theta[k] for k in theta}
        field = torch.func.functional_call(reference.network, params, (reference.encoder(coords),))
        grads = torch.autograd.grad((field - values).square().mean(), list(shifts.values()))
        shifts = {k: (s - SHIFT_RATES[k] * g).detach().requires_grad_(True) for (k, s), g in zip(shifts.items(), grads)}
    with torch.no_grad():
        for k, p in reference.network.named_parameters():
            if k in shifts:
                p += shifts[k]
    adam = torch.optim.Adam(reference.parameters(), lr=LR)
    for _ in range(after):
        adam.zero_grad()
        (reference.network(reference.encoder(coords)) - values).square().mean().backward()
        adam.step()
    return {k: p.detach() for k, p in reference.network.named_parameters()}


def test_a_modulations_init_takes_its_first_n_steps_on_the_shifts_alone(tmp_path, quiet_trainer):
    path = tmp_path / "modulations.ckpt"
    start = write_init(path, SHIFT_RATES, adapts="modulations")
    model, dm, _ = fitted(quiet_trainer, make(1, init_from=str(path)), N + AFTER)
    want = shifts_by_hand(start, dm, N, AFTER)
    for name, p in model.network.named_parameters():
        assert (p.detach() - want[name]).abs().max() <= TOL, name
    # the check can fail: the same steps on every tensor, or Adam from step 0, end elsewhere
    every = by_hand(start, dm, dict.fromkeys(want, 0.8), N, AFTER)
    adam_only = by_hand(start, dm, {}, 0, N + AFTER)
    for other in (every, adam_only):
        assert max((p.detach() - other[n]).abs().max() for n, p in model.network.named_parameters()) > 1e-6
    # its first n steps alone: the weights where the init put them, the hidden biases moved
    held, _, _ = fitted(quiet_trainer, make(1, init_from=str(path)), N)
    for name, p in held.network.named_parameters():
        moved = (p.detach() - start[f"network.{name}"]).abs().max()
        assert (moved > 0) if name in SHIFT_RATES else (moved == 0), name


@pytest.mark.parametrize(
    "rates, adapts, message",
    [
        ({"0.bias": 1.0}, "modulations", r"its inner rates do not match the network \(no rate for 2.bias\)"),
        (None, "modulations", "it adapts modulations but holds no inr_inner_rates"),
        (SHIFT_RATES, "layers", "its inr_inner_adapts is 'layers', not all or modulations"),
    ],
)
def test_bad_modulations_inits_are_refused_in_one_line(tmp_path, quiet_trainer, rates, adapts, message):
    path = tmp_path / "bad.ckpt"
    write_init(path, rates, adapts=adapts)
    with pytest.raises(InputError, match=message):
        fitted(quiet_trainer, make(1, init_from=str(path)), 1)


@pytest.mark.parametrize(
    "rates, steps, kwargs, message",
    [
        ("good", None, {}, "its inr_inner_steps .* is not an int ≥ 1, got None"),
        ("good", 0, {}, "its inr_inner_steps .* is not an int ≥ 1, got 0"),
        ("missing", N, {}, r"its inner rates do not match the network \(no rate for 0.weight\)"),
        ("extra", N, {}, r"its inner rates do not match the network \(a rate for 9.weight, not a tensor of the network\)"),
        ("good", N, {"inner_steps": 2}, "model.inner_steps is 2: set it to 1"),
    ],
)
def test_bad_inner_loops_are_refused_in_one_line(tmp_path, quiet_trainer, rates, steps, kwargs, message):
    good = rates_of(make(0))
    given = {
        "good": good,
        "missing": {k: v for k, v in good.items() if k != "0.weight"},
        "extra": {**good, "9.weight": 1.0},
    }[rates]
    path = tmp_path / "bad.ckpt"
    write_init(path, given, steps)
    with pytest.raises(InputError, match=message):
        fitted(quiet_trainer, make(1, init_from=str(path), **kwargs), 1)


def write_reptile_init(path, **hparams) -> dict[str, torch.Tensor]:
    """An init as a Reptile or MAML meta-training writes it: no rates, its inner loop in its hyper-parameters."""
    model = make(0)
    torch.save({"state_dict": model.state_dict(), INIT_KEY: architecture(model), "hyper_parameters": hparams}, path)
    return model.state_dict()


def test_init_inner_loop_takes_a_reptile_inits_recorded_inner_steps_then_the_configured_optimizer(tmp_path, quiet_trainer):
    path = tmp_path / "reptile.ckpt"
    start = write_reptile_init(path, algorithm="reptile", inner_loop_steps=N, inner_loop_lr=0.7, inner_loop_optimizer="sgd")
    model, dm, _ = fitted(quiet_trainer, make(1, init_from=str(path), init_inner_loop=True), N + AFTER)
    names = [name for name, _ in model.network.named_parameters()]
    want = by_hand(start, dm, {name: 0.7 for name in names}, N, AFTER)
    for name, p in model.network.named_parameters():
        assert (p.detach() - want[name]).abs().max() <= TOL, name
    # without the option the same init is Adam from step 0: elsewhere
    adam_only = by_hand(start, dm, {}, 0, N + AFTER)
    assert max((p.detach() - adam_only[n]).abs().max() for n, p in model.network.named_parameters()) > 1e-6


@pytest.mark.parametrize(
    "hparams, message",
    [
        ({}, "does not record its inner loop"),
        ({"inner_loop_steps": 2, "inner_loop_lr": -1.0}, "records an inner rate of -1.0"),
        ({"inner_loop_steps": 2, "inner_loop_lr": 1e-3, "inner_loop_optimizer": "adam"}, "inner adam steps"),
    ],
)
def test_an_init_inner_loop_the_init_does_not_record_is_refused_in_one_line(tmp_path, quiet_trainer, hparams, message):
    path = tmp_path / "init.ckpt"
    write_reptile_init(path, **hparams)
    with pytest.raises(InputError, match=message):
        fitted(quiet_trainer, make(1, init_from=str(path), init_inner_loop=True), 2)
    with pytest.raises(InputError, match="set model.init_from too"):
        make(1, init_inner_loop=True)
