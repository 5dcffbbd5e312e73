"""``MetaLearning`` on tiny signal sets of each kind, in float64 where exactness is checked: one Reptile step with
one inner SGD step and ε = 1 is one SGD step of the single model on the K signals' mean loss (direct fitting,
CT through its projections, occupancy); MAML's meta-gradient through the task's own loss equals central finite
differences; the scores after n inner steps are those of an ordinary fit started from the learned init with the
same optimizer (``init_from``: the init reproduces its predictions); a resumed meta-training ends where the
uninterrupted one does; bad settings are refused in one line."""

import copy
from functools import partial

import pytest
import torch

from inr.data.signal_sets import SignalSet
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting, InverseFitting, VolumeFitting
from inr.tasks.meta import MetaLearning

KINDS = {  # kind -> (task, single task class, output activation, extra)
    "natural": ("inr.tasks.ImageFitting", ImageFitting, "sigmoid", {}),
    "ct": ("inr.tasks.InverseFitting", InverseFitting, "sigmoid", {}),
    "shape": ("inr.tasks.VolumeFitting", VolumeFitting, "none", {"mode": "occupancy"}),
}


def tiny_data(kind: str, **kwargs) -> SignalSet:
    sizes = {"shape": 8} if kind == "shape" else {}
    dm = SignalSet(kind=kind, train_signals=4, test_signals=2, resolution=sizes.get(kind, 16), signals_per_step=3, **kwargs)
    dm.setup("fit")
    return dm


def tiny_meta(kind: str, **kwargs) -> MetaLearning:
    task, _, output, extra = KINDS[kind]
    torch.manual_seed(0)
    return MetaLearning(
        encoder=GaussianEncoding(in_dim=3 if kind == "shape" else 2, num_features=8, sigma=2.0),
        network=partial(MLP, width=8, depth=1, output_activation=output),
        out_channels=3 if kind == "natural" else 1,
        task=task,
        **extra,
        **kwargs,
    )


def double_batch(dm: SignalSet, signals, which="train") -> dict:
    batch = dm.batch(torch.tensor(signals), which, torch.device("cpu"))
    return {k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in batch.items()}


def single_model(meta: MetaLearning, kind: str, dm: SignalSet):
    """The one model of the task class with θ's encoder and network (float64), attached to the data."""
    _, cls, _, extra = KINDS[kind]
    single = cls(encoder=copy.deepcopy(meta.encoder), network=meta.factory, out_channels=meta.out_channels, **extra).double()
    single.network.load_state_dict(meta.network.state_dict())
    single.attach_data(dm)
    return single


@pytest.mark.parametrize("kind", list(KINDS))
def test_reptile_one_sgd_step_with_epsilon_one_is_one_sgd_step_on_the_mean_loss(kind):
    alpha = 0.5
    dm = tiny_data(kind)
    meta = tiny_meta(kind, inner_loop_steps=1, inner_loop_lr=alpha, optimizer=partial(torch.optim.SGD, lr=1.0)).double()
    meta.attach_data(dm)
    batch = double_batch(dm, [0, 2, 3])
    single = single_model(meta, kind, dm)
    field = single.field(batch)
    mean = torch.stack([single.loss(single.measure(field, batch), batch["targets"][k]) for k in range(3)]).mean()
    grads = torch.autograd.grad(mean, list(single.network.parameters()))
    expected = [p.detach() - alpha * g for p, g in zip(single.network.parameters(), grads)]

    outer = torch.optim.SGD(meta.network.parameters(), lr=1.0)  # ε = 1
    meta.training_step(batch, 0).backward()
    outer.step()
    for p, e in zip(meta.network.parameters(), expected):
        assert torch.allclose(p, e, atol=1e-13, rtol=0)


@pytest.mark.parametrize("kind", ["natural", "ct"])
def test_maml_meta_gradient_equals_finite_differences(kind):
    """∂/∂θ of the members' mean loss after 2 inner SGD steps, through the task's loss (and CT's operator), against
    central differences with ε = 1e-6 on 40 entries of θ in float64: agreement to 1e-6 of the largest entry."""
    dm = tiny_data(kind)
    meta = tiny_meta(kind, algorithm="maml", inner_loop_steps=2, inner_loop_lr=0.5).double()
    meta.attach_data(dm)
    batch = double_batch(dm, [1, 2, 3])
    loss = meta.training_step(batch, 0)
    params = list(meta.network.parameters())
    grads = torch.autograd.grad(loss, params)
    scale, eps = max(float(g.abs().max()) for g in grads), 1e-6
    picks = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p, g in zip(params, grads):
            for i in torch.randperm(p.numel(), generator=picks)[:10].tolist():
                value = p.view(-1)[i].item()
                p.view(-1)[i] = value + eps
                plus = float(meta.training_step(batch, 0))
                p.view(-1)[i] = value - eps
                minus = float(meta.training_step(batch, 0))
                p.view(-1)[i] = value
                assert abs((plus - minus) / (2 * eps) - float(g.view(-1)[i])) <= 1e-6 * scale


def test_the_scores_after_n_steps_are_an_ordinary_fit_from_the_learned_init(tmp_path, quiet_trainer):
    """Meta-train a few steps, save the checkpoint; an ImageFitting of the same architecture started from it with
    init_from renders the init's field exactly, and n SGD steps of it at the inner rate score what
    MetaLearning's evaluation reported after n inner steps."""
    dm = tiny_data("natural")
    meta = tiny_meta(
        "natural", inner_loop_steps=2, inner_loop_lr=0.5, eval_steps=[0, 3], optimizer=partial(torch.optim.Adam, lr=1e-2)
    )
    trainer = quiet_trainer(4)
    trainer.fit(meta, datamodule=dm)
    trainer.save_checkpoint(tmp_path / "meta.ckpt")
    scores = meta.adapted_scores(dm.batch(torch.tensor([0, 1]), "test", torch.device("cpu")))  # (2, 2): steps 0 and 3
    for k in range(2):
        data = dm.signal_data(k)
        single = ImageFitting(
            encoder=GaussianEncoding(num_features=8, sigma=2.0, seed=5),  # another B: the init's comes with it
            network=meta.factory,
            optimizer=partial(torch.optim.SGD, lr=0.5),
            init_from=str(tmp_path / "meta.ckpt"),
        )
        quiet_trainer(0).fit(single, datamodule=data)
        assert torch.equal(single.render(), meta.render())  # the learned init's field, bit for bit
        assert single.evaluate()["test/psnr"] == pytest.approx(float(scores[k, 0]), abs=1e-4)
        quiet_trainer(3).fit(single, datamodule=data)
        assert single.evaluate()["test/psnr"] == pytest.approx(float(scores[k, 1]), abs=1e-3)


def test_a_resumed_meta_training_ends_where_the_uninterrupted_one_does(tmp_path, quiet_trainer):
    """Six steps straight, writing a checkpoint at step 3; six steps resumed from it: the same signals drawn at every
    step, the same θ and outer Adam moments, bit for bit."""
    from lightning.pytorch.callbacks import ModelCheckpoint

    def run(ckpt=None, callbacks=()):
        meta = tiny_meta("natural", optimizer=partial(torch.optim.Adam, lr=1e-2), inner_loop_optimizer="adam")
        trainer = quiet_trainer(6, callbacks=list(callbacks), enable_checkpointing=bool(callbacks))
        trainer.fit(meta, datamodule=tiny_data("natural", steps_per_epoch=4), ckpt_path=ckpt)
        return meta, trainer

    saving = ModelCheckpoint(dirpath=tmp_path, every_n_train_steps=3, save_top_k=-1, filename="{step}")
    straight, first = run(callbacks=[saving])
    resumed, second = run(tmp_path / "step=3.ckpt")
    assert second.global_step == 6
    for a, b in zip(straight.network.parameters(), resumed.network.parameters()):
        assert torch.equal(a, b)
    moments = lambda t: [s["exp_avg_sq"] for s in t.optimizers[0].state.values()]
    assert all(torch.equal(a, b) for a, b in zip(moments(first), moments(second), strict=True))


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"inner_loop_steps": 0}, "model.inner_loop_steps must be an int from 1"),
        ({"inner_loop_steps": 2.5}, "model.inner_loop_steps must be an int from 1"),
        ({"inner_loop_lr": 0.0}, "model.inner_loop_lr must be a finite number > 0"),
        ({"inner_loop_lr": float("nan")}, "model.inner_loop_lr must be a finite number > 0"),
        ({"optimizer": partial(torch.optim.SGD, lr=0.0)}, "Reptile's ε"),
        ({"optimizer": partial(torch.optim.SGD, lr=-1.0)}, "model.optimizer"),
        ({"algorithm": "maml", "inner_loop_optimizer": "adam"}, "MAML differentiates through SGD steps"),
        ({"algorithm": "fomaml"}, "model.algorithm: unknown algorithm"),
        ({"eval_steps": []}, "model.eval_steps must be a list"),
        ({"eval_steps": [-1, 2]}, "model.eval_steps must be a list"),
    ],
)
def test_bad_settings_are_refused_in_one_line(settings, message):
    with pytest.raises(InputError, match=message):
        tiny_meta("natural", **settings)


def test_a_task_that_cannot_be_meta_learned_is_refused():
    with pytest.raises(InputError, match="model.task inr.tasks.ShapeFitting"):
        MetaLearning(task="inr.tasks.ShapeFitting", encoder=GaussianEncoding(in_dim=3, num_features=8))
    with pytest.raises(InputError, match="not a fitting task"):
        MetaLearning(task="torch.nn.Linear")
    with pytest.raises(InputError, match="must be imported before the run"):
        MetaLearning(task="some_lab_package.tasks.MyFitting")


def test_ct_signals_need_the_operator_task(quiet_trainer):
    with pytest.raises(InputError, match="ct signals need a task with its operator"):
        meta = MetaLearning(encoder=GaussianEncoding(num_features=8), network=partial(MLP, width=8, depth=1), out_channels=1)
        quiet_trainer(1).fit(meta, datamodule=tiny_data("ct"))
