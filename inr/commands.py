"""The console commands an installed package puts on PATH (pyproject.toml ``[project.scripts]``).

    inr-train [fit|validate|test|predict] --config image.yaml ...   # = python train.py ...
    inr-mesh --ckpt last.ckpt --out mesh.ply                        # = python -m inr.run.mesh ...
    inr-compare --image data/astronaut.png                          # = python -m inr.experiments.compare_encoders
    inr-codec encode image.png -o image.inr --bpp 0.3               # = python -m inr.codec (docs/codec.md)

Each runs its tool's ``main`` and returns None, so the command exits 0 when the tool returns (the tools
raise ``SystemExit`` with their own codes otherwise: docs/reliability.md).
"""

from __future__ import annotations

import sys
from typing import Optional


def train() -> None:
    from inr.run.launch_env import refuse_bad_environment

    refuse_bad_environment()  # before Lightning, which reads the rank when imported
    from inr.run.cli import cli_main

    cli_main()


def mesh() -> None:
    from inr.run.launch_env import refuse_bad_environment

    refuse_bad_environment()  # every command below trains or loads through Lightning, which reads the rank when imported
    from inr.run.mesh import main

    main()


def compare() -> None:
    from inr.run.launch_env import refuse_bad_environment

    refuse_bad_environment()
    from inr.experiments.compare_encoders import main

    main()


def codec(argv: Optional[list[str]] = None) -> None:
    from inr.run.launch_env import refuse_bad_environment

    refuse_bad_environment()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:  # the rate–distortion comparison stands above the codec (inr.experiments.codec)
        from inr.experiments.codec import main as compare

        rest = argv[1:]
        compare(["--images", *rest] if rest and not rest[0].startswith("-") else rest)
        return
    from inr.codec.cli import main

    main(argv)
