"""A config may name a class of the user's own module in the working directory (./user_tiny_net.py) without
PYTHONPATH=.; the directory is importable while the command runs only, after the installed packages."""

import sys
import textwrap

import pytest
import torch

from inr.run.cli import cli_main

MODULE = textwrap.dedent("""\
    from torch import nn


    class TinyNet(nn.Sequential):
        def __init__(self, in_dim: int, out_dim: int, width: int = 8):
            super().__init__(nn.Linear(in_dim, width), nn.ReLU(), nn.Linear(width, out_dim), nn.Sigmoid())
    """)


@pytest.mark.slow
def test_a_class_of_a_module_in_the_working_directory_trains(tmp_path, monkeypatch, tiny_run_args):
    (tmp_path / "user_tiny_net.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    network = "{class_path: user_tiny_net.TinyNet, init_args: {width: 8}}"
    cli = cli_main(tiny_run_args(tmp_path / "runs", "--model.init_args.network", network))
    assert type(cli.model.network).__module__ == "user_tiny_net" and cli.trainer.global_step == 10
    assert isinstance(cli.model.network[0], torch.nn.Linear) and cli.model.network[0].out_features == 8
    assert str(tmp_path) not in sys.path  # importable while the command ran, not after
    sys.modules.pop("user_tiny_net", None)
