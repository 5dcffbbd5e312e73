"""What a rate–distortion run shows: the Markdown table of every codec's BD-rate and BD-PSNR against the anchor in
both conventions (``rd_bd``), and the figure of the mean curves (PSNR against bpp, one line per codec)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from inr.experiments.rd_bd import Delta, mean_curves, per_image
from inr.io.files import atomic_write

CELLS = ("BD-rate per-image", "BD-rate mean-curve", "BD-PSNR per-image", "BD-PSNR mean-curve")


def _cell(delta: Delta, unit: str, images: int, averaged: bool) -> str:
    if not math.isfinite(delta.value):
        return "n/a"
    part = f" ({delta.images}/{images} images)" if averaged and delta.images != images else ""
    return f"{delta.value:+.2f}{unit}{part}"


def bd_table(docs: dict[str, dict[str, Any]], anchor: str) -> str:
    """The Markdown table of each codec of ``docs`` (name -> its ``rd_results`` document) against ``anchor``:
    BD-rate (%) and BD-PSNR (dB), per image then averaged, and of the mean curves; the mean seconds; the reasons of
    the deltas that could not be computed, below it."""
    base = docs[anchor]
    images = len(base["per_image"])
    lines = [
        f"BD against {anchor} (Akima; negative BD-rate = fewer bits at equal PSNR). per-image: each image's delta, "
        "then the mean over images; mean-curve: the delta of the mean curves (CompressAI's).",
        "",
        "| codec | BD-rate per-image | BD-rate mean-curve | BD-PSNR per-image | BD-PSNR mean-curve | points | bpp range "
        "| encode s | decode s |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    notes = []
    for name, doc in docs.items():
        results = doc["results"]
        if name == anchor:
            cells = ["anchor"] * 4
        else:
            deltas = [
                per_image(base["per_image"], doc["per_image"], "rate"),
                mean_curves(base["results"], results, "rate"),
                per_image(base["per_image"], doc["per_image"], "psnr"),
                mean_curves(base["results"], results, "psnr"),
            ]
            units = [" %", " %", " dB", " dB"]
            cells = [_cell(d, u, images, c.endswith("per-image")) for d, u, c in zip(deltas, units, CELLS)]
            notes += [f"- {name}, {c}: {d.reason}" for d, c in zip(deltas, CELLS) if d.reason]
        bpp = results["bpp"]
        seconds = [np.nanmean(results[k]) if k in results else math.nan for k in ("encoding_time", "decoding_time")]
        times = ["n/a" if not math.isfinite(s) else f"{s:.3g}" for s in seconds]
        lines.append(
            f"| {name} | {' | '.join(cells)} | {len(bpp)} | {np.nanmin(bpp):.3f}–{np.nanmax(bpp):.3f} | {' | '.join(times)} |"
        )
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def rd_figure(docs: dict[str, dict[str, Any]], path: Path, title: str = "") -> None:
    """PSNR (dB) against bpp of every codec's mean curve, one line each, as a PNG written whole."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, doc in docs.items():
        ax.plot(doc["results"]["bpp"], doc["results"]["psnr"], marker="o", markersize=3, label=name)
    ax.set_xlabel("bits per pixel")
    ax.set_ylabel("PSNR (dB)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_write(path) as f:
        fig.savefig(f, format="png", dpi=120)
    plt.close(fig)
