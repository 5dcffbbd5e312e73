"""``INRModule(init_from=...)``: a fit that starts from a checkpoint's encoder and network reproduces that model's
field before its first step, in a single model and in every member of a stacked one; a checkpoint of another
architecture, a missing or a damaged file is refused in one line; a resume's checkpoint wins over the init."""

from functools import partial

import pytest
import torch
from torch import nn

from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting
from inr.tasks.init_from import INIT_KEY, architecture, load_init


def make(seed: int, width: int = 16, **kwargs) -> ImageFitting:
    torch.manual_seed(seed)
    return ImageFitting(
        encoder=GaussianEncoding(num_features=8, sigma=3.0, seed=seed),
        network=partial(MLP, width=width, depth=2, output_activation="sigmoid"),
        **kwargs,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model trained 5 steps on a 16² image, and its checkpoint."""
    from inr.methods.training import quiet_trainer

    path = tmp_path_factory.mktemp("init") / "a.ckpt"
    model, data = make(0), ImageDataModule(resolution=16)
    trainer = quiet_trainer(5)
    trainer.fit(model, datamodule=data)
    trainer.save_checkpoint(path)
    return model.eval(), data, path


def test_a_fit_from_the_init_starts_at_its_field(trained, fit_steps):
    model, data, path = trained
    start = make(1, init_from=str(path))  # another seed: another B and other weights until the init is read
    assert not torch.equal(start.render((16, 16)), model.render())
    fit_steps(start, data, 0)
    assert torch.equal(start.render(), model.render())  # bit for bit: the same tensors, encoder included
    torch.manual_seed(0)
    steps = fit_steps(make(1, init_from=str(path)), data, 3).lightning_module
    assert not torch.equal(steps.render(), model.render())  # and then it trains as any fit


def test_every_member_of_a_stack_starts_at_the_init(trained, fit_steps):
    model, data, path = trained
    stacked = make(1, members=3, init_from=str(path))
    fit_steps(stacked, data, 0)
    rendered = stacked.render()  # (K, C, H, W)
    assert rendered.shape[0] == 3
    for k in range(3):
        assert torch.equal(rendered[k], model.render())


def test_the_checkpoint_records_its_architecture(trained):
    model, _, path = trained
    checkpoint = torch.load(path, weights_only=True)
    assert checkpoint[INIT_KEY] == architecture(model)
    assert checkpoint[INIT_KEY]["network"][:2] == ["Linear(16, 16, bias=True)", "ReLU()"]
    assert architecture(make(0, members=2)) == architecture(model)  # stacking is not another architecture


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda: make(1, width=8), "network layer 0 is Linear(16, 16, bias=True) there and Linear(16, 8, bias=True) here"),
        (lambda: swap_activation(make(1)), "network layer 1 is ReLU() there and Tanh() here"),
    ],
)
def test_another_architecture_is_refused_in_one_line(trained, change, expected):
    _, _, path = trained
    with pytest.raises(InputError) as info:
        load_init(change(), path)
    message = str(info.value)
    assert message.startswith(f"model.init_from {path}: a checkpoint of another architecture")
    assert expected in message and "\n" not in message


def swap_activation(model: ImageFitting) -> ImageFitting:
    model.network[1] = nn.Tanh()
    return model


def test_a_checkpoint_without_a_record_is_checked_by_its_tensors(trained, tmp_path):
    model, _, _ = trained
    path = tmp_path / "bare.ckpt"
    torch.save({"state_dict": model.state_dict()}, path)
    other = make(1)
    load_init(other, path)
    assert torch.equal(other.network[0].weight, model.network[0].weight)
    with pytest.raises(InputError, match=r"network.0.weight is \(16, 16\) there and \(8, 16\) here"):
        load_init(make(1, width=8), path)


def test_a_stacked_checkpoint_into_a_single_model_says_what_to_do(tmp_path):
    stacked = make(0, members=2)
    path = tmp_path / "stacked.ckpt"
    torch.save({"state_dict": stacked.state_dict(), INIT_KEY: architecture(stacked)}, path)
    with pytest.raises(InputError, match="it holds stacked members: export one"):
        load_init(make(1), path)


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "file not found"),
        (b"not a checkpoint", "not a readable checkpoint"),
        ("no_state", "not a training checkpoint"),
        ("no_network", "it holds no network weights"),
    ],
)
def test_missing_damaged_and_foreign_files_are_refused(tmp_path, content, expected):
    path = tmp_path / "init.ckpt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content == "no_state":
        torch.save({"weights": torch.zeros(2)}, path)
    elif content == "no_network":
        torch.save({"state_dict": {"encoder.b": torch.zeros(8, 2)}}, path)
    with pytest.raises(InputError, match=expected):
        load_init(make(0), path)


def test_code_in_a_checkpoint_is_never_run(tmp_path):
    path = tmp_path / "evil.ckpt"
    torch.save({"state_dict": {}, "hook": print}, path)  # a global: weights_only refuses to import it
    with pytest.raises(InputError, match="not a readable checkpoint"):
        load_init(make(0), path)
