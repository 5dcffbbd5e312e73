"""The task engine's interface: ``SteppedTask`` lists everything the inner-step loop and the CUDA-graph path call on
a task, ``INRModule`` implements it, and a stacked task hands each hook of ``HOOKS`` to its ``Members``, whose
methods take the same arguments; a task written for one model is refused, and the checkpoint holds what it held."""

import ast
import inspect
from functools import partial
from pathlib import Path
from unittest import mock

import pytest
import torch

import inr.tasks as tasks
from inr.encoders import GaussianEncoding
from inr.errors import InputError
from inr.networks import MLP
from inr.tasks import ImageFitting, INRModule
from inr.tasks.engine import SteppedTask
from inr.tasks.members import HOOKS, Members, refusal

ROOT = Path(__file__).resolve().parents[2]
NET = partial(MLP, width=8, depth=1)


def protocol_names(protocol: type) -> set[str]:
    """The attributes, properties and methods a Protocol declares (its own, not ``Protocol``'s)."""
    own = {name for name in vars(protocol) if not name.startswith("_")}
    return own | set(protocol.__annotations__)


def names_used_on_the_task(module: str) -> set[str]:
    """Every ``task.<name>`` and ``self.task.<name>`` in the module's source."""
    tree = ast.parse((ROOT / "inr" / "tasks" / f"{module}.py").read_text())
    used = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id == "task":
            used.add(node.attr)
        elif isinstance(owner, ast.Attribute) and owner.attr == "task" and getattr(owner.value, "id", None) == "self":
            used.add(node.attr)
    return used


@pytest.mark.parametrize("module", ["steps", "graphs"])
def test_the_protocol_lists_everything_the_loop_and_the_graph_path_use(module):
    used = names_used_on_the_task(module)
    assert used, module  # the scan found the calls
    assert used <= protocol_names(SteppedTask), used - protocol_names(SteppedTask)


def parameters(function) -> list[tuple[str, object]]:
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values() if p.name != "self"]


def accepts(implemented, declared) -> bool:
    """Whether ``implemented`` takes the calls ``declared`` describes: the declared named parameters, in order, begin
    the implementation's (Lightning's ``log_dict`` takes more than the engine passes), and its ``*args``/``**kwargs``."""
    named = [p for p in parameters(declared) if p[1] not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    variadic = [p for p in parameters(declared) if p not in named]
    return parameters(implemented)[: len(named)] == named and all(p in parameters(implemented) for p in variadic)


def test_inr_module_implements_the_protocol():
    task = ImageFitting(network=NET)
    for name in protocol_names(SteppedTask):
        declared = inspect.getattr_static(SteppedTask, name, None)
        implemented = inspect.getattr_static(type(task), name, None)
        if callable(declared) and not isinstance(declared, property):
            assert callable(implemented), name
            if name in vars(INRModule):  # the task's own hooks: exactly the declared arguments
                assert parameters(declared) == parameters(implemented), name
            else:  # Lightning's
                assert accepts(implemented, declared), name
        elif isinstance(declared, property):
            assert isinstance(implemented, property), name
        else:  # a plain attribute every task holds from its construction
            assert name in vars(task) or hasattr(task, name), name


@pytest.mark.parametrize("hook", HOOKS)
def test_members_take_each_hook_with_the_task_s_arguments(hook):
    task_signature = parameters(getattr(INRModule, hook))
    assert parameters(getattr(Members, hook)) == task_signature, hook


STACKABLE = {  # every task class of inr.tasks that can be stacked, built with members
    "ImageFitting": lambda: tasks.ImageFitting(members=2, network=NET),
    "VideoFitting": lambda: tasks.VideoFitting(members=2, network=NET),
    "InverseFitting": lambda: tasks.InverseFitting(members=2, network=NET),
    "SignalFitting": lambda: tasks.SignalFitting(members=2, network=NET),
    "VolumeFitting": lambda: tasks.VolumeFitting(members=2, network=NET),
}


@pytest.mark.parametrize("name", list(STACKABLE))
@pytest.mark.parametrize("hook", HOOKS)
def test_a_stacked_task_hands_every_hook_to_its_members(name, hook):
    """Calling the hook on the stacked task runs ``Members.<hook>`` with the same arguments, whichever class
    defines the task's own version."""
    task = STACKABLE[name]()
    arguments = [object() for _ in parameters(getattr(INRModule, hook))]
    handed = object()
    with mock.patch.object(Members, hook, autospec=True, return_value=handed) as members_hook:
        assert getattr(task, hook)(*arguments) is handed
    members_hook.assert_called_once_with(task.stack, *arguments)


def test_every_task_class_is_refused_or_its_hand_over_tested_above():
    classes = [
        cls for cls in vars(tasks).values() if isinstance(cls, type) and issubclass(cls, INRModule) and cls is not INRModule
    ]
    assert {"ConvFitting", "RadianceFieldFitting", "ShapeFitting"} <= {cls.__name__ for cls in classes}
    for cls in classes:
        assert (cls.__name__ in STACKABLE) != (refusal(cls, INRModule) is not None), cls.__name__


def test_tasks_written_for_one_model_are_refused_in_one_line():
    with pytest.raises(InputError, match=r"ShapeFitting.training_step, .*ShapeFitting.evaluate are written") as err:
        tasks.ShapeFitting(members=2, network=NET)
    assert "\n" not in str(err.value)
    assert "ConvFitting's field is not network(encoder(v))" == refusal(tasks.ConvFitting, INRModule)
    assert refusal(tasks.VideoFitting, INRModule) is None


class OneModelLoss(ImageFitting):
    """Overrides a hook for one model and does not say it hands a stack over."""

    def training_step(self, batch, batch_idx):
        return super().training_step(batch, batch_idx)


class HandsOver(OneModelLoss):
    stackable = True

    def training_step(self, batch, batch_idx):
        if self.stack is not None:
            return self.stack.training_step(batch, batch_idx)
        return super().training_step(batch, batch_idx)


def test_a_subclass_overriding_a_hook_is_stacked_only_when_it_says_it_hands_over():
    with pytest.raises(InputError, match=r"model.members: OneModelLoss.training_step is written for one model"):
        OneModelLoss(members=2, network=NET)
    assert OneModelLoss(network=NET).stack is None  # a single model of it is fine
    assert HandsOver(members=2, network=NET).members == 2


def test_a_stacked_checkpoint_holds_the_encoder_and_network_only():
    """The members object adds no checkpoint entries: a stacked checkpoint's state is the stacked encoder's and
    network's tensors, as every stacked checkpoint has been (older ones load with ``strict=True``)."""
    encoders = [GaussianEncoding(num_features=4, sigma=s) for s in (2.0, 3.0)]
    task = ImageFitting(member_encoders=encoders, network=NET)
    state = task.state_dict()
    assert set(state) == {"encoder.b", "network.0.weight", "network.0.bias", "network.2.weight", "network.2.bias"}
    assert state["encoder.b"].shape == (2, 4, 2) and state["network.0.weight"].shape == (2, 8, 8)
    again = ImageFitting(member_encoders=encoders, network=NET)
    again.load_state_dict(state, strict=True)
    coords = torch.rand(5, 2)
    torch.testing.assert_close(again.predict(coords), task.predict(coords), rtol=0, atol=0)


def test_single_models_have_no_members():
    task = ImageFitting(network=NET)
    assert task.stack is None and task.members is None and task.member_seeds is None
    with pytest.raises(InputError, match="ImageFitting is a single model"):
        task.member(0)
