"""The shared helpers: eval_mode restores the mode even when the block raises; grid_size reads and refuses
resolutions the same way for every data module and the mesh exporter; no code writes another object's private attributes."""

import pytest
import torch
from torch import nn

from inr.data.image import ImageDataModule
from inr.data.volume import VolumeDataModule
from inr.errors import InputError
from inr.modes import eval_mode
from inr.sizes import grid_size


@pytest.mark.parametrize("training", [True, False])
def test_eval_mode_restores_the_mode_it_found_also_after_an_error(training):
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5)).train(training)
    with eval_mode(net):
        assert not net.training and not net[1].training
    assert net.training is training and net[1].training is training
    with pytest.raises(RuntimeError), eval_mode(net):
        raise RuntimeError("render failed")
    assert net.training is training


def test_eval_mode_makes_dropout_deterministic():
    net = nn.Dropout(0.5)
    x = torch.ones(1000)
    with eval_mode(net):
        assert torch.equal(net(x), x)
    assert not torch.equal(net(x), x)  # back in training mode: about half the entries zeroed


@pytest.mark.parametrize(
    ("value", "ndim", "expected"), [(5, 2, (5, 5)), ([3, 7], 2, (3, 7)), ((2, 3, 4), 3, (2, 3, 4)), (4, 3, (4, 4, 4))]
)
def test_grid_size_reads_an_int_or_one_int_per_axis(value, ndim, expected):
    assert grid_size(value, ndim) == expected


@pytest.mark.parametrize("value", [1, 0, -3, [4], [4, 4, 4], [4, 1], True, [2.5, 3], "64", [None, 3]])
def test_grid_size_refuses_in_one_line(value):
    with pytest.raises(InputError) as info:
        grid_size(value, 2)
    assert "\n" not in str(info.value) and "data.resolution" in str(info.value)


@pytest.mark.parametrize(("module", "resolution"), [(ImageDataModule, [8, 8, 8]), (VolumeDataModule, [8, 8])])
def test_data_modules_share_the_refusal(module, resolution):
    with pytest.raises(InputError, match="data.resolution must be an int or"):
        module(resolution=resolution).setup("fit")


def test_every_named_activation_is_on_the_one_elementwise_list():
    from inr.networks.activations import ELEMENTWISE_ACTIVATIONS, activation_names, make_activation
    from inr.ntk.structured import is_elementwise

    for name in activation_names():
        assert isinstance(make_activation(name), ELEMENTWISE_ACTIVATIONS) and is_elementwise(make_activation(name)), name


def test_the_two_radial_frequencies_differ_by_their_unit():
    # cycles per unit on [0, 1) (spectral bands) vs cycles per sample (conv-decoder transfer functions)
    from inr.conv_decoders.gain import radial_frequency_per_sample
    from inr.spectral import radial_frequency

    torch.testing.assert_close(radial_frequency_per_sample((8, 8)) * 8, radial_frequency((8, 8)), atol=1e-12, rtol=0)


def test_spectra_have_one_home_and_the_conv_decoder_analysis_says_so():
    import importlib

    import inr.spectral as spectral
    from inr.spectral import bands, plots

    assert spectral.band_relative_error is bands.band_relative_error and callable(plots.comparison_figure)
    assert set(spectral.__all__) <= set(dir(bands))
    assert importlib.import_module("inr.conv_decoders").radial_frequency_per_sample


def test_no_code_writes_private_attributes_of_other_objects():
    """Assignments to ``x._name`` where x is not ``self``/``cls`` (e.g. a logger's ``_version``, a metric's
    ``_to_sync``) reach into another library's internals; the public way (a constructor argument, a setter,
    a documented hook) is used instead."""
    import ast
    from pathlib import Path

    offenders = []
    for path in sorted((Path(__file__).resolve().parents[1] / "inr").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr.startswith("_")
                    and not target.attr.startswith("__")
                    and not (isinstance(target.value, ast.Name) and target.value.id in ("self", "cls"))
                ):
                    offenders.append(f"{path.name} {ast.unparse(target)}")
    # Lightning has no public way to do these; each is the flag, counter or setting its own code sets
    allowed = {
        # the join's bound, then the collectives' (DDPStrategy takes its timeout only when it is built)
        "cluster.py strategy._timeout",
        "budget.py trainer.fit_loop.epoch_loop._skip_next_val",  # skip one validation run (MonitoringBudget)
        "steps.py trainer.fit_loop.epoch_loop._batches_that_stepped",  # the logging step = optimizer steps, K > 1
    }
    assert set(offenders) == allowed, sorted(set(offenders) ^ allowed)  # a new write fails; so does a stale entry


@pytest.mark.slow
def test_the_eval_and_restore_pattern_lives_only_in_eval_mode():
    """A ``.train(flag)`` call that restores a saved mode (``x.train(was_training)``) is the hand-written
    eval/restore pattern; everything that renders mid-training uses ``eval_mode`` instead."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "inr"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "modes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "train"
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)
            ):
                offenders.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert not offenders, offenders
