"""skip_failing_gpu_probe: without a CUDA device, an optimizer step no longer tries to load NVML."""

import ctypes
import os

import pytest
import torch

from inr.run import gpu_probe
from inr.run.gpu_probe import VARIABLE, skip_failing_gpu_probe


def adam_step_library_loads(monkeypatch) -> int:
    """ctypes.CDLL calls made by one Adam step."""
    loads = []
    real = ctypes.CDLL

    def counting(*args, **kwargs):
        loads.append(args[0] if args else None)
        return real(*args, **kwargs)

    param = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.Adam([param], lr=0.1)
    param.grad = torch.ones(3)
    opt.step()  # first step: state created outside the count
    monkeypatch.setattr(ctypes, "CDLL", counting)
    opt.step()
    monkeypatch.setattr(ctypes, "CDLL", real)
    return len(loads)


def test_without_a_device_the_step_stops_probing(monkeypatch):
    monkeypatch.setenv(VARIABLE, "1")  # as Lightning sets it when imported
    if not torch.cuda._is_compiled():
        assert skip_failing_gpu_probe() is False  # a CPU-only build has nothing to probe
        return
    if torch.cuda.device_count() > 0:  # a machine with a GPU keeps Lightning's setting
        assert skip_failing_gpu_probe() is False
        return
    assert adam_step_library_loads(monkeypatch) >= 1  # the failed NVML load, at every step
    assert skip_failing_gpu_probe() is True
    assert adam_step_library_loads(monkeypatch) == 0
    assert not torch.cuda.is_available()


def test_a_visible_device_leaves_the_setting(monkeypatch):
    monkeypatch.setattr(gpu_probe.torch.cuda, "_is_compiled", lambda: True)
    monkeypatch.setattr(gpu_probe.torch.cuda, "device_count", lambda: 2)
    environ = {VARIABLE: "1"}
    assert skip_failing_gpu_probe(environ) is False and environ[VARIABLE] == "1"


@pytest.mark.parametrize("value", [None, "0"])
def test_nothing_to_do_unless_nvml_was_asked_for(value):
    environ = {} if value is None else {VARIABLE: value}
    assert skip_failing_gpu_probe(environ) is False and environ.get(VARIABLE) == value


@pytest.mark.slow
def test_the_cli_applies_it(monkeypatch, tmp_path):
    from inr.run.cli import cli_main

    monkeypatch.setenv(VARIABLE, "1")
    monkeypatch.chdir(tmp_path)
    args = ["--config", "image.yaml", "--data.init_args.resolution", "16", "--trainer.max_steps", "1"]
    cli_main([*args, "--trainer.logger.init_args.save_dir", str(tmp_path), "--trainer.callbacks", "null"])
    expected = "0" if torch.cuda._is_compiled() and torch.cuda.device_count() == 0 else "1"
    assert os.environ[VARIABLE] == expected
