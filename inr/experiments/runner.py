"""The toolkit under every comparison: progress lines, mean ± std over seeds, Markdown tables, the paired
difference and its verdict, the output directory's checks and writer.

Rows repeated over seeds or signals are summarised per method as mean ± sample standard deviation (``summarise``);
``markdown_table`` writes either form with the same ``Column`` list; ``write_results`` writes ``results.md`` and
``results.json`` (the layout of ``inr.experiments.results``) into a directory that ``prepare_out`` checked and
created before the first row trained. Training a row is ``inr.methods.training``; the command wrapper (errors,
signals) is ``inr.run.command``. The loop over methods and seeds that uses them is ``inr.experiments.comparison``.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from inr.errors import InputError
from inr.experiments.results import SCORES, json_safe
from inr.experiments.stats import LEVEL, MIN_PAIRS, paired_t
from inr.io.files import atomic_write
from inr.io.progress import format_seconds


class RowProgress:
    """One line per finished row on stderr: ``[3/7] gaussian: test 27.22 dB, 41 s; about 2 min left``."""

    def __init__(self, total: int, stream: Any = None) -> None:
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.start = time.perf_counter()

    def row(self, name: str, summary: str) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.total - self.done)
        eta = f"; about {format_seconds(left)} left" if self.done < self.total else f"; {format_seconds(elapsed)} in all"
        print(f"[{self.done}/{self.total}] {name}: {summary}{eta}", file=self.stream, flush=True)


# --- rows, summaries and tables -----------------------------------------------------------------------
@dataclass(frozen=True)
class Column:
    """A table column: its header, the row key it shows and the value's format (``s``: text, right-aligned otherwise)."""

    header: str
    key: str
    spec: str = ".2f"
    spread: bool = True  # show ± std of a summarised row (False for settings and times)


def summarise(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], by: str = "method") -> list[dict[str, Any]]:
    """One row per ``by`` value (in order of appearance): every numeric key's mean over the rows that share it,
    with ``<key>_std`` (sample standard deviation, NaN for one row), ``<key>_n`` (how many rows had a value: a
    target some seeds never reached is averaged over those that did; a score of a row marked ``collapsed`` is not
    counted) and ``n``; text values from the first row.

    Example:
        >>> rows = [{"method": "a", "psnr": 20.0}, {"method": "a", "psnr": 22.0}, {"method": "b", "psnr": 9.0}]
        >>> [(r["method"], r["psnr"], round(r["psnr_std"], 3), r["n"]) for r in summarise(rows, ["psnr"])]
        [('a', 21.0, 1.414, 2), ('b', 9.0, nan, 1)]
        >>> s = summarise([{"method": "a", "step": 50}, {"method": "a", "step": None}], ["step"])[0]
        >>> s["step"], s["step_n"], s["n"]
        (50.0, 1, 2)
    """
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r[by], []).append(r)
    out = []
    for name, group in groups.items():
        summary = {k: v for k, v in group[0].items() if isinstance(v, str)}
        summary.update({by: name, "n": len(group)})
        for key in keys:
            kept = [r for r in group if not (key in SCORES and r.get("collapsed"))]  # a constant fit is named, not averaged
            values = [float(r[key]) for r in kept if isinstance(r.get(key), (int, float)) and r.get(key) is not None]
            values = [v for v in values if not math.isnan(v)]
            summary[f"{key}_n"] = len(values)
            if not values:
                summary[key], summary[f"{key}_std"] = math.nan, math.nan
                continue
            finite = [v for v in values if math.isfinite(v)]
            summary[key] = statistics.fmean(values) if len(finite) == len(values) else math.inf
            summary[f"{key}_std"] = statistics.stdev(finite) if len(finite) > 1 and len(finite) == len(values) else math.nan
        out.append(summary)
    return out


def cell(value: Optional[Any], spec: str, std: Optional[float] = None) -> str:
    """One table cell: ``—`` for a missing or NaN value, ``∞`` for an exact fit's PSNR, ``mean ± std`` with a spread.

    Example:
        >>> cell(float("inf"), ".2f"), cell(float("nan"), ".0f"), cell(0, ","), cell(12.345, ".2f"), cell(12.345, ".2f", 0.51)
        ('∞', '—', '—', '12.35', '12.35 ± 0.51')
        >>> cell(133123.0, ",")
        '133,123'
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    if spec == "," and value == 0:  # a baseline has no parameters
        return "—"
    if spec == "d" or (spec == "," and float(value).is_integer()):  # a count summarised as a float mean
        value = int(round(value))
    text = format(value, spec)
    if std is not None and not math.isnan(std) and spec not in ("s", ","):
        text += f" ± {format(std, spec if spec != 'd' else '.1f')}"
    return text


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    """The rows as a Markdown table; a summarised row (``summarise``) with n > 1 shows mean ± std per number, and
    says over how many rows a number is taken where some had none ("50 (1 of 3)": one seed of three reached a
    target).

    Example:
        >>> rows = summarise([{"method": "a", "step": 50}, {"method": "a", "step": None}, {"method": "a", "step": 70}], ["step"])
        >>> markdown_table(rows, [Column("row", "method", "s"), Column("steps", "step", "d")]).splitlines()[2]
        '| a | 60 ± 14.1 (2 of 3) |'
    """
    lines = [
        "| " + " | ".join(c.header for c in columns) + " |",
        "|" + "|".join("---" if c.spec == "s" else "---:" for c in columns) + "|",
    ]
    for r in rows:
        n = r.get("n", 1)
        cells = []
        for c in columns:
            text = cell(r.get(c.key), c.spec, r.get(f"{c.key}_std") if n > 1 and c.spread else None)
            have = r.get(f"{c.key}_n", n)
            if n > 1 and 0 < have < n:
                text += f" ({have} of {n})"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- the rule for calling a difference (docs/results.md, "Calling a difference") -----------------------------
# its test and its least number of pairs (MIN_PAIRS) are inr.experiments.stats'


@dataclass(frozen=True)
class Paired:
    """The paired differences d_i = a_i − b_i of one score over the runs both methods share (``paired``): their
    mean, sample std, count, how many are positive, their range, the number of distinct signals they come from, the
    paired t-test's two-sided p (``stats.paired_t``) and how many signals' seeds were averaged into one pair against
    a row without seeds."""

    a: str
    b: str
    key: str
    mean: float
    std: float
    n: int
    above: int
    low: float
    high: float
    signals: int = 0
    p: float = math.nan
    averaged: int = 0


@dataclass(frozen=True)
class MachineSpread:
    """How far one method's figure moved between machines and thread counts, same code and seed: measured for the
    comparison ``comparison`` where its protocol holds ``protocol``'s fields, in score ``key``."""

    comparison: str
    method: str
    key: str
    spread: float
    protocol: tuple[tuple[str, Any], ...]
    source: str


# The natural image at 256², 300 steps, the paper's 3 × 256 MLP and initialisation (compare_encoders --resolution 256)
_IMAGE_256 = (("kind", "natural"), ("resolution", 256), ("steps", 300), ("width", 256), ("init", "paper"))
# Every machine spread measured (seed 0 of the same command on two CPUs and two thread counts); a pair's spread is
# the larger of its two rows' where measured, none where neither row's was
MACHINE_SPREADS = (
    MachineSpread("compare_encoders", "gaussian", "psnr", 0.73, _IMAGE_256, "docs/results.md, the default command"),
    MachineSpread("compare_encoders", "gauss", "psnr", 0.06, _IMAGE_256, "docs/benchmark.md, the same seeds"),
    MachineSpread("compare_encoders", "siren", "psnr", 0.05, _IMAGE_256, "docs/benchmark.md, the same seeds"),
    MachineSpread("compare_encoders", "finer", "psnr", 0.05, _IMAGE_256, "docs/benchmark.md, the same seeds"),
    MachineSpread("compare_encoders", "bacon", "psnr", 0.0, _IMAGE_256, "docs/benchmark.md, the same seeds"),
)


def machine_spread(comparison: str, protocol: Any, a: str, b: str, key: str) -> Optional[float]:
    """The machine spread of ``a − b`` in ``key`` (``MACHINE_SPREADS``): the larger of the two rows' measured for this
    comparison and protocol; None where neither was measured.

    Example:
        >>> from types import SimpleNamespace
        >>> p = SimpleNamespace(kind="natural", resolution=256, steps=300, width=256, init="paper")
        >>> machine_spread("compare_encoders", p, "positional", "gaussian", "psnr")
        0.73
        >>> machine_spread("compare_encoders", SimpleNamespace(**{**vars(p), "resolution": 128}), "gaussian", "none", "psnr")
    """
    found = [
        s.spread
        for s in MACHINE_SPREADS
        if s.comparison == comparison
        and s.key == key
        and s.method in (a, b)
        and all(getattr(protocol, field, None) == value for field, value in s.protocol)
    ]
    return max(found) if found else None


def paired(rows: Sequence[Mapping[str, Any]], a: str, b: str, key: str) -> Paired:
    """The differences of ``key`` between methods ``a`` and ``b`` over the runs both have, rows paired by signal and
    seed. Against a row without a seed (a baseline that draws nothing), the other's seeds of that signal are averaged
    into one pair: seeds of one image against one number are one image's evidence, not several. Rows marked
    ``collapsed`` and non-finite values are left out; two rows of one method, signal and seed are refused
    (``InputError``, one line).

    Example:
        >>> rows = [{"method": "x", "seed": s, "p": 20.0 + s} for s in range(3)] + [{"method": "y", "seed": None, "p": 20.5}]
        >>> d = paired(rows, "x", "y", "p")  # three seeds of one signal against a seedless row: one pair
        >>> d.mean, d.n, d.signals, d.averaged
        (0.5, 1, 1, 1)
        >>> rows = [{"method": m, "signal": s, "seed": 0, "p": v + s} for s in range(3) for m, v in (("x", 1.0), ("y", 0.5))]
        >>> d = paired(rows, "x", "y", "p")
        >>> d.mean, d.std, d.n, d.signals, d.above, d.p
        (0.5, 0.0, 3, 3, 3, 0.0)
    """

    def usable(r: Mapping[str, Any]) -> bool:
        value = r.get(key)
        return isinstance(value, (int, float)) and math.isfinite(value) and not r.get("collapsed")

    def values(method: str) -> dict[Any, dict[Any, float]]:  # signal -> seed -> value
        out: dict[Any, dict[Any, float]] = {}
        for r in rows:
            if r["method"] != method:
                continue
            source, seed = r.get("signal"), r.get("seed")
            if (source, seed) in seen[method]:
                raise InputError(
                    f"two rows of {method} for {where(r) or 'the one signal'}: a method's row for a signal and seed "
                    "is counted once; remove the duplicate from the results"
                )
            seen[method].add((source, seed))
            if usable(r):
                out.setdefault(source, {})[seed] = float(r[key])
        return out

    seen: dict[str, set] = {a: set(), b: set()}
    first, second = values(a), values(b)
    diffs: list[float] = []
    signals, averaged = set(), 0
    for source, mine in first.items():
        theirs = second.get(source, {})
        common = [s for s in mine if s is not None and s in theirs]
        if common:
            diffs += [mine[s] - theirs[s] for s in common]
        elif None in mine and None in theirs:
            diffs.append(mine[None] - theirs[None])
        elif None in theirs and mine:  # my seeds against one seedless number: one pair
            diffs.append(statistics.fmean(mine.values()) - theirs[None])
            averaged += len(mine) > 1
        elif None in mine and theirs:
            diffs.append(mine[None] - statistics.fmean(theirs.values()))
            averaged += len(theirs) > 1
        else:
            continue
        signals.add(source)
    if not diffs:
        return Paired(a, b, key, math.nan, math.nan, 0, 0, math.nan, math.nan)
    mean = statistics.fmean(diffs)
    std = statistics.stdev(diffs) if len(diffs) > 1 else math.nan
    return Paired(
        a,
        b,
        key,
        mean,
        std,
        len(diffs),
        sum(d > 0 for d in diffs),
        min(diffs),
        max(diffs),
        signals=len(signals),
        p=paired_t(mean, std, len(diffs)),
        averaged=averaged,
    )


def called(d: Paired, machine: Optional[float] = None, level: float = LEVEL) -> bool:
    """The rule: a difference is called (a win of one method) when it rests on at least ``MIN_PAIRS`` pairs, the
    two-sided paired t-test rejects "no difference" at ``level`` (5 %: where none exists it calls one 5 % of the time
    or less; ``stats``), and its mean exceeds ``machine``, the machine-to-machine spread where one was measured
    (``machine_spread``; None where none was). Otherwise the two are level.

    Example:
        >>> d = Paired("x", "y", "p", mean=0.28, std=0.26, n=24, above=22, low=-0.19, high=0.84, signals=8, p=2.4e-05)
        >>> from dataclasses import replace
        >>> called(d), called(d, machine=0.73), called(replace(d, n=2)), called(replace(d, p=0.06))
        (True, False, False, False)
    """
    return d.n >= MIN_PAIRS and d.p < level and abs(d.mean) > (machine or 0.0)


def verdict(d: Paired, machine: Optional[float] = None) -> str:
    """The rule's word on ``d``: "a above b", "level", or "level: within the machine spread (0.73)".

    Example:
        >>> d = Paired("x", "y", "p", mean=-0.28, std=0.26, n=24, above=2, low=-0.84, high=0.19, signals=8, p=2.4e-05)
        >>> verdict(d), verdict(d, machine=0.73)
        ('y above x', 'level: within the machine spread (0.73)')
    """
    if called(d, machine):
        return f"{d.a} above {d.b}" if d.mean > 0 else f"{d.b} above {d.a}"
    if d.n >= MIN_PAIRS and d.p < LEVEL and machine is not None:
        return f"level: within the machine spread ({machine:.2f})"
    if d.n < MIN_PAIRS:
        return f"level (a difference needs {MIN_PAIRS} pairs)"
    return "level"


def difference_note(
    rows: Sequence[Mapping[str, Any]],
    a: str,
    b: str,
    key: str = "psnr",
    unit: str = "dB",
    machine: Optional[float] = None,
    digits: int = 2,
) -> str:
    """One line of the rule (``called``) for ``a − b`` of ``key``, paired per signal and seed (``paired``): the mean ±
    std over n pairs and the signals they come from, how many favour ``a``, their range, the t-test's p, the machine
    spread where measured, and the verdict; the figures with ``digits`` decimals (a score in [0, 1] such as IoU
    needs 3).

    Example:
        >>> rows = [{"method": m, "signal": g, "seed": 0, "p": v + g} for g in range(3) for m, v in (("x", 25.0), ("y", 24.9))]
        >>> difference_note(rows, "x", "y", "p")
        'x − y: +0.10 ± 0.00 dB over 3 pairs from 3 signals (x above in 3; +0.10 to +0.10; p < 0.001): x above y'
        >>> difference_note(rows, "x", "y", "p", machine=0.73)
        'x − y: +0.10 ± 0.00 dB over 3 pairs from 3 signals (x above in 3; +0.10 to +0.10; p < 0.001; machine spread 0.73 dB): level: within the machine spread (0.73 dB)'
        >>> difference_note(rows[:2], "x", "y", "p")
        'x − y: +0.10 dB, one pair from 1 signal: level (a difference needs 3 pairs)'
        >>> difference_note(rows, "x", "y", "p", unit="", digits=3)
        'x − y: +0.100 ± 0.000 over 3 pairs from 3 signals (x above in 3; +0.100 to +0.100; p < 0.001): x above y'
    """
    d, unit, f = paired(rows, a, b, key), f" {unit}" if unit else "", f".{digits}f"
    if d.n == 0:
        return f"{a} − {b}: no runs in common"
    sources = f"from {d.signals} signal{'s' if d.signals != 1 else ''}"
    if d.averaged:
        side = b if any(r["method"] == b and r.get("seed") is None for r in rows) else a
        sources += f", each signal's seeds averaged against {side}, which has none"
    if d.n < MIN_PAIRS:
        pairs = "one pair" if d.n == 1 else f"{d.n} pairs"
        return f"{a} − {b}: {d.mean:+{f}}{unit}, {pairs} {sources}: {verdict(d)}"
    p = "p < 0.001" if d.p < 0.001 else f"p = {d.p:.2g}"
    spread = f"; machine spread {machine:.2f}{unit}" if machine is not None else ""
    said = verdict(d, machine).replace(f"({machine:.2f})", f"({machine:.2f}{unit})") if machine is not None else verdict(d)
    return (
        f"{a} − {b}: {d.mean:+{f}} ± {d.std:{f}}{unit} over {d.n} pairs {sources} ({a} above in {d.above}; "
        f"{d.low:+{f}} to {d.high:+{f}}; {p}{spread}): {said}"
    )


def where(row: Mapping[str, Any]) -> str:
    """A row's signal and seed in words: ``phantom 2, seed 1``, ``seed 3``."""
    seed = None if row.get("seed") is None else f"seed {row['seed']}"
    return ", ".join(x for x in (row.get("signal"), seed) if x)


def collapsed_note(rows: Sequence[Mapping[str, Any]], key: str = "psnr", unit: str = "dB") -> str:
    """The fits marked ``collapsed`` (their output a constant), named with their ``key``: the tables leave them out
    of the means.

    Example:
        >>> collapsed_note([{"method": "positional", "signal": None, "seed": 3, "collapsed": 1.0, "psnr": 14.85}])
        'Collapsed to a constant, left out of the means and the paired differences: positional (seed 3; 14.85 dB).'
    """
    value = lambda r: f"; {r[key]:.2f}{' ' + unit if unit else ''}" if isinstance(r.get(key), (int, float)) else ""
    names = [f"{r['method']} ({where(r)}{value(r)})" for r in rows if r.get("collapsed")]
    return f"Collapsed to a constant, left out of the means and the paired differences: {', '.join(names)}." if names else ""


# --- output --------------------------------------------------------------------------------------------
def prepare_out(path: Optional[Path | str], what: str = "--out") -> Optional[Path]:
    """Create the output directory before anything trains, or refuse (``InputError``) one that cannot hold the
    results: an existing file, a directory that cannot be written."""
    if path is None:
        return None
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"{what} {out}: is a file, not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"{what} {out}: cannot write there ({exc.strerror or exc})") from None
    return out


def write_results(out: Path, table: str, results: Mapping[str, Any], stem: str = "results") -> None:
    """``<stem>.md`` (the table and notes) and ``<stem>.json`` (every number), each written whole or not at all."""
    with atomic_write(out / f"{stem}.md", "w") as f:
        f.write(table.rstrip() + "\n")
    with atomic_write(out / f"{stem}.json", "w") as f:
        f.write(json.dumps(json_safe(results), indent=1, allow_nan=False))
