"""The encoder comparison's report: its Markdown table (model rows and baselines alike) and the note that
quotes the paper's settings and reported results beside it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from inr.experiments.paper_settings import MAPPINGS, PAPER_SETTINGS

# (header, row key, format): Δ are the relative errors of inr.spectral (DC apart, low/high = lower/upper
# half of the 16 bands) on the held-out pixels' grid, then on the training pixels' grid. The target is a
# held-out PSNR (``Protocol.target_psnr``): the first measured step reaching it and the training seconds
# until then; — when a row never reached it.
COLUMNS = (
    ("row", "encoder", "s"),
    ("setting", "setting", "s"),
    ("lr", "lr", ".0e"),
    ("train PSNR (dB)", "train_psnr", ".2f"),
    ("test PSNR (dB)", "test_psnr", ".2f"),
    ("test SSIM", "test_ssim", ".3f"),
    ("test Δ DC", "test_dc_error", ".3f"),
    ("test Δ low", "test_low_error", ".3f"),
    ("test Δ high", "test_high_error", ".3f"),
    ("train Δ low", "train_low_error", ".3f"),
    ("train Δ high", "train_high_error", ".3f"),
    ("time (s)", "seconds", ".0f"),
    ("ms/step", "ms_per_step", ".0f"),
    ("params", "params", ","),
    ("steps to target", "target_step", "d"),
    ("time to target (s)", "target_seconds", ".1f"),
)


def cell(value: Optional[Any], spec: str) -> str:
    """One table cell: ``—`` for a missing or NaN value, ``∞`` for an exact fit's PSNR, else ``format``.

    Example:
        >>> cell(float("inf"), ".2f"), cell(float("nan"), ".0f"), cell(0, ","), cell(12.345, ".2f")
        ('∞', '—', '—', '12.35')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    if spec == "," and value == 0:  # a baseline has no parameters
        return "—"
    return format(value, spec)


def markdown_table(rows: list[dict[str, Any]], columns: Sequence[tuple[str, str, str]] = COLUMNS) -> str:
    """The results as a Markdown table with ``columns`` (header, row key, format); with the default ``COLUMNS``
    the first five are row | setting | lr | train PSNR | test PSNR."""
    lines = [
        "| " + " | ".join(h for h, _, _ in columns) + " |",
        "|" + "|".join("---" if spec == "s" else "---:" for _, _, spec in columns) + "|",
    ]
    for r in rows:
        lines.append("| " + " | ".join(cell(r.get(key), spec) for _, key, spec in columns) + " |")
    return "\n".join(lines)


def json_safe(value: Any) -> Any:
    """JSON-safe copy: mappings as dicts, tuples as lists, non-finite floats as None (∞ = an exact fit).

    Example:
        >>> json_safe({"psnr": float("inf"), "shape": (2, 3)})
        {'psnr': None, 'shape': [2, 3]}
    """
    if isinstance(value, Mapping):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def paper_note(kind: str) -> str:
    """What the paper used and reports for this image kind, to read the table against.

    Example:
        >>> paper_note("text").splitlines()[0]
        "The paper's text settings: lr none 1e-03, basic 1e-03, positional 1e-03, gaussian 1e-03; positional scale 5, Gaussian σ = 14, m = 256; 3 × 256 ReLU MLP, sigmoid output, stax initialisation; 2000 full-batch steps at 512²."
    """
    s = PAPER_SETTINGS[kind]
    lrs = ", ".join(f"{m} {s.lr[m]:.0e}" for m in MAPPINGS)
    reported = ", ".join(f"{m} {s.test_psnr[m]:.2f}" for m in MAPPINGS)
    return (
        f"The paper's {kind} settings: lr {lrs}; positional scale {s.positional_scale:g}, Gaussian σ = {s.gaussian_sigma:g}, "
        f"m = {s.num_features}; {s.depth} × {s.width} ReLU MLP, sigmoid output, stax initialisation; {s.steps} full-batch "
        f"steps at {s.resolution}².\n"
        f"It reports held-out PSNR (dB; Tancik et al. 2020, Table 1, mean over {s.dataset}): {reported}."
    )
