"""The YAML loader of the command line: bounded in size and alias expansion, with errors as ``file:line:column``.

A YAML alias refers to a node instead of copying it, so a few hundred bytes can describe 10⁹ nodes
("billion laughs"); everything that walks the loaded config (validation, defaults, the saved config)
would then expand them. The node graph is composed first and its expanded size counted with each
shared node counted once per reference (memoised), and a config over ``MAX_NODES`` is refused before
anything walks it. Registered with jsonargparse as the parser mode ``PARSER_MODE``.
"""

from __future__ import annotations

import os
from typing import Any

import yaml
from jsonargparse import set_loader
from jsonargparse._loaders_dumpers import get_yaml_default_loader, yaml_load

from inr.errors import InputError

PARSER_MODE = "inr_yaml"
MAX_BYTES = 1 << 20  # 1 MiB; the largest shipped config is about 2 KB
MAX_NODES = 100_000  # nodes after alias expansion; a full printed config has about 300


def expanded_nodes(root: yaml.Node, limit: int = MAX_NODES) -> int:
    """Number of nodes of ``root`` with every alias expanded, counting stops just above ``limit``.

    Example (the mapping, its 2 keys, [1, 2] with 3 nodes, and a list of three copies of it with 10):
        >>> expanded_nodes(yaml.compose("a: &x [1, 2]\\nb: [*x, *x, *x]"))
        16
    """
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in in_progress:
            raise InputError("the config refers to itself through an alias (a recursive anchor)")
        in_progress.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > limit:
                break
        in_progress.discard(key)
        sizes[key] = total = min(total, limit + 1)
        return total

    return size(root)


def _where(path: str, mark: Any) -> str:
    return f"{path or 'config value'}:{mark.line + 1}:{mark.column + 1}" if mark is not None else (path or "config value")


def check_config_file(path: str) -> None:
    """Refuse a ``--config`` file over ``MAX_BYTES`` from its size, before the parser reads it whole (it hands
    ``load_config_text`` the file's text: a 2 GiB file took 28 s and 5 GB of memory before the refusal there)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return  # the parser names a missing or unreadable file
    if size > MAX_BYTES:
        raise InputError(f"{path}: {size:,} bytes, over the {MAX_BYTES:,} a config may have")


def load_config_text(stream: str, path: str = "") -> Any:
    """Load YAML like jsonargparse does, after the size and expansion checks; errors are ``InputError`` lines
    naming ``path`` (a config file) or the value."""
    # jsonargparse passes the file's base name while it has changed into the file's directory
    source = os.path.abspath(path) if path else ""
    if len(stream) > MAX_BYTES:
        raise InputError(f"{source or 'a config value'}: {len(stream):,} bytes, over the {MAX_BYTES:,} a config may have")
    try:
        node = yaml.compose(stream, Loader=get_yaml_default_loader())
    except yaml.MarkedYAMLError as exc:
        if not source:
            raise  # a command-line value: jsonargparse decides whether it was meant as plain text
        context = (
            f" ({exc.context} at {exc.context_mark.line + 1}:{exc.context_mark.column + 1})"
            if exc.context and exc.context_mark
            else ""
        )
        raise InputError(f"{_where(source, exc.problem_mark)}: {exc.problem}{context}") from None
    except RecursionError:
        raise InputError(f"{source or 'a config value'}: nested too deeply") from None
    if node is not None and expanded_nodes(node) > MAX_NODES:
        raise InputError(
            f"{source or 'a config value'}: its aliases expand to more than {MAX_NODES:,} values "
            "(a config that multiplies itself); refused before loading"
        )
    try:
        value = yaml_load(stream)
    except yaml.MarkedYAMLError as exc:  # a tag the safe loader does not build (!!python/object ...): data only
        if not source:
            raise
        raise InputError(f"{_where(source, exc.problem_mark)}: {exc.problem} (a config holds plain values only)") from None
    if source and value is None:
        raise InputError(f"{source}: the config file is empty")
    if source and not isinstance(value, dict):
        raise InputError(f"{source}: a config file must be a mapping (model:, data:, trainer: ...), found {type(value).__name__}")
    return value


set_loader(PARSER_MODE, load_config_text, exceptions=(yaml.YAMLError,))
