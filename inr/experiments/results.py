"""One row type and one ``results.json`` layout for every comparison, written whole after every row and read back by
one typed loader.

    {"command": "python -m inr.experiments.<name> ...", "version": "0.1.0", "protocol": {"comparison": "<name>", ...},
     "seeds": [0, 1], "rows": [row, ...], "summary": [summary row, ...]}

A row is one method (or baseline) scored on one signal with one seed: ``ROW_KEYS`` always, the other keys from
one vocabulary (``SCORES``, ``FACTS``, ``TEXT``, ``DETAILS``), so that every comparison calls the same thing by
the same name (``psnr`` is the held-out or whole-grid PSNR everywhere, ``train_psnr`` the training samples').
A summary row is a method's rows summarised (``runner.summarise``): ``<key>``, ``<key>_std`` and ``<key>_n`` of
the numbers and ``n``. Non-finite numbers are written as the strings ``"inf"`` / ``"-inf"`` (an exact fit's
PSNR) and ``null`` (NaN: not measured), so the file stays strict JSON and reads back as it was.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inr.errors import InputError

# every row has these
ROW_KEYS = ("method", "kind", "seed", "seconds", "steps")
# the metric vocabulary: held-out (or whole-grid, for inverse problems) PSNR and SSIM, the training samples' PSNR,
# relative errors at DC and in the lower / upper half of the radial bands (held-out grid; ``train_``: the training
# grid), IoU on uniform and near-surface points, Chamfer-L1 and normal consistency of a level-set mesh, and
# ``full_psnr``: the whole grid's PSNR where ``psnr`` is a part of it (inpainting's unobserved pixels),
# ``interior_psnr``: the held-out samples within the training samples' span (the extrapolated edge left out)
SCORES = (
    "psnr",
    "ssim",
    "train_psnr",
    "dc",
    "low",
    "high",
    "train_dc",
    "train_low",
    "train_high",
    "iou",
    "iou_surface",
    "chamfer",
    "normal_consistency",
    "ms_ssim",
    "full_psnr",
    "interior_psnr",
)
# the score after n optimizer steps of a fit (inr.experiments.learned_init: from a learned or a standard init)
STEP_MARKS = (0, 1, 2, 3, 5, 10, 30, 100, 300)
STEP_SCORES = tuple(f"{metric}_{n}" for metric in ("psnr", "iou") for n in STEP_MARKS)
SCORES += STEP_SCORES
# numbers about a row that are not scores: its setting, size, speed, the paper's score beside it, when it first
# reached a target PSNR, the spread of its score over held-out views
FACTS = ("lr", "params", "ms_per_step", "paper_psnr", "target_step", "target_seconds", "view_psnr_std")
# a codec's rows (inr.experiments.codec): the file's bits per pixel, the rate asked for, the decoder's seconds
FACTS += ("bpp", "target_bpp", "decode_seconds")
# a CT row's projection angles (inr.experiments.learned_init sets few angles beside the paper's 20)
FACTS += ("angles",)
# 1.0 for a fit whose output collapsed to a constant (inr.experiments.problems.collapsed): named, not averaged
FACTS += ("collapsed",)
# the fit's seconds to each of those steps and to its end, scoring left out (the study's wall-clock curves)
FACTS += (*(f"seconds_{n}" for n in STEP_MARKS), "seconds_full")
TEXT = ("signal", "setting")
# lists and histories: per-band errors and their edges, per-view PSNR, the spectral and held-out PSNR histories
DETAILS = ("band_errors", "band_edges", "view_psnr", "history", "progress")
NUMBERS = ("seconds", "steps", *SCORES, *FACTS)
KINDS = ("model", "baseline")


def json_safe(value: Any) -> Any:
    """JSON-safe copy: mappings as dicts, tuples as lists, ±∞ as ``"inf"``/``"-inf"``, NaN as None.

    Example:
        >>> json_safe({"psnr": float("inf"), "ssim": float("nan"), "shape": (2, 3)})
        {'psnr': 'inf', 'ssim': None, 'shape': [2, 3]}
    """
    if isinstance(value, Mapping):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _number(value: Any) -> Any:
    """A number as written by ``json_safe`` back to a float (∞ from its string, NaN from None); others unchanged."""
    if value in ("inf", "-inf"):
        return float(value)
    return math.nan if value is None else value


def _is_number(value: Any) -> bool:
    return value is None or value in ("inf", "-inf") or (isinstance(value, (int, float)) and not isinstance(value, bool))


def row_errors(row: Any, summary: bool = False) -> list[str]:
    """What is wrong with one (summary) row of a results file: missing or unknown keys, values of the wrong type."""
    if not isinstance(row, Mapping):
        return [f"not an object: {str(row)[:60]}"]
    problems = []
    required = ("method", "kind") if summary else ROW_KEYS
    problems += [f"no {key!r}" for key in required if key not in row]
    for key, value in row.items():
        base = key.removesuffix("_std").removesuffix("_n") if summary else key
        if summary and key == "n":
            ok = isinstance(value, int) and value >= 1
        elif key == "method":
            ok = isinstance(value, str) and bool(value)
        elif key == "kind":
            ok = value in KINDS
        elif key == "seed":
            ok = value is None or (isinstance(value, int) and not isinstance(value, bool))
        elif base in NUMBERS:
            ok = _is_number(value)
        elif key in TEXT:
            ok = value is None or isinstance(value, str)
        elif key in DETAILS and not summary:
            ok = isinstance(value, (list, Mapping))
        else:
            problems.append(f"unknown key {key!r}")
            continue
        if not ok:
            problems.append(f"{key!r} is {str(value)[:40]}")
    return problems


@dataclass(frozen=True)
class Results:
    """A comparison's results file: the command that wrote it, the package version, the protocol every row
    shares, the seeds, the rows (numbers as floats, ∞ and NaN included) and their summary."""

    command: str
    version: str
    protocol: dict[str, Any]
    seeds: list[int]
    rows: list[dict[str, Any]]
    summary: list[dict[str, Any]]

    @property
    def name(self) -> str:
        """The comparison that wrote it (``protocol["comparison"]``)."""
        return self.protocol["comparison"]


LAYOUT = ("command", "version", "protocol", "seeds", "rows", "summary")


def check_results(data: Any, where: str = "results.json") -> Results:
    """The typed results of a parsed ``results.json``, or ``InputError`` naming the first key that does not fit.

    Example:
        >>> row = {"method": "a", "kind": "model", "seed": 0, "seconds": 1.5, "steps": 10, "psnr": "inf"}
        >>> data = {"command": "python -m inr.experiments.x", "version": "0", "protocol": {"comparison": "x"}, "seeds": [0],
        ...         "rows": [row], "summary": [{"method": "a", "kind": "model", "n": 1, "psnr": "inf"}]}
        >>> check_results(data).rows[0]["psnr"]
        inf
        >>> check_results({**data, "rows": [{**row, "test_psnr": 3.0}]})
        Traceback (most recent call last):
        ...
        inr.errors.InputError: results.json: rows[0]: unknown key 'test_psnr'
    """
    if not isinstance(data, Mapping):
        raise InputError(f"{where}: not a JSON object")
    keys = set(data)
    if keys != set(LAYOUT):
        missing, extra = set(LAYOUT) - keys, keys - set(LAYOUT)
        raise InputError(
            f"{where}: keys {sorted(keys)}; the layout is {', '.join(LAYOUT)} (missing {sorted(missing)}, extra {sorted(extra)})"
        )
    kinds = {"command": str, "version": str, "protocol": Mapping, "seeds": list, "rows": list, "summary": list}
    for key, kind in kinds.items():
        if not isinstance(data[key], kind):
            raise InputError(f"{where}: {key} is a {type(data[key]).__name__}, not a {kind.__name__}")
    if not isinstance(data["protocol"].get("comparison"), str):
        raise InputError(f"{where}: protocol names no comparison")
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in data["seeds"]):
        raise InputError(f"{where}: seeds must be integers, got {data['seeds'][:5]}")
    for part in ("rows", "summary"):
        for i, row in enumerate(data[part]):
            problems = row_errors(row, summary=part == "summary")
            if problems:
                raise InputError(f"{where}: {part}[{i}]: {'; '.join(problems)}")
    typed = {
        part: [{k: _number(v) if k.removesuffix("_std") in NUMBERS else v for k, v in r.items()} for r in data[part]]
        for part in ("rows", "summary")
    }
    return Results(data["command"], data["version"], dict(data["protocol"]), list(data["seeds"]), typed["rows"], typed["summary"])


def load_results(path: Path | str) -> Results:
    """``check_results`` of a file; a missing, unreadable or malformed one is ``InputError`` naming it."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None
    return check_results(data, str(path))


def results_record(
    command: str,
    version: str,
    protocol: Mapping[str, Any],
    seeds: Sequence[int],
    rows: Sequence[Mapping],
    summary: Sequence[Mapping],
) -> dict[str, Any]:
    """The JSON-safe ``results.json`` object of the layout, checked as it will be read back."""
    record = json_safe(
        {"command": command, "version": version, "protocol": protocol, "seeds": list(seeds), "rows": rows, "summary": summary}
    )
    check_results(record)
    return record
