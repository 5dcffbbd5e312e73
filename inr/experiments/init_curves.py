"""The learned-initialisation study's curves: a standard init whose learning rate is tuned for each step budget (the
fair baseline at few steps), and the score against wall-clock seconds with the meta-training amortised.

A fit's best learning rate depends on its budget: Adam at 1e-3 (the protocol's) is slow over the first few steps,
where a larger rate is faster and a worse end point. The ``tuned`` row is, at each budget n, the rate rows' row (the
paper's init with Adam at each rate of ``RATES``, and the protocol's ``paper`` row) whose mean score after n steps is
highest:

    tuned_n = rows of argmax_r mean_signals score_n(r).

The rate is chosen on the test signals themselves (an oracle for the baseline: it can only raise it), so a learned
init shown above ``tuned`` at n is above every rate of the grid at n.

Wall-clock: a learned row's seconds to step n are its fit's seconds plus its meta-training's seconds shared over N
signals, t_n = fit_n + meta / N; a standard row's are its fit's alone.

    rows = tuned_rows(rows, ["psnr_2", "psnr"])          # the derived rows, one per signal (and angle count)
    record = curves(summary, marks, meta_seconds, 100)   # curves.json
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

# the paper's init with Adam at these rates beside the protocol's (the ``paper`` row): a grid of half-decades above it,
# and two below it (``BELOW``), which a study runs only when named (its documented runs are the grid above)
RATES = {"adam1e-4": 1e-4, "adam3e-4": 3e-4, "adam3e-3": 3e-3, "adam1e-2": 1e-2, "adam3e-2": 3e-2}
BELOW = ("adam1e-4", "adam3e-4")
TUNED = "tuned"


def candidates(methods: Sequence[str]) -> list[str]:
    """The rows a tuned rate is chosen from, of those present: the paper's init at the protocol's rate and at ``RATES``.

    Example:
        >>> candidates(["reptile", "paper", "adam1e-2", "bicubic"])
        ['paper', 'adam1e-2']
    """
    return [m for m in methods if m == "paper" or m in RATES]


def mean_of(rows: Sequence[Mapping[str, Any]], key: str) -> float:
    """The mean of ``key`` over ``rows`` whose value is a finite number and not marked collapsed (NaN if none)."""
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float)) and math.isfinite(r[key]) and not r.get("collapsed")]
    return sum(values) / len(values) if values else math.nan


def tuned_rows(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[str], group: str = "angles"
) -> tuple[list[dict[str, Any]], dict[Any, dict[str, str]]]:
    """The ``tuned`` rows (one per signal and seed of each ``group`` value: CT's angle count; one group elsewhere) and
    the choice, {group value: {key: the chosen row}}: for each key, the candidate row (``candidates``) with the highest
    mean over the group's signals, each signal's value copied from it. Ties go to the first candidate (the protocol's
    rate). No rows where fewer than two candidates ran.

    Example:
        >>> rows = [{"method": m, "kind": "model", "signal": s, "seed": 0, "psnr_2": v2 + s, "psnr": v}
        ...         for s in range(2) for m, v2, v in (("paper", 10.0, 27.0), ("adam1e-2", 14.0, 26.0))]
        >>> tuned, choice = tuned_rows(rows, ["psnr_2", "psnr"])
        >>> [(r["signal"], r["psnr_2"], r["psnr"]) for r in tuned], choice
        ([(0, 14.0, 27.0), (1, 15.0, 27.0)], {None: {'psnr_2': 'adam1e-2', 'psnr': 'paper'}})
    """
    out: list[dict[str, Any]] = []
    choices: dict[Any, dict[str, str]] = {}
    for value in dict.fromkeys(r.get(group) for r in rows):
        members = [r for r in rows if r.get(group) == value and r.get("kind") == "model"]
        names = candidates(list(dict.fromkeys(r["method"] for r in members)))
        if len(names) < 2:
            continue
        by_name = {n: [r for r in members if r["method"] == n] for n in names}
        chosen: dict[str, str] = {}
        for key in keys:
            means = {n: mean_of(by_name[n], key) for n in names}
            finite = {n: m for n, m in means.items() if math.isfinite(m)}
            if finite:
                chosen[key] = max(finite, key=lambda n: (finite[n], -names.index(n)))
        choices[value] = chosen
        signals = list(dict.fromkeys((r.get("signal"), r.get("seed")) for r in by_name[names[0]]))
        for signal, seed in signals:
            row: dict[str, Any] = {"method": TUNED, "kind": "model", "signal": signal, "seed": seed, "rates": {}}
            if value is not None:
                row[group] = value
            for key, name in chosen.items():
                source = next((r for r in by_name[name] if (r.get("signal"), r.get("seed")) == (signal, seed)), None)
                if source is not None and not source.get("collapsed"):
                    row[key] = source.get(key)
                    row[seconds_key(key)] = source.get(seconds_key(key))
                    row["rates"][key] = name
            out.append(row)
    return out, choices


def seconds_key(key: str) -> str:
    """The fit-seconds key beside a score key: ``seconds_n`` after n steps, ``seconds_full`` at the full count.

    Example:
        >>> seconds_key("psnr_30"), seconds_key("psnr"), seconds_key("iou_2")
        ('seconds_30', 'seconds_full', 'seconds_2')
    """
    head, _, tail = key.rpartition("_")
    return f"seconds_{tail}" if head and tail.isdigit() else "seconds_full"


def curves(
    summary: Sequence[Mapping[str, Any]],
    metric: str,
    marks: Sequence[int],
    steps: int,
    meta_seconds: Mapping[str, float],
    amortised_over: int,
    group: Optional[Any] = None,
) -> dict[str, Any]:
    """Per model row of the summary (one angle count ``group`` for CT): its mean score and mean fit seconds after each
    mark and at the full count, and its seconds with the meta-training shared over ``amortised_over`` signals
    (t_n = fit_n + meta / N; ``meta_seconds``: the learned rows' meta-training seconds)."""
    out: dict[str, Any] = {"amortised_over": amortised_over, "rows": {}}
    for s in summary:
        if s.get("kind") != "model" or (group is not None and s.get("angles") != group):
            continue
        points = [(m, f"{metric}_{m}", f"seconds_{m}") for m in marks if m < steps] + [(steps, metric, "seconds_full")]
        meta = float(meta_seconds.get(s["method"], 0.0))
        entry = {"steps": [], "score": [], "fit_seconds": [], "seconds": [], "meta_seconds": meta}
        for m, key, seconds in points:
            score, fit = s.get(key), s.get(seconds)
            if isinstance(score, (int, float)) and math.isfinite(score):
                entry["steps"].append(m)
                entry["score"].append(score)
                fit = fit if isinstance(fit, (int, float)) and math.isfinite(fit) else math.nan
                entry["fit_seconds"].append(fit)
                entry["seconds"].append(fit + meta / amortised_over)
        out["rows"][s["method"]] = entry
    return out


def curves_figure(record: Mapping[str, Any], metric: str, title: str) -> Figure:
    """Two panels: each row's mean score against the step (log scale, step 0 drawn at ½) and against the seconds with
    the meta-training amortised (``curves``' record)."""
    fig, (by_step, by_time) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, (name, e) in enumerate(record["rows"].items()):
        style = "--" if name in RATES or name == "paper" else "-"
        width = 2.2 if name == TUNED else 1.2
        x = [max(m, 0.5) for m in e["steps"]]
        by_step.plot(x, e["score"], style, color=f"C{i % 10}", marker=".", lw=width, label=name)
        timed = [(t, v) for t, v in zip(e["seconds"], e["score"]) if math.isfinite(t) and t > 0]
        if timed:
            by_time.plot(*zip(*timed), style, color=f"C{i % 10}", marker=".", lw=width, label=name)
    by_step.set_xscale("log")
    by_step.set_xlabel("steps of the fit (step 0 at ½)")
    by_time.set_xscale("log")
    by_time.set_xlabel(f"seconds: the fit's, plus meta-training / {record['amortised_over']} signals")
    for ax in (by_step, by_time):
        ax.set_ylabel(f"held-out {metric}")
        ax.grid(alpha=0.3, which="both")
    by_step.legend(fontsize=7, ncol=2)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
