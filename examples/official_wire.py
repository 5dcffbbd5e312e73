"""The released WIRE code on this framework's image protocol, beside the registry's WIRE row.

    git clone https://github.com/vishwa91/wire /tmp/wire       # MIT licence; not shipped with this project
    python examples/official_wire.py --wire-repo /tmp/wire --seeds 3

Both rows train under the same settings — the registry's ``wire`` method (4 complex-Gabor layers of 181 units,
ω₀ = 20, s₀ = 10, Adam lr 1e-3), the image protocol of ``compare_encoders`` (128², every other pixel trained,
the pixels between them held out) and the same seeds — and differ only in the network's code: this framework's
``inr.networks.WIRE`` or ``INR`` from the repository's ``modules/wire.py`` (its ``ComplexGaborLayer``, PyTorch's
default initialisation), fed the coordinates mapped to [−1, 1] as its scripts do. A held-out PSNR far below the
training PSNR in both rows says the method, not this implementation, fits the samples and not between them.

This imports and runs the given repository's Python code: point it at a checkout you trust.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

from torch import nn

from inr.data.image import ImageDataModule
from inr.errors import InputError
from inr.experiments.compare_encoders import COLUMNS, NUMERIC, Protocol, resolve, run_method
from inr.experiments.runner import (
    ExperimentParser,
    command,
    markdown_table,
    prepare_out,
    silence_lightning,
    summarise,
    write_results,
)
from inr.io.threads import torch_threads
from inr.networks.layers import UnitToSymmetric

OFFICIAL_ROW = "wire (released code)"  # also a TensorBoard run name: no slash


def load_official(repo: Path) -> ModuleType:
    """``modules/wire.py`` of a WIRE checkout as a module (it imports nothing else of its repository)."""
    path = repo / "modules" / "wire.py"
    if not path.is_file():
        raise InputError(f"--wire-repo: {path} not found (clone https://github.com/vishwa91/wire there)")
    spec = importlib.util.spec_from_file_location("official_wire", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "INR"):
        raise InputError(f"--wire-repo: {path} defines no INR class")
    return module


def official_network(module: ModuleType, settings: dict[str, Any]):
    """``(in_dim, out_dim) -> nn.Module``: the released ``INR`` with the registry row's sizes and ω₀, s₀.

    The released ``INR(hidden_layers=D−1)`` has D Gabor layers (the first real), as ``WIRE(depth=D)``; its
    ``hidden_features`` is the real width it divides by √2, as ``WIRE(width=...)``.
    """

    def build(in_dim: int, out_dim: int) -> nn.Module:
        released = module.INR(
            in_features=in_dim,
            hidden_features=settings["width"],
            hidden_layers=settings["depth"] - 1,
            out_features=out_dim,
            first_omega_0=settings["first_omega_0"],
            hidden_omega_0=settings["hidden_omega_0"],
            scale=settings["scale"],
        )
        return nn.Sequential(UnitToSymmetric(), released)  # the released scripts feed linspace(−1, 1)

    return build


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = ExperimentParser(__name__, __doc__, prog="python examples/official_wire.py")
    parser.add_argument("--wire-repo", type=Path, required=True, help="a checkout of github.com/vishwa91/wire")
    parser.add_argument("--image", help="image file (default data/astronaut.png)")
    parser.add_argument("--resolution", type=int, default=Protocol.resolution, help="image side after a centre crop")
    parser.add_argument("--steps", type=int, default=Protocol.steps, help="training steps of both rows")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0 … S−1 for both rows: mean ± std")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--out", default="outputs/official_wire", help="output directory")
    args = parser.parse_args(argv)
    for key in ("resolution", "steps", "seeds"):
        if getattr(args, key) < (8 if key == "resolution" else 1):
            parser.error(f"--{key} is too small: {getattr(args, key)}")
    return args


def compare(args: argparse.Namespace, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    module = load_official(args.wire_repo)  # a missing checkout fails here, before anything is written
    silence_lightning()
    protocol = Protocol(resolution=args.resolution, steps=args.steps)
    make_data = partial(ImageDataModule, path=args.image, resolution=protocol.resolution, split="every_other")
    make_data().setup("fit")
    settings = resolve("wire", protocol).network.init_args
    out = prepare_out(args.out)
    for seed in range(args.seeds):
        at_seed = replace(protocol, seed=seed)
        rows.append(run_method("wire", at_seed, make_data, out))
        rows.append(run_method("wire", at_seed, make_data, out, official_network(module, settings), OFFICIAL_ROW))
        for r in rows[-2:]:
            print(f"{r['method']} (seed {seed}): train {r['train_psnr']:.2f} dB, test {r['test_psnr']:.2f} dB", file=sys.stderr)
    table = markdown_table(summarise(rows, NUMERIC), COLUMNS)
    title = (
        f"{args.image or 'data/astronaut.png'}, {protocol.resolution}², {protocol.steps} steps, every other pixel "
        f"trained, seeds 0–{args.seeds - 1}: this framework's WIRE and the released code, same settings"
    )
    write_results(out, f"{title}\n\n{table}", {"rows": rows, "settings": dict(settings), "seeds": args.seeds})
    print(table)
    return rows


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    rows: list[dict[str, Any]] = []
    with torch_threads(args.threads):
        return command(lambda: compare(args, rows), lambda: markdown_table(summarise(rows, NUMERIC), COLUMNS) if rows else "")


if __name__ == "__main__":
    main()
