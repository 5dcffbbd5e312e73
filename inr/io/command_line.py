"""The command-line convention of every tool: ``--config FILE`` (a YAML file of the command's options) and
``--print_config`` (the options as resolved, as YAML: a file to start from), as train.py and the comparisons take
them through jsonargparse, on the tools written with argparse; a bad argument is one line on stderr and exit 2.

A config's keys are the options' names (``steps``, ``write_configs`` or ``write-configs``); its values go through
the same parsing as typed ones, at the place of ``--config`` on the line, so a flag after it overrides it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, Optional

from inr.errors import EXIT_INPUT

MAX_CONFIG_BYTES = 1 << 20  # as train.py's --config: a larger file is refused from its size
CONTROL = ("help", "config", "print_config")


class CommandParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with ``--config FILE`` and ``--print_config``; errors are one line, exit 2.

    ``run_config``: in the commands that read a run (inr-mesh, the turntable, the member export) or train one (the
    benchmarks of a task), ``--config`` also takes the run's or task's config, as it always has there (default
    ``config_default``); ``run_config`` is that meaning's help. A file is read as options when it is a mapping of
    this command's option names, else it is that config (``args.config``).

    Example:
        >>> p = CommandParser(prog="tool")
        >>> _ = p.add_argument("--steps", type=int, default=10)
        >>> p.parse_args(["--steps", "3"]).steps
        3
    """

    def __init__(self, *args: Any, run_config: Optional[str] = None, config_default: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.run_config = run_config
        options = "a YAML file of these options (--print_config writes one)"
        self.add_argument(
            "--config", metavar="FILE", default=config_default, help=f"{options}, or {run_config}" if run_config else options
        )
        self.add_argument("--print_config", action="store_true", help="print the options, resolved, as YAML and stop")

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT)

    def parse_known_args(self, args: Optional[Sequence[str]] = None, namespace: Any = None) -> tuple[Any, list[str]]:
        argv = self.expand(list(sys.argv[1:] if args is None else args))
        if "--print_config" not in argv:
            return super().parse_known_args(argv, namespace)
        argv = [a for a in argv if a != "--print_config"]
        with self._nothing_required():
            parsed, rest = super().parse_known_args(argv, namespace)
        if rest:
            self.error(f"unrecognized arguments: {' '.join(rest)}")
        print(self.dump(parsed), end="")
        raise SystemExit(0)

    # --- --config ------------------------------------------------------------------------------------------
    def expand(self, argv: list[str]) -> list[str]:
        """``argv`` with each ``--config FILE`` replaced by the options the file holds; a subcommand's own part is
        expanded by its parser."""
        out, i = [], 0
        while i < len(argv):
            token = argv[i]
            sub = self._subparser(token)
            if sub is not None:
                return out + [token] + sub.expand(argv[i + 1 :])
            if token == "--config" or token.startswith("--config="):
                if "=" in token:
                    path, i = token.partition("=")[2], i + 1
                elif i + 1 < len(argv):
                    path, i = argv[i + 1], i + 2
                else:
                    self.error("argument --config: expected one argument")
                out += self._config_tokens(path)
                continue
            out.append(token)
            i += 1
        return out

    def _subparser(self, token: str) -> Optional[CommandParser]:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and token in action.choices:
                sub = action.choices[token]
                return sub if isinstance(sub, CommandParser) else None
        return None

    def _config_tokens(self, path: str) -> list[str]:
        """The options ``path`` holds, as tokens; in a command that reads a run, a file that is not such a mapping is
        the run's config, left to the command (``["--config", path]``)."""
        import yaml

        file, run = Path(path), ["--config", path] if self.run_config else None
        if not file.is_file() or file.stat().st_size > MAX_CONFIG_BYTES:
            if run:
                return run
            if not file.is_file():
                self.error(f"--config {path}: {'a directory, not a file' if file.is_dir() else 'no such file'}")
            self.error(f"--config {path}: {file.stat().st_size:,} bytes, more than a config's {MAX_CONFIG_BYTES:,}")
        try:
            data = yaml.safe_load(file.read_text())
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            if run:
                return run
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else path
            self.error(f"--config {where}: {getattr(exc, 'problem', None) or str(exc).splitlines()[0]}")
        by_key = self._by_key()
        if run and not (isinstance(data, dict) and data and all(str(k) in by_key for k in data)):
            return run
        if data is None:
            return []
        if not isinstance(data, dict):
            self.error(f"--config {path}: a mapping of option names to values, not a {type(data).__name__}")
        tokens, last = [], []
        for key, value in data.items():
            action = by_key.get(str(key))
            if action is None:
                known = ", ".join(sorted({a.dest for a in by_key.values()}))
                self.error(f"--config {path}: unknown option {key!r} (the options: {known})")
            (last if action.nargs == argparse.REMAINDER else tokens).extend(self._tokens(action, value))
        return tokens + last  # an option that takes the rest of the line goes last

    def _by_key(self) -> dict[str, argparse.Action]:
        keys = {}
        for action in self._actions:
            if action.dest == "config" and self.run_config:  # the run's config, as an option of the command
                keys["config"] = action
                continue
            if action.dest in CONTROL or action.dest == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
                continue
            keys[action.dest] = action
            for option in action.option_strings:
                if option.startswith("--"):
                    keys[option[2:]] = keys[option[2:].replace("-", "_")] = action
        return keys

    @staticmethod
    def _tokens(action: argparse.Action, value: Any) -> list[str]:
        """The command-line tokens that give ``action`` the value ``value`` (nothing for null: the default)."""
        if value is None:
            return []
        flag = next(
            (o for o in action.option_strings if o.startswith("--")), action.option_strings[0] if action.option_strings else None
        )
        if isinstance(action, argparse.BooleanOptionalAction):
            return [flag if value else "--no-" + flag[2:]]
        if action.nargs == 0:  # store_true / store_false / store_const: the flag gives its const
            return [flag] if value == action.const else []
        values = [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
        if flag is None:  # a positional argument
            return values
        if action.nargs == argparse.REMAINDER and not values:  # it would take every token after it
            return []
        if isinstance(action, argparse._AppendAction):
            return [t for v in values for t in (flag, v)]
        return [flag, *values]

    # --- --print_config ------------------------------------------------------------------------------------
    def dump(self, namespace: Any) -> str:
        """The parsed options as YAML, in the order of --help (``--config`` reads it back)."""
        import yaml

        def plain(value: Any) -> Any:
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return str(value) if isinstance(value, Path) else value

        control = [c for c in CONTROL if not (c == "config" and self.run_config)]
        control += [a.dest for a in self._actions if isinstance(a, argparse._SubParsersAction)]  # on the line, not in it
        values = {k: plain(v) for k, v in vars(namespace).items() if k not in control}
        return yaml.safe_dump(values, sort_keys=False, allow_unicode=True)

    def _nothing_required(self):
        """For ``--print_config``: the required options and positionals may be left out (printed as null)."""
        from contextlib import contextmanager

        @contextmanager
        def relaxed():
            saved = []
            parsers = [self] + [p for a in self._actions if isinstance(a, argparse._SubParsersAction) for p in a.choices.values()]
            for parser in parsers:
                for action in parser._actions:
                    saved.append((action, action.required, action.nargs))
                    action.required = False
                    if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
                        action.nargs = "?" if action.nargs in (None, 1) else "*" if action.nargs == "+" else action.nargs
                for group in parser._mutually_exclusive_groups:
                    saved.append((group, group.required, None))
                    group.required = False
            try:
                yield
            finally:
                for item, required, nargs in saved:
                    item.required = required
                    if isinstance(item, argparse.Action):
                        item.nargs = nargs

        return relaxed()
