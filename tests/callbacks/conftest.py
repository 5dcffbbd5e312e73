"""Shared pieces of the callback tests: a callback configured from YAML, as a user configures it."""

import textwrap

import pytest

from inr.run.cli import cli_main


@pytest.fixture
def configured_from_yaml(tmp_path, tiny_flags):
    """``configured_from_yaml(name, kind, init_args, steps, width)``: image.yaml at 16² with the overlay
    ``tmp_path/name`` that adds the callback ``inr.callbacks.<kind>`` with ``init_args`` (a YAML flow mapping) and logs
    to TensorBoard under ``tmp_path`` as ``yaml``, trained ``steps`` steps by a ``width``-wide network through the
    command line -> (the first callback of class ``kind``, the CLI)."""

    def run(name: str, kind: type, init_args: str, steps: int, width: int):
        overlay = tmp_path / name
        overlay.write_text(
            textwrap.dedent(f"""\
            trainer:
              logger:
                class_path: lightning.pytorch.loggers.TensorBoardLogger
                init_args: {{save_dir: {tmp_path}, name: yaml}}
              callbacks:
                - class_path: inr.callbacks.{kind.__name__}
                  init_args: {init_args}
            """)
        )
        cli = cli_main(tiny_flags(("image.yaml", overlay), 16, steps=steps, width=width))
        return [c for c in cli.trainer.callbacks if isinstance(c, kind)][0], cli

    return run
