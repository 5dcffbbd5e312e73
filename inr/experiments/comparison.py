"""One shape for every comparison: a ``Comparison`` holds the science in hooks; ``run`` and ``main`` are written once.

A comparison trains methods of the registry (``inr.methods.registry``) over signals and seeds, beside baselines
that train nothing, scores both with one ``score`` and reports mean ± std per method. Its command line:

    python -m inr.experiments.<name> --methods a,b --seeds N [--seed S] [--steps N] [--resolution R] [--out DIR]
        [--threads T] [--paper] [--estimate-only] [--fresh] [--config FILE] [--print_config]   # + its own flags

``run(c, args)``, in order:

1. ``protocol(args)``: what every row shares, a frozen dataclass with ``seeds`` and ``steps`` (bad input refused
   here); ``check(p)``: the inputs read once (a missing file fails before anything is written);
2. with ``--paper`` or ``--estimate-only``: the expected time, from a few timed steps of each method;
3. ``prepare(p, names, data)``: what needs the data (a target PSNR, a regularisation weight);
4. each method over its ``members(p, name)`` (a member: a signal and a seed), one fit per member, or per ``groups``
   of members trained as one stacked model: ``data`` -> ``spec`` -> ``model`` (``task``) -> ``callbacks`` -> fit ->
   ``predict`` -> ``score``; then ``baselines`` of every signal, scored by the same ``score``. Each of these hooks gets
   the row's ``Context`` (the protocol, the member, the method, its data and spec, and ``state``: what a hook computes
   for the later hooks of the same row), made by the loop for that row: no hook leaves state on the comparison for
   another, or relies on the order the others are called in;
5. after every row, ``results.json`` (layout: ``inr.experiments.results``) and ``results.md``, written atomically;
   the same command in the same ``--out`` later skips the rows done under the same protocol (``--fresh``: start over);
6. ``summary`` (mean ± std per method), ``title`` and ``notes`` around the table, ``finish`` (figures), printed; these
   hooks of the whole table get the protocol ``p`` (and the rows) instead of a row's context.

The command line alone (``--help``, a bad flag) imports no Lightning, no torch and no task: what trains is imported by
the functions and hooks that train (``fit_row``, ``train_group``, a study's ``data``, ``task`` …).

Started by torchrun or ``srun`` as several processes, every process runs the command: the stacked groups train on
every rank with their members sharded (Lightning's DDP), rows of one model on rank 0 alone, and rank 0 alone checks,
scores, prints and writes (``inr.experiments.ranks``; docs/cluster.md).

A new comparison is a subclass that sets ``name``, ``methods`` and ``columns`` and writes ``data``, ``setting``,
``task`` and ``score`` (and ``protocol`` where the default's steps and resolution are not enough): docs/extending.md,
"A new comparison".
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from jsonargparse import ActionConfigFile, ArgumentParser, DefaultHelpFormatter

import inr
from inr.errors import EXIT_INPUT, InputError
from inr.experiments.results import load_results, results_record
from inr.experiments.runner import (
    Column,
    RowProgress,
    cell,
    collapsed_note,
    difference_note,
    machine_spread,
    markdown_table,
    prepare_out,
    summarise,
    write_results,
)
from inr.experiments.stats import LEVEL
from inr.io.allocator import retain_freed_memory
from inr.io.progress import format_seconds
from inr.methods.registry import METHODS, Resolved, Setting
from inr.run.command import command

if TYPE_CHECKING:
    import lightning as L

    from inr.experiments.ranks import Ranks

# --seed + --seeds stay within the seeds Lightning and numpy accept (0 … 2^32 − 1); more seeds than this is a typo
MAX_SEEDS = 10_000
MAX_SEED = 2**32 - 1
# old names of --methods (kept for one release, with a one-line note)
METHOD_ALIASES = ("--encoders", "--encodings", "--rows")


@dataclass(frozen=True)
class Protocol:
    """The least a protocol holds, and the default one: the seeds, the training steps and the grid side."""

    seeds: tuple[int, ...]
    steps: int
    resolution: int


class Member(NamedTuple):
    """Who one row is for: a signal of the comparison's set (None where it has one) and a seed."""

    signal: Any
    seed: int


class Baseline(NamedTuple):
    """A row that trains nothing: its name in the table, a function returning its prediction (scored by the
    comparison's ``score``), its setting, its iterations, and the name ``--methods`` chooses it by (where the
    comparison lets it choose baselines: ``Comparison.baseline_names``)."""

    name: str
    make: Callable[[], Any]
    setting: str = ""
    steps: int = 0
    key: str = ""


@dataclass
class Context:
    """One row's context: what every hook of the row gets, made by the loop for that row (``context`` makes one as
    the loop does, for scripts and tests).

    ``p`` the protocol; ``member`` whom the row is for (``signal``, ``seed``); ``name`` the method (empty for a
    signal's baselines); ``data`` the member's data (``None`` while ``data`` makes it); ``spec`` the method resolved
    for the member (``None`` until ``spec`` has resolved it); ``group`` the members trained with it as one stacked
    model and ``specs`` theirs (one member: itself); ``out`` the output directory; ``state`` what a hook computes for
    the later hooks of the same row (a network size, a learned init), shared by the members of one stacked fit:
    whatever a hook needs from another it reads here or recomputes, never from the comparison's attributes.
    """

    p: Any
    member: Member
    name: str = ""
    data: Any = None
    spec: Optional[Resolved] = None
    group: tuple[Member, ...] = ()
    specs: tuple[Resolved, ...] = ()
    out: Optional[Path] = None
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def signal(self) -> Any:
        return self.member.signal

    @property
    def seed(self) -> int:
        return self.member.seed

    def at(self, member: Member, **changes: Any) -> Context:
        """The context of ``member`` of the same fit (a stacked group's member), its ``state`` shared."""
        return dataclasses.replace(self, member=member, **changes)


class Comparison:
    """A comparison: set the class attributes, write the hooks that differ; ``run``/``main`` do the rest."""

    name: str = ""  # python -m inr.experiments.<name>
    doc: str = ""  # its help: the first paragraph
    prog: Optional[str] = None  # the usage line's command, where not python -m inr.experiments.<name>
    methods: tuple[str, ...] = ()  # what --methods chooses from ("all": every one), in table order
    default_methods: tuple[str, ...] = ()  # the default rows (empty: all)
    baseline_names: tuple[str, ...] = ()  # baselines --methods may choose (empty: every baseline, always)
    named_only: tuple[str, ...] = ()  # rows that run only when --methods names them (``all`` leaves them out)
    columns: tuple[Column, ...] = ()
    headline: tuple[str, ...] = ("psnr",)  # the row keys of a progress line
    difference_keys: tuple[str, ...] = ("psnr",)  # the scores the paired differences under the table read (``pairs``)
    seeds: int = 1  # --seeds by default
    steps: int = 300  # the default protocol's steps and grid side
    resolution: int = 64
    stack: bool = False  # a group of members trains as one stacked model
    baselines_per_seed: bool = False  # each seed draws its own data: baselines scored per seed
    old_seed_lists: bool = False  # --seeds took a list of seeds before (one release's note where it still gets one)
    remainder: Optional[str] = None  # a flag that takes every argument after it (view_synthesis' --override)

    # --- the command line and the protocol ------------------------------------------------------------
    def arguments(self, parser: ArgumentParser) -> None:
        """Add this comparison's own flags (``parser.add_argument``, each with a help text)."""

    def out_dir(self, args: Any) -> str:
        """The output directory: ``--out``, or where it goes without one (``args`` None: that, for the help)."""
        return getattr(args, "out", None) or f"outputs/{self.name}"

    def available(self, args: Any) -> tuple[str, ...]:
        """What ``--methods`` chooses from (``all``: every one) for these flags."""
        return self.methods + self.baseline_names

    def protocol(self, args: Any) -> Any:
        """What every row shares, from the parsed flags (``args.seed_list``: the seeds): a frozen dataclass with
        ``seeds`` and ``steps``; refuse bad values here (``InputError``: one line, exit 2). By default a
        ``Protocol`` of ``--steps`` and ``--resolution`` (or the class's ``steps`` and ``resolution``)."""
        if args.paper:
            raise InputError(f"--paper: {self.name} has no paper sizes; give --steps and --resolution")
        return Protocol(args.seed_list, args.steps or self.steps, args.resolution or self.resolution)

    def record(self, p: Any) -> dict[str, Any]:
        """The protocol as ``results.json`` keeps it, and as a rerun compares it (the seeds are kept apart)."""
        return {k: v for k, v in dataclasses.asdict(p).items() if k != "seeds"}

    def check(self, p: Any) -> Any:
        """Read the inputs once before anything is written (a bad file fails here); the first member's data."""
        return loaded(self.data(Context(p, Member(self.signals(p)[0], p.seeds[0]))))

    def prepare(self, p: Any, names: Sequence[str], data: Any) -> Any:
        """The protocol completed where it needs the data (``data``: ``check``'s), before the first row."""
        return p

    # --- who is trained -------------------------------------------------------------------------------
    def prepare_seconds(self, p: Any, names: Sequence[str]) -> list[tuple[str, float]]:
        """Expected seconds of what ``prepare`` will train for ``names`` before the rows (a learned init's
        meta-training), by part, for the time estimate; none by default."""
        return []

    def signals(self, p: Any) -> Sequence[Any]:
        """The signals every method is scored on (images, phantoms); one (None) by default."""
        return (None,)

    def label(self, p: Any, signal: Any) -> Optional[str]:
        """A signal's name in the rows."""
        return None if signal is None else str(signal)

    def members(self, p: Any, name: str) -> list[Member]:
        """The members method ``name`` trains: every signal with every seed."""
        return [Member(signal, seed) for signal in self.signals(p) for seed in p.seeds]

    def groups(self, p: Any, name: str, members: list[Member]) -> list[list[Member]]:
        """How method ``name``'s members train: one fit each, or (``stack``) groups trained as one stacked model."""
        return [[m] for m in members]

    # --- one row: each hook gets the row's context (``ctx.p``, ``ctx.member``, ``ctx.name``, ``ctx.data`` …) ------
    def data(self, ctx: Context) -> Any:
        """The member's data (``ctx.signal``, ``ctx.seed``): a DataModule (``run`` sets it up), or what ``predict`` and
        ``score`` read."""
        raise NotImplementedError

    def stacked_data(self, ctx: Context) -> Any:
        """The data a stacked group (``ctx.group``) trains on: the first member's where they share it."""
        return self.data(ctx)

    def setting(self, ctx: Context) -> Setting:
        """Where the registry's methods run for this member and its data (``methods.Setting``)."""
        raise NotImplementedError

    def spec(self, ctx: Context) -> Resolved:
        """Method ``ctx.name`` resolved for the member."""
        return METHODS[ctx.name].resolve(self.setting(ctx))

    def task(self, ctx: Context) -> tuple[type, dict[str, Any]]:
        """The task class and its arguments besides the method's encoder, network, optimiser and scheduler."""
        raise NotImplementedError

    def model(self, ctx: Context) -> L.LightningModule:
        """The method's model (``ctx.spec``): its encoder, network, optimiser and scheduler in the comparison's task."""
        task, kwargs = self.task(ctx)
        encoder, network, optimizer = ctx.spec.build()
        return task(encoder=encoder, network=network, optimizer=optimizer, scheduler=ctx.spec.build_scheduler(), **kwargs)

    def stacked_model(self, ctx: Context) -> L.LightningModule:
        """The members (``ctx.group``) as one stacked task: member k's encoder from ``ctx.specs[k]``, initialised with
        its seed."""
        task, kwargs = self.task(ctx)
        encoders = [spec.build()[0] for spec in ctx.specs]
        _, network, optimizer = ctx.specs[0].build()
        return task(
            member_encoders=encoders,
            member_seeds=[m.seed for m in ctx.group],
            network=network,
            optimizer=optimizer,
            scheduler=ctx.specs[0].build_scheduler(),
            **kwargs,
        )

    def callbacks(self, ctx: Context) -> list[L.Callback]:
        """Callbacks of one fit (what they measure becomes row keys through ``measured``)."""
        return []

    def trainer_args(self, ctx: Context) -> dict[str, Any]:
        """Further Trainer arguments of one fit (a logger under ``ctx.out``)."""
        return {}

    def measured(self, ctx: Context, callbacks: list[L.Callback]) -> dict[str, Any]:
        """Row keys from the fit's callbacks (histories, when a target was reached)."""
        return {}

    def predict(self, ctx: Context, model: L.LightningModule) -> Any:
        """What ``score`` reads of a trained model: its field on the grid by default."""
        return model.render()

    def score(self, ctx: Context, prediction: Any) -> dict[str, Any]:
        """The scores of a prediction (a model's or a baseline's) against ``ctx.data``, in the vocabulary of
        ``results.SCORES``; keys starting with ``_`` go to ``keep`` and not into the row."""
        raise NotImplementedError

    def extra(self, ctx: Context) -> dict[str, Any]:
        """Keys every row of method ``ctx.name`` carries besides its scores (the paper's number)."""
        return {}

    def keep(self, ctx: Context, row: dict[str, Any], prediction: Any, scores: dict[str, Any]) -> None:
        """Write a finished row's own files (a reconstruction, a render) under ``ctx.out``."""

    def baselines(self, ctx: Context) -> list[Baseline]:
        """The rows that train nothing, for one signal's data (``ctx.data``; ``ctx.name`` is empty)."""
        return []

    # --- the table: these hooks get the protocol ``p`` ---------------------------------------------------
    def table_columns(self, p: Any) -> tuple[Column, ...]:
        """The table's columns under protocol ``p``: ``columns`` by default."""
        return self.columns

    def judged_keys(self, p: Any) -> tuple[str, ...]:
        """The scores whose paired differences are printed under the table: ``difference_keys`` by default."""
        return self.difference_keys

    def summary(self, p: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The table's rows: each method's rows summarised, mean ± sample std."""
        return summarise(rows, numeric(self, p))

    def title(self, p: Any) -> str:
        """The line above the table."""
        return self.name

    def notes(self, p: Any, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        """What reads the table (``summary``, and the ``rows`` it summarises): settings, the paper's row, differences."""
        return ""

    def pairs(self, p: Any, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """The method pairs (a, b) whose differences the table's sentences rest on, printed under it by the rule of
        docs/results.md (``runner.difference_note``: paired per signal and seed); none by default
        (``neighbours_and_best`` gives the usual ones)."""
        return []

    def judged_rows(self, p: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows as the paired differences read them: where a seed draws its own signal (a phantom), the signal
        named per seed; the rows as they are by default."""
        return rows

    def difference_groups(self, p: Any, rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
        """The groups of rows whose differences are judged apart, each with its words in the heading (CT at 20 and at
        6 angles); all rows together by default."""
        return [("", rows)]

    def machine_spread(self, p: Any, a: str, b: str, key: str) -> Optional[float]:
        """How far ``a − b`` in ``key`` moves between machines and thread counts, where measured for this comparison
        and protocol (``runner.MACHINE_SPREADS``); None where not: a difference within it is never called."""
        return machine_spread(self.name, p, a, b, key)

    def size(self, p: Any) -> str:
        """The grid in the time estimate's line, e.g. ``at 128²``."""
        return ""

    def finish(self, p: Any, rows: list[dict[str, Any]], out: Path) -> None:
        """Figures and files of the whole run (the rows of earlier, resumed runs included)."""


def numeric(c: Comparison, p: Any) -> list[str]:
    """The keys of the table's numbers under protocol ``p`` (``n``, the count of rows a summary adds, apart)."""
    return [col.key for col in c.table_columns(p) if col.spec != "s" and col.key != "n"]


def neighbours_and_best(summary: Sequence[Mapping[str, Any]], key: str = "psnr") -> list[tuple[str, str]]:
    """Each model row against the one above it (b − a, in table order), then the best model row (by mean ``key``)
    against every baseline.

    Example:
        >>> s = [{"method": "a", "kind": "model", "psnr": 20.0}, {"method": "b", "kind": "model", "psnr": 22.0},
        ...      {"method": "c", "kind": "baseline", "psnr": 21.0}]
        >>> neighbours_and_best(s)
        [('b', 'a'), ('b', 'c')]
    """
    models = [r["method"] for r in summary if r["kind"] == "model"]
    pairs = [(b, a) for a, b in zip(models, models[1:])]
    scored = [r for r in summary if r["kind"] == "model" and isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]
    if scored:
        best = max(scored, key=lambda r: r[key])["method"]
        pairs += [(best, r["method"]) for r in summary if r["kind"] == "baseline"]
    return pairs


def row_notes(c: Comparison, p: Any, rows: list[dict[str, Any]], summary: list[dict[str, Any]]) -> str:
    """What the rows say beyond the table's means: the fits that collapsed to a constant (named, not averaged; read
    on the first of ``c.judged_keys(p)``) and the paired differences of ``c.pairs`` in each of those scores."""

    def unit(key: str) -> str:
        return "dB" if "psnr" in key else ""

    keys, columns = c.judged_keys(p), c.table_columns(p)
    parts = [collapsed_note(rows, keys[0], unit(keys[0]))]
    pairs = c.pairs(p, summary)
    for where, group in c.difference_groups(p, c.judged_rows(p, rows)) if pairs else ():
        for key in keys:
            header = next((col.header for col in columns if col.key == key), key)
            spread = lambda a, b, k=key: c.machine_spread(p, a, b, k)  # noqa: E731
            parts.append(paired_section(group, pairs, key, header, unit(key), spread, where))
    return "\n\n".join(x for x in parts if x)


def paired_section(
    rows: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    key: str,
    header: str,
    unit: str = "dB",
    spread: Callable[[str, str], Optional[float]] = lambda a, b: None,
    where: str = "",
) -> str:
    """The paired differences of ``key`` for every pair (a, b), one ``runner.difference_note`` line each, under a line
    naming the test and whether a machine spread applies (``spread(a, b)``: the measured one, or None); ``where``: the
    rows' group (CT's angle count), in the heading.

    Example:
        >>> rows = [{"method": m, "signal": g, "seed": 0, "psnr": v + g} for g in range(3) for m, v in (("x", 25.0), ("y", 24.0))]
        >>> print(paired_section(rows, [("x", "y")], "psnr", "PSNR"))
        Paired differences of PSNR (per signal and seed; two-sided paired t-test at 5 %, the rule of docs/results.md; no machine spread measured for these rows):
        - x − y: +1.00 ± 0.00 dB over 3 pairs from 3 signals (x above in 3; +1.00 to +1.00; p < 0.001): x above y
    """
    digits = 2 if unit else 3  # dB to a hundredth; a score in [0, 1] (IoU, SSIM) to a thousandth
    spreads = [spread(a, b) for a, b in pairs]
    lines = "\n".join(
        f"- {difference_note(rows, a, b, key, unit, machine=m, digits=digits)}" for (a, b), m in zip(pairs, spreads)
    )
    measured = (
        "machine spread applied where measured"
        if any(m is not None for m in spreads)
        else "no machine spread measured for these rows"
    )
    place = f" {where}" if where else ""
    return (
        f"Paired differences of {header}{place} (per signal and seed; two-sided paired t-test at {100 * LEVEL:g} %, "
        f"the rule of docs/results.md; {measured}):\n{lines}"
    )


def loaded(data: Any) -> Any:
    """A DataModule set up for fitting (its files read and checked), anything else as it is."""
    import lightning as L

    if isinstance(data, L.LightningDataModule):
        data.setup("fit")
    return data


# --- the command line ----------------------------------------------------------------------------------
class ComparisonParser(ArgumentParser):
    """jsonargparse, as train.py's: ``--config``, ``--print_config``, defaults shown once in ``--help``; a bad
    argument is one line on stderr and exit 2."""

    def error(self, message: str, ex: Optional[Exception] = None) -> None:
        print(f"{self.prog}: error: {one_line(message)}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT)


def program(c: Comparison) -> str:
    """How the comparison is run: its ``prog``, or ``python -m inr.experiments.<name>``."""
    return c.prog or f"python -m inr.experiments.{c.name}"


def one_line(message: str) -> str:
    """jsonargparse's report of a bad value as one line: the option and its complaint.

    Example:
        >>> one_line('Parser key "seeds":\\n  Expected a <class \\'int\\'>. Got value: 1e+20')
        "--seeds: Expected a <class 'int'>. Got value: 1e+20"
    """
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    if lines and lines[0].startswith('Parser key "'):
        key = lines[0].split('"')[1]
        detail = next(
            (line.lstrip("- ") for line in lines[1:] if line.startswith(("Expected", "- Expected", "Given value:"))), ""
        )
        given = next((line for line in lines if line.startswith("Given value:")), "")
        text = f"--{key.replace('_', '-')}: {detail or ' '.join(lines[1:])}"
        return text + (f" ({given})" if given and given != detail else "")
    return " ".join(lines)


def parser(c: Comparison) -> ComparisonParser:
    """The command line of ``c``: the common flags, then its own."""
    first = " ".join((c.doc or "").strip().split("\n\n")[0].split())
    p = ComparisonParser(
        prog=program(c),
        description=first,
        formatter_class=DefaultHelpFormatter,
        exit_on_error=True,
    )
    every = ",".join(c.methods + c.baseline_names)
    p.add_argument("--config", action=ActionConfigFile, help="a YAML file of these options (--print_config writes one)")
    p.add_argument(
        "--methods",
        type=str,
        default=",".join(c.default_methods or c.methods + c.baseline_names),
        help=f"comma-separated rows, or all: {every}",
    )
    p.add_argument(
        "--seeds",
        type=Optional[int],
        default=None,
        help=f"how many seeds: --seed … --seed + N − 1, mean ± std over them (null: {c.seeds})",
    )
    p.add_argument("--seed", type=int, default=0, help="the first seed")
    p.add_argument("--steps", type=Optional[int], default=None, help="training steps of every row (null: the protocol's)")
    p.add_argument("--resolution", type=Optional[int], default=None, help="grid side (null: the protocol's)")
    p.add_argument("--out", type=Optional[str], default=None, help=f"output directory (null: {c.out_dir(None)})")
    p.add_argument("--threads", type=Optional[int], default=None, help="torch CPU threads (null: torch's choice)")
    p.add_argument("--paper", action="store_true", help="the paper's sizes (a GPU job); prints the expected time first")
    p.add_argument("--estimate-only", action="store_true", help="print the expected time from a short probe and stop")
    p.add_argument("--fresh", action="store_true", help="start over instead of keeping the rows --out holds")
    c.arguments(p)
    return p


def deprecated(c: Comparison, argv: list[str]) -> list[str]:
    """``argv`` with the old spellings rewritten, one note each on stderr: ``--encoders``/``--encodings``/``--rows``
    (comma- or space-separated) -> ``--methods a,b``; several ``--seeds`` -> ``--seed S --seeds N`` (consecutive
    seeds). Everything after ``--override`` is left alone.

    Example:
        >>> deprecated(Comparison(), ["--rows", "a", "b,c", "--seeds", "2", "3", "--steps", "5"])
        ['--methods', 'a,b,c', '--seed', '2', '--seeds', '2', '--steps', '5']
    """
    out, i = [], 0
    while i < len(argv):
        flag, eq, value = argv[i].partition("=")
        if flag == "--override":
            return out + argv[i:]
        values, j = ([value], i + 1) if eq else ([], i + 1)
        if not eq:
            while j < len(argv) and not argv[j].startswith("--"):
                values.append(argv[j])
                j += 1
        if flag in METHOD_ALIASES and values:
            names = ",".join(n for v in values for n in v.split(",") if n)
            out += ["--methods", names]
            note(f"{flag} is an old name of --methods: --methods {names}")
        elif flag == "--seeds" and len(values) > 1:
            seeds = [int(v) for v in values if v.lstrip("-").isdigit()]
            if len(seeds) != len(values) or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
                raise InputError(f"--seeds {' '.join(values)}: give consecutive seeds as --seed FIRST --seeds COUNT")
            out += ["--seed", str(seeds[0]), "--seeds", str(len(seeds))]
            note(f"--seeds {' '.join(values)} is the old list form: --seed {seeds[0]} --seeds {len(seeds)}")
        else:
            if flag == "--seeds" and c.old_seed_lists and "--seed" not in argv:
                note(f"--seeds {values[0] if values else ''} counts seeds from --seed (default 0); for that one seed: --seed N")
            out += argv[i:j]
        i = j
    return out


def note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr, flush=True)


def chosen_methods(c: Comparison, args: Any) -> list[str]:
    """The comma-separated ``--methods`` (or ``all``: every row offered but ``named_only``), checked against what the
    comparison offers."""
    available, text = c.available(args), args.methods
    if text.strip() == "all":
        names = [n for n in available if n not in c.named_only]
    else:
        names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in available]
    if unknown or not names:
        raise InputError(f"--methods: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(available)}")
    return list(dict.fromkeys(names))


def check_common(c: Comparison, args: Any) -> None:
    """The common flags' bounds: seeds, steps, resolution, threads (one line each); ``args.seed_list`` the seeds,
    ``args.seeds_given`` whether ``--seeds`` was given (a paper's run has its own count)."""
    args.seeds_given = args.seeds is not None
    args.seeds = c.seeds if args.seeds is None else args.seeds
    if not 1 <= args.seeds <= MAX_SEEDS:
        raise InputError(f"--seeds must be 1 … {MAX_SEEDS:,}, got {args.seeds}")
    if not 0 <= args.seed <= MAX_SEED - args.seeds + 1:
        raise InputError(f"--seed must be 0 … {MAX_SEED - args.seeds + 1} (with --seeds {args.seeds}), got {args.seed}")
    for key, least in (("steps", 1), ("resolution", 2), ("threads", 1)):
        value = getattr(args, key)
        if value is not None and value < least:
            raise InputError(f"--{key} must be ≥ {least}, got {value}")
    args.seed_list = tuple(range(args.seed, args.seed + args.seeds))


# --- running it ------------------------------------------------------------------------------------------
def row_key(row: Mapping[str, Any]) -> tuple:
    """What names a row across runs: its method, signal and seed."""
    return row["method"], row.get("signal"), row["seed"]


def context(c: Comparison, p: Any, name: str, member: Member, data: Any = None, out: Optional[Path] = None) -> Context:
    """Method ``name``'s context for ``member`` as ``run`` makes it for a fit of one: its data (``c.data``, set up;
    ``data`` where given) and its spec (``c.spec``)."""
    ctx = Context(p, member, name, group=(member,), out=out)
    ctx.data = loaded(c.data(ctx)) if data is None else data
    ctx.spec = c.spec(ctx)
    ctx.specs = (ctx.spec,)
    return ctx


def fit_context(
    c: Comparison, p: Any, name: str, group: list[Member], out: Optional[Path] = None
) -> tuple[Context, list[Context]]:
    """The context of method ``name``'s fit of ``group`` (one member, or several as one stacked model: its data
    ``stacked_data``) and each member's (sharing the fit's data and state, each with its own spec)."""
    ctx = Context(p, group[0], name, group=tuple(group), out=out)
    if len(group) == 1:
        ctx.data = loaded(c.data(ctx))
        ctx.spec = c.spec(ctx)
        ctx.specs = (ctx.spec,)
        return ctx, [ctx]
    ctx.data = loaded(c.stacked_data(ctx))
    members = [ctx.at(m) for m in group]
    for m in members:
        m.spec = c.spec(m)
    ctx.spec, ctx.specs = members[0].spec, tuple(m.spec for m in members)
    return ctx, members


def fit_row(*args: Any, **kwargs: Any) -> float:
    """``inr.methods.training.fit_row``: one fit through a Lightning Trainer, its seconds (imported when a row trains)."""
    from inr.methods.training import fit_row as fit

    return fit(*args, **kwargs)


def train_group(
    c: Comparison, p: Any, name: str, group: list[Member], out: Path, ranks: Optional[Ranks] = None
) -> list[dict[str, Any]]:
    """Train method ``name`` for a group of members (one, or several as one stacked model); a scored row per member.
    Over several ``ranks`` (default: one process) a stacked group trains on every rank, its members sharded, and one
    model on rank 0 alone; rank 0 scores (the other ranks return no rows): ``inr.experiments.ranks``."""
    import lightning as L

    from inr.experiments.ranks import ONE, local_metrics
    from inr.methods.training import trained_numbers

    ranks = ONE if ranks is None else ranks
    first = group[0]
    L.seed_everything(first.seed, verbose=False)
    stacked = len(group) > 1
    ctx, members = fit_context(c, p, name, group, out)
    model = c.stacked_model(ctx) if stacked else c.model(ctx)
    callbacks = c.callbacks(ctx)
    where = f"{len(group)} members" if stacked else ", ".join(x for x in (c.label(p, first.signal), f"seed {first.seed}") if x)
    settings = dict(c.trainer_args(ctx))
    if stacked:
        settings.update(ranks.trainer_args())
    elif ranks.several:
        local_metrics(model)
    seconds = fit_row(model, ctx.data, p.steps, callbacks, label=f"{name} ({where})", **settings)
    if not ranks.writes:
        return []
    measured = c.measured(ctx, callbacks)
    rows = []
    for k, member in enumerate(members):
        single = model.member(k) if stacked else model
        if stacked:  # each member scored on its own data
            member = dataclasses.replace(member, data=loaded(c.data(member)))
        prediction = c.predict(member, single)
        scores = c.score(member, prediction)
        row = {
            "method": name,
            "kind": "model",
            "signal": c.label(p, member.signal),
            "seed": member.seed,
            "setting": member.spec.describe,
            "lr": member.spec.lr,
            **{k: v for k, v in scores.items() if not k.startswith("_")},
            "seconds": seconds / len(group),
            "steps": p.steps,
            "ms_per_step": 1000.0 * seconds / p.steps,
            "params": trained_numbers(single),
            **c.extra(member),
            **measured,
        }
        c.keep(member, row, prediction, scores)
        rows.append(row)
    return rows


def train_row(c: Comparison, p: Any, name: str, member: Member, out: Path) -> dict[str, Any]:
    """One method's row for one member, as ``run`` trains it (for tests and scripts that compare one row)."""
    return train_group(c, p, name, [member], out)[0]


def baseline_row(c: Comparison, ctx: Context, b: Baseline) -> dict[str, Any]:
    """A baseline of the signal of ``ctx`` built (timed: its seconds) and scored like a model's prediction."""
    start = time.perf_counter()
    prediction = b.make()
    seconds = time.perf_counter() - start
    scores = c.score(ctx, prediction)
    row = {
        "method": b.name,
        "kind": "baseline",
        "signal": c.label(ctx.p, ctx.signal),
        "seed": ctx.seed if c.baselines_per_seed else None,
        "setting": b.setting,
        **{k: v for k, v in scores.items() if not k.startswith("_")},
        "seconds": seconds,
        "steps": b.steps,
    }
    c.keep(ctx, row, prediction, scores)
    return row


def estimate(c: Comparison, p: Any, names: Sequence[str]) -> float:
    """Expected seconds of the model rows: each method's median step on the first member (a few steps after a
    warm-up), × steps × members (a stacked step costs about K single steps on a CPU: benchmarks/stacked.py)."""
    import lightning as L

    from inr.methods.training import step_seconds

    per_step = {}
    names = [name for name in names if c.members(p, name)]
    for name in names:
        member = c.members(p, name)[0]
        L.seed_everything(member.seed, verbose=False)
        ctx = context(c, p, name, member)
        per_step[name] = step_seconds(c.model(ctx), ctx.data)
    members = {name: len(c.members(p, name)) for name in names}
    total = sum(p.steps * per_step[n] * members[n] for n in names)
    count = max(members.values())
    measured = ", ".join(f"{n} {1000 * s:.1f}" for n, s in per_step.items())
    line = f"expected time: about {format_seconds(total)} for {len(names)} methods × {count} members × {p.steps} steps"
    print(
        f"{line}{(' ' + c.size(p)) if c.size(p) else ''} (an estimate: measured ms/step {measured}, from a short probe, "
        "scaled; scoring and baselines add to it)",
        file=sys.stderr,
        flush=True,
    )
    before = c.prepare_seconds(p, names)
    if before:
        parts = ", ".join(f"{part} {format_seconds(seconds)}" for part, seconds in before)
        print(
            f"before the rows: about {format_seconds(sum(s for _, s in before))} ({parts}; from a short probe of each)",
            file=sys.stderr,
            flush=True,
        )
    return total + sum(s for _, s in before)


def resumed(c: Comparison, out: Path, record: Mapping[str, Any], fresh: bool) -> dict[tuple, dict[str, Any]]:
    """The rows ``out``'s results.json holds for this comparison and protocol (none with ``fresh`` or no file);
    results of another comparison or protocol are refused (one line), never overwritten."""
    path = out / "results.json"
    if fresh or not path.exists():
        return {}
    earlier = load_results(path)
    now = results_record(program(c), "", record, [], [], [])["protocol"]
    if earlier.name != c.name or earlier.protocol != now:
        differ = sorted(k for k in set(now) | set(earlier.protocol) if now.get(k) != earlier.protocol.get(k))
        what = earlier.name if earlier.name != c.name else "another protocol (" + ", ".join(differ[:4]) + ")"
        raise InputError(f"--out {out} holds the results of {what}: choose another --out, or --fresh to replace them")
    return {row_key(r): r for r in earlier.rows}


def check_kept(c: Comparison, p: Any, names: Sequence[str], probe: Any, done: Mapping[tuple, Any], out: Path) -> None:
    """Refuse an ``--out`` holding rows this command does not run: rewriting results.json without them would lose
    them."""
    models = [n for n in names if n not in c.baseline_names]
    planned = {
        (name, c.label(p, m.signal), m.seed) for name in models for group in c.groups(p, name, c.members(p, name)) for m in group
    }
    sets = baseline_members(c, p)
    chosen = [b for b in c.baselines(Context(p, sets[0], data=probe, out=out)) if not c.baseline_names or b.key in names]
    planned |= {(b.name, c.label(p, m.signal), m.seed if c.baselines_per_seed else None) for m in sets for b in chosen}
    outside = [key for key in done if key not in planned]
    if outside:
        shown = ", ".join(
            f"{k[0]}" + (f" {k[1]}" if k[1] else "") + (f" seed {k[2]}" if k[2] is not None else "") for k in outside[:3]
        )
        raise InputError(
            f"--out {out} holds {len(outside)} rows this command does not run ({shown}{', …' if len(outside) > 3 else ''}): "
            "include their methods and seeds, choose another --out, or --fresh to replace them"
        )


def baseline_members(c: Comparison, p: Any) -> list[Member]:
    """Whom the baselines are for: every signal, with every seed where each seed draws its own data, else the
    first seed."""
    return list(dict.fromkeys(Member(s, seed if c.baselines_per_seed else p.seeds[0]) for s in c.signals(p) for seed in p.seeds))


def run(
    c: Comparison, args: Any, rows: Optional[list[dict[str, Any]]] = None, opened: Optional[dict[str, Any]] = None
) -> list[dict[str, Any]]:
    """The comparison ``c`` with flags ``args`` (``parse``'s): every row (models, then baselines), printed and written.
    ``rows`` gets the rows as they finish and ``opened["p"]`` the protocol (what ``main`` prints on a signal)."""
    from inr.experiments.ranks import Ranks
    from inr.methods.training import silence_lightning

    rows = [] if rows is None else rows
    opened = {} if opened is None else opened
    silence_lightning()
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    names = chosen_methods(c, args)
    models = [n for n in names if n not in c.baseline_names]
    p = opened["p"] = c.protocol(args)
    ranks = Ranks.of_launcher()  # several under torchrun or SLURM: inr.experiments.ranks
    why = ranks.refusal(args, [group for name in models for group in c.groups(p, name, c.members(p, name))], program(c))
    if why is not None:
        raise InputError(why)

    def opening() -> tuple[Optional[Path], Any, dict[tuple, dict[str, Any]]]:  # rank 0's, before anything trains
        opened["probe"] = probe = c.check(p)
        if args.paper or args.estimate_only:
            if models:
                estimate(c, p, models)
            if args.estimate_only:
                return None, p, {}
        out = prepare_out(c.out_dir(args))
        prepared = c.prepare(p, names, probe)
        done = resumed(c, out, {"comparison": c.name, **c.record(prepared)}, args.fresh)
        check_kept(c, prepared, names, probe, done, out)
        return out, prepared, done

    out, p, done = ranks.first(opening)
    if out is None:
        return []
    opened["p"] = p
    record = {"comparison": c.name, **c.record(p)}
    command_line = f"{program(c)} {shlex.join(args.argv)}".strip()
    plan = [(name, group) for name in models for group in c.groups(p, name, c.members(p, name))]
    sets = baseline_members(c, p)
    probe = Context(p, sets[0], data=opened.get("probe"), out=out)
    chosen = [b for b in c.baselines(probe) if not c.baseline_names or b.key in names] if ranks.writes else []
    progress = RowProgress(len(plan) + len(sets) * len(chosen))

    def write(final: bool = False) -> str:
        summary = c.summary(p, rows)
        table = markdown_table(summary, c.table_columns(p))
        status = "" if final else f"\n\n{len(rows)} rows so far; the run is not finished."
        notes = "\n\n".join(x for x in (c.notes(p, summary, rows), row_notes(c, p, rows, summary)) if x) if final else ""
        text = f"{c.title(p)}\n\n    {command_line}\n\n{table}{status}" + (f"\n\n{notes}" if notes else "")
        write_results(out, text, results_record(command_line, inr.__version__, record, p.seeds, rows, summary))
        return text

    for name, group in plan:
        earlier = [done.get(row_key({"method": name, "signal": c.label(p, m.signal), "seed": m.seed})) for m in group]
        if all(earlier):
            rows += earlier
            progress.row(name, "kept from the earlier run")
            continue
        if len(group) == 1 and not ranks.writes:
            continue  # one model: rank 0 trains it alone
        new = train_group(c, p, name, group, out, ranks)
        if not ranks.writes:
            continue
        rows += new
        write()
        where = (
            f"{len(new)} members"
            if len(new) > 1
            else ", ".join(x for x in (c.label(p, group[0].signal), f"seed {group[0].seed}") if x)
        )
        progress.row(f"{name} ({where})", headline(c, p, c.summary(p, new)[0]))
    if not ranks.writes:
        return []
    for member in sets:
        ctx = Context(p, member, out=out)  # the signal's baselines share its context
        ctx.data = loaded(c.data(ctx))
        for b in (b for b in c.baselines(ctx) if not c.baseline_names or b.key in names):
            seed = member.seed if c.baselines_per_seed else None
            earlier = done.get(row_key({"method": b.name, "signal": c.label(p, member.signal), "seed": seed}))
            rows.append(earlier or baseline_row(c, ctx, b))
            if earlier is None:
                write()
            progress.row(b.name, headline(c, p, rows[-1]) if earlier is None else "kept from the earlier run")
    text = write(final=True)
    c.finish(p, rows, out)
    print(text)
    return rows


def headline(c: Comparison, p: Any, row: Mapping[str, Any]) -> str:
    """A progress line's scores: the ``headline`` keys by their column headers, and the seconds."""
    columns = {col.key: col for col in c.table_columns(p)}
    parts = [f"{columns[k].header} {cell(row.get(k), columns[k].spec)}" for k in c.headline if k in columns]
    seconds = row.get("seconds")
    if isinstance(seconds, (int, float)) and math.isfinite(seconds):
        parts.append(f"{seconds:.1f} s")
    return ", ".join(parts)


def parse(c: Comparison, argv: Sequence[str]) -> Any:
    """The flags of ``c``'s command line ``argv``, checked (``args.seed_list``: the seeds; ``args.argv``: ``argv``)."""
    argv = list(argv)
    head, tail = argv, None
    if c.remainder and c.remainder in argv:  # everything after it is its value, read by no parser here
        head, tail = argv[: argv.index(c.remainder)], argv[argv.index(c.remainder) + 1 :]
    args = parser(c).parse_args(deprecated(c, head))
    if tail is not None:
        setattr(args, c.remainder.lstrip("-").replace("-", "_"), tail)
    args.argv = argv
    check_common(c, args)
    return args


def main(c: Comparison, argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """``python -m inr.experiments.<c.name>``: parse, run, print; bad input one line and exit 2, a signal keeps
    the finished rows (they are in results.json already) and exits 143 / 130."""
    argv = list(sys.argv[1:] if argv is None else argv)
    rows: list[dict[str, Any]] = []
    opened: dict[str, Any] = {}

    def body() -> list[dict[str, Any]]:
        args = parse(c, argv)
        from inr.io.threads import torch_threads  # torch, once the command line is read

        with torch_threads(args.threads):
            return run(c, args, rows, opened)

    def partial() -> str:  # the rows finished before a signal (a row exists only after the protocol)
        p = opened.get("p")
        return markdown_table(summarise(rows, numeric(c, p)), c.table_columns(p)) if rows else ""

    with quiet_ranks():  # over several processes rank 0 alone prints (inr.experiments.ranks)
        return command(body, partial)


def quiet_ranks() -> contextlib.AbstractContextManager:
    """``inr.experiments.ranks.quiet`` of the launcher's ranks: over several processes, the ranks other than 0 print
    nothing. A process started by hand has neither torchrun's ``TORCHELASTIC_RUN_ID`` nor SLURM's ``SLURM_NTASKS``
    (what Lightning's launcher environments detect) and is one rank: it reads no ranks, so that a command line alone
    (``--help``) imports no Lightning."""
    if "TORCHELASTIC_RUN_ID" not in os.environ and "SLURM_NTASKS" not in os.environ:
        return contextlib.nullcontext()
    from inr.experiments.ranks import Ranks, quiet

    return quiet(Ranks.of_launcher())
