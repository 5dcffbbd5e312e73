"""The codec's own table of networks (``inr.codec.networks``) is what a file means: each format version's table is
pinned by its digest (an edit without a new version fails here, saying so), names every argument of the classes it
builds, reproduces today what the research registry builds for every entry at every size (a drift of the registry
fails at once, saying to add a format version rather than to edit the table), and the decoder's pixel grid is the
encoder's training grid."""

from __future__ import annotations

import inspect

import pytest
import torch

from inr.codec import bitstream
from inr.codec.architecture import Architecture
from inr.codec.coding import pixel_coords
from inr.codec.networks import NEWEST, TABLES, load_class, table_digest
from inr.data.grid import Grid
from inr.errors import InputError
from inr.methods.registry import METHODS

# The digest of each format version's table. A new version pins its own here once its golden files are written
# (tests/codec/test_golden.py); an old version's never changes.
PINNED = {1: "d491273536b58bc1", 2: "d491273536b58bc1"}
NEW_VERSION = (
    "put the change in a new format version instead: a new table under a new number in inr.codec.networks.TABLES "
    "(the old ones stay as they are), bitstream.VERSION and READABLE raised with it, golden files for it "
    "(tests/codec/test_golden.py), and its digest pinned here"
)


@pytest.mark.parametrize("version", sorted(TABLES))
def test_each_versions_table_is_the_one_pinned(version):
    digest = table_digest(version)
    assert version in PINNED, f"format version {version} has no pinned digest: pin {digest!r} once its golden files are written"
    assert digest == PINNED[version], (
        f"the table of format version {version} was edited (digest {digest}, pinned {PINNED[version]}): every existing "
        f"file of version {version} would decode with other networks, silently. Restore it and {NEW_VERSION}."
    )


def test_the_versions_the_reader_reads_are_the_versions_with_a_table():
    assert bitstream.READABLE == tuple(TABLES) and bitstream.VERSION == NEWEST == max(bitstream.READABLE)


def parameters(cls: type, skip: tuple[str, ...]) -> set[str]:
    return {name for name in inspect.signature(cls.__init__).parameters if name not in ("self", *skip)}


@pytest.mark.parametrize("version", sorted(TABLES))
def test_every_argument_of_every_class_is_written_out(version):
    for name, entry in TABLES[version].items():
        for path, args, skip in (
            (entry.encoder, entry.encoder_args, ()),
            (entry.network, entry.network_args, ("in_dim", "out_dim")),
        ):
            taken, named = parameters(load_class(path), skip), set(args)
            assert named <= taken, (
                f"format version {version}'s {name} names {sorted(named - taken)}, which {path} no longer takes"
            )
            assert taken <= named, (
                f"{path} takes {sorted(taken - named)}, which format version {version}'s {name} does not name, so its "
                "default decides what these files mean. Name it in the table with the value the version's files were "
                "built with (its old behaviour; the golden files check it) and pin the new digest, saying why; if no "
                f"value rebuilds them, {NEW_VERSION}"
            )


# --- the registry, today, builds what the newest table builds --------------------------------------------------
SIDES = (2, 3, 4, 5, 16, 20, 31, 32, 63, 64, 100, 128, 200, 255, 256, 257, 384, 512, 1000, 4096, 16384)
HASH_SIDES = (4, 20, 64, 256, 512)  # the registry's description builds the grid: kept to sizes that build quickly
SIZES = ((8, 2, 0, 0), (64, 4, 0, 0), (16, 2, 4, 6), (16, 3, 8, 12), (16, 2, 16, 18))


def registry_components(arch: Architecture, side: int):
    """What the registry builds for ``arch`` at ``side`` (the way the codec resolved it when format versions 1 and 2
    were written: the image setting, the file's width and depth in the network's arguments), every argument the
    registry leaves to the class's default filled in with that default."""
    spec = METHODS[arch.method].resolve(arch.setting(side))
    network_args = dict(spec.network.init_args)
    network_args.update({k: v for k, v in (("width", arch.width), ("depth", arch.depth)) if k in network_args})
    out = []
    for component, args, skip in (
        (spec.encoder, dict(spec.encoder.init_args), ()),
        (spec.network, network_args, ("in_dim", "out_dim")),
    ):
        signature = inspect.signature(component.cls().__init__).parameters
        defaults = {k: p.default for k, p in signature.items() if k not in ("self", *skip)}
        out.append((component.class_path, {**defaults, **args}))
    return tuple(out)


def drift(arch: Architecture, side: int, what: str) -> str:
    return (
        f"the registry's {arch.method} at a training grid of {side} ({arch.label()}) {what} the codec's table of format "
        f"version {NEWEST}: the registry has drifted from what files of this version mean. Do not edit the table; "
        f"{NEW_VERSION.removeprefix('put the change in ')}, whose entry is the registry's new network "
        "(or give the registry its old values back)"
    )


@pytest.mark.parametrize("method", list(TABLES[NEWEST]))
def test_the_registry_builds_what_the_table_builds_at_every_size(method):
    for width, depth, levels, log2 in SIZES:
        arch = Architecture(method, width, 4 if method == "bacon" else depth, 0, levels, log2)
        for side in HASH_SIDES if method.startswith("hashgrid") else SIDES:
            try:
                expected = registry_components(arch, side)
            except InputError:  # the grid rule refuses the Fourier mappings under 4 samples per axis: so must the table
                with pytest.raises(InputError):
                    arch.components(side)
                continue
            assert arch.components(side) == expected, drift(arch, side, "is not")


@pytest.mark.parametrize("method", list(TABLES[NEWEST]))
def test_the_registry_and_the_table_build_the_same_modules_and_values(method):
    arch = Architecture(method, 8, 4 if method == "bacon" else 2, seed=3, hash_levels=4, hash_log2=6)
    for side in (20, 64):
        with torch.random.fork_rng(devices=[]):  # a hash grid's table is drawn from the global state: the same for both
            spec = METHODS[method].resolve(arch.setting(side))
            torch.manual_seed(0)
            encoder, factory, _ = spec.build()
            args = dict(factory.keywords, width=arch.width, depth=arch.depth)
            torch.manual_seed(arch.seed)
            network = factory.func(encoder.out_dim, 3, **args)
            torch.manual_seed(0)
            ours = arch.build(side, 3)
        for theirs, mine in zip((encoder, network), ours):
            assert repr(theirs) == repr(mine), drift(arch, side, "builds other modules than")
            a, b = theirs.state_dict(), mine.state_dict()
            assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), drift(arch, side, "draws other values than")


def test_an_encoder_trains_the_tables_network_with_the_registrys_optimiser():
    arch = Architecture("finer", 8, 2)
    spec = arch.resolve(32, steps=50)
    ((encoder_class, encoder_args), (network_class, network_args)) = arch.components(32)
    assert (spec.encoder.class_path, dict(spec.encoder.init_args)) == (encoder_class, encoder_args)
    assert (spec.network.class_path, dict(spec.network.init_args)) == (network_class, network_args)
    registry = METHODS["finer"].resolve(arch.setting(32, 50))
    assert (spec.optimizer, spec.scheduler) == (registry.optimizer, registry.scheduler)


def test_a_file_names_only_what_its_versions_table_holds():
    with pytest.raises(InputError, match="unknown method 'positional_rotated'"):  # a registry method for 3-D only
        Architecture("positional_rotated", 8, 2).check("file", version=1)
    with pytest.raises(InputError, match="format version 9 has no table"):
        Architecture("siren", 8, 2).build(16, 3, version=9)


def test_the_decoders_pixel_grid_is_the_training_grid():
    for height, width in ((5, 7), (20, 16), (1, 9)):
        grid, pixels = Grid((height, width)), height * width
        for start, stop in ((0, pixels), (3, 8), (pixels - 2, pixels)):
            expected = grid.coords(torch.arange(start, stop))
            assert torch.equal(pixel_coords(height, width, start, stop), expected)
