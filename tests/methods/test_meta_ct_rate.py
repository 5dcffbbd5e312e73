"""``META["ct"]``'s MAML and Meta-SGD inner rate: from the driver's θ₀ the first inner SGD step through the projections
leaves the sigmoid unsaturated and the outer gradient alive (at the former rate 10 the output went to 0 over the whole
grid, the outer gradient vanished and the init learned nothing; benchmarks/maml_ct_inner_rate.py)."""

import importlib.util
from pathlib import Path

import pytest

from inr.methods.meta import META

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trials():
    spec = importlib.util.spec_from_file_location("maml_ct_inner_rate", ROOT / "benchmarks" / "maml_ct_inner_rate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("algorithm", ["maml", "metasgd"])
def test_the_first_inner_step_at_the_ct_rate_does_not_saturate_the_output(trials, tmp_path, algorithm):
    dm, spec, task = trials.study_parts(4, 1, 16, tmp_path)
    first = trials.first_steps(spec, dm, task, META["ct"][algorithm].inner_lr)
    assert first["saturated"] < 0.5
    assert first["L@2"] < first["L@1"] < first["L@0"]  # the two inner steps each lower the loss
    assert first["‖∇θ‖"] > 1e-3


def test_rate_10_saturates_the_output_and_the_outer_gradient_vanishes(trials, tmp_path):
    dm, spec, task = trials.study_parts(4, 1, 16, tmp_path)
    first = trials.first_steps(spec, dm, task, 10.0)
    assert first["saturated"] > 0.99 and first["L@2"] == pytest.approx(first["L@1"], rel=1e-4)
    assert first["‖∇θ‖"] < 1e-6
