"""When each frequency band was learned: from a comparison's ``results.json``, the first measured step at which
each row's relative error in each band fell below a threshold, as a Markdown table.

    python -m inr.experiments.band_timeline outputs/compare_encoders/results.json --threshold 0.1
    python -m inr.experiments.band_timeline outputs/compare_encoders/results.json --target-psnr 22 23 24

The errors are those of the spectral history (``SpectralBiasCallback`` on the training pixels' grid, DC apart,
one measurement every 10 steps). A cell reads "step at which Δ_b < threshold"; ``—`` means the band never got
there within the run: at this budget the row did not learn it. With ``--target-psnr``, a second table reads
the held-out PSNR history (``progress``, every 10 steps) for the first step and training seconds at which each
row reached each target, as the comparison's own columns do for its one target.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

import numpy as np

from inr.experiments.progress import first_reach
from inr.run.command import ExperimentParser


def first_below(steps: Sequence[int], errors: Sequence[Sequence[Optional[float]]], threshold: float) -> list[Optional[int]]:
    """Per band b: min{steps[e] : errors[e][b] < threshold}, None if never (or the band has no energy: NaN/None).

    Example:
        >>> first_below([10, 20, 30], [[0.9, 1.0], [0.05, 0.5], [0.01, 0.2]], 0.1)
        [20, None]
    """
    e = np.array([[np.nan if v is None else v for v in row] for row in errors], dtype=np.float64)  # (E, B)
    if e.ndim != 2 or len(e) != len(steps):
        raise ValueError(f"errors must be (steps, bands) with {len(steps)} steps, got shape {e.shape}")
    below = e < threshold  # NaN compares False: a band without target energy is never "learned"
    return [int(steps[int(np.argmax(below[:, b]))]) if below[:, b].any() else None for b in range(e.shape[1])]


def row_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each row's name: its method, with its seed where the method has several rows (a run over seeds).

    Example:
        >>> row_names([{"method": "a", "seed": 0}, {"method": "a", "seed": 1}, {"method": "b", "seed": 0}])
        ['a (seed 0)', 'a (seed 1)', 'b']
    """
    counts: dict[Any, int] = {}
    for r in rows:
        counts[r["method"]] = counts.get(r["method"], 0) + 1
    return [f"{r['method']} (seed {r['seed']})" if counts[r["method"]] > 1 and "seed" in r else str(r["method"]) for r in rows]


def timeline_table(rows: Sequence[Mapping[str, Any]], threshold: float) -> str:
    """One line per model row of a comparison: its band edges' labels, then the step each band fell below
    ``threshold`` (``first_below``), then how many of the bands it learned."""
    models = [r for r in rows if "history" in r]
    if not models:
        raise ValueError("no model rows with a spectral history")
    edges = np.asarray(models[0]["history"]["edges"], dtype=np.float64)
    labels = [f"{lo:g}–{hi:g}" for lo, hi in zip(edges[:-1], edges[1:])]
    lines = ["| row | " + " | ".join(labels) + " | bands learned |", "|---|" + "---:|" * (len(labels) + 1)]
    for name, r in zip(row_names(models), models):
        h = r["history"]
        steps = first_below(h["steps"], h["errors"], threshold)
        cells = ["—" if s is None else str(s) for s in steps]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {sum(s is not None for s in steps)}/{len(steps)} |")
    return "\n".join(lines)


def target_table(rows: Sequence[Mapping[str, Any]], targets: Sequence[float]) -> str:
    """One line per model row: its final held-out PSNR, then for each target "step (seconds)" of the first
    measurement at or above it (``first_reach`` on ``progress``), ``—`` if never."""
    models = [r for r in rows if "progress" in r]
    if not models:
        raise ValueError("no model rows with a held-out PSNR history (progress)")
    lines = [
        "| row | final test PSNR (dB) | " + " | ".join(f"step (s) to {t:g} dB" for t in targets) + " |",
        "|---|---:|" + "---:|" * len(targets),
    ]
    for name, r in zip(row_names(models), models):
        h = r["progress"]
        cells = []
        for t in targets:
            i = first_reach(h["steps"], h["test_psnr"], t)
            cells.append("—" if i is None else f"{h['steps'][i]} ({h['train_seconds'][i]:.0f})")
        lines.append(f"| {name} | {h['test_psnr'][-1]:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> str:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("results", help="results.json written by python -m inr.experiments.compare_encoders")
    parser.add_argument("--threshold", type=float, default=0.1, help="relative band error that counts as learned (default 0.1)")
    parser.add_argument("--target-psnr", type=float, nargs="*", default=[], help="held-out PSNR targets (dB) for a second table")
    args = parser.parse_args(argv)
    path = Path(args.results)
    try:
        rows = json.loads(path.read_text())["rows"]
        table = timeline_table(rows, args.threshold)
        targets = target_table(rows, args.target_psnr) if args.target_psnr else ""
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"Step at which the training-grid error of each band (cycles per unit) first fell below {args.threshold:g}:\n")
    print(table)
    if targets:
        print("\nFirst step (training seconds) at which the held-out PSNR reached each target:\n")
        print(targets)
    return table + ("\n\n" + targets if targets else "")


if __name__ == "__main__":
    main()
