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

import dataclasses
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

from jsonargparse import ArgumentParser
from torch import nn

from inr.errors import InputError
from inr.experiments import comparison
from inr.experiments.compare_encoders import Encoders, ImageProtocol
from inr.experiments.comparison import Context, Member
from inr.methods.registry import METHODS, Resolved
from inr.networks.layers import UnitToSymmetric
from inr.tasks.image import ImageFitting

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


@dataclasses.dataclass(frozen=True)
class WireProtocol(ImageProtocol):
    """``compare_encoders``' protocol and the WIRE checkout whose released network the second row trains."""

    wire_repo: str = ""


class OfficialWire(Encoders):
    """``compare_encoders`` with two rows: the registry's WIRE, and the released network under the same settings."""

    name, doc, prog = "official_wire", __doc__, "python examples/official_wire.py"
    methods = default_methods = ("wire", OFFICIAL_ROW)

    def available(self, args: Any) -> tuple[str, ...]:
        return self.methods

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--wire-repo", type=str, required=True, help="a checkout of github.com/vishwa91/wire")
        super().arguments(parser)

    def protocol(self, args: Any) -> WireProtocol:
        load_official(Path(args.wire_repo))  # a missing checkout fails here, before anything is written
        p = super().protocol(args)
        return WireProtocol(**{f.name: getattr(p, f.name) for f in dataclasses.fields(p)}, wire_repo=args.wire_repo)

    def record(self, p: Any) -> dict[str, Any]:
        return {
            **super().record(p),
            "released": dict(METHODS["wire"].resolve(self.setting(Context(p, Member(None, 0)))).network.init_args),
        }

    def spec(self, ctx: Context) -> Resolved:
        spec = super().spec(dataclasses.replace(ctx, name="wire"))
        return dataclasses.replace(spec, name=ctx.name)

    def model(self, ctx: Context) -> ImageFitting:
        spec = ctx.spec
        if spec.name != OFFICIAL_ROW:
            return super().model(ctx)
        encoder, _, optimizer = spec.build()  # the method's encoder and optimizer around the released network
        network = official_network(load_official(Path(ctx.p.wire_repo)), dict(spec.network.init_args))
        return ImageFitting(encoder=encoder, network=network, optimizer=optimizer, out_channels=ctx.data.out_channels)

    def baselines(self, ctx: Context) -> list:
        return []


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    return comparison.main(OfficialWire(), argv)


if __name__ == "__main__":
    main()
