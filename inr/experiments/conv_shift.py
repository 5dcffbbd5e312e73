"""The cost of fitting a target whose spectrum is shifted against the input's (Tang et al. 2022's third
defect), over seeds and shifts, with 95 % confidence intervals.

    python -m inr.experiments.conv_shift --out docs      # docs/conv_shift.png + a Markdown table

A conv decoder maps a 32×32 grey image x to y = x · cos(2πΔn/W) (n the column): y's spectrum is x's moved
by ±Δ columns, Y[u, v] = (X[u, v − Δ] + X[u, v + Δ]) / 2. Δ and W − Δ give the same target, so Δ ≤ W/2
covers every shift; Δ = W/2 = 16 is the Nyquist shift, a special case: both copies land on the same bins,
y = x · (−1)^n and Y[u, v] = X[u, v + W/2] (the whole spectrum moved by half the grid, not split in two).

Per shift and seed: a ReLU ``ConvDecoder`` (width 16, depth 4, k 3, circular, He init) trained by full-batch
Adam; the first measured step at which its relative error ‖f − y‖/‖y‖ drops below a threshold and ‖θ − θ₀‖
there, the final error and ‖θ − θ₀‖. The same decoder without ReLU is a circular linear filter with a 9×9
kernel plus a constant (biases), which maps each frequency only to itself: its trained error, and the
least-squares floor of every such filter (``best_filter_error``), which no seed or training length can beat.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from matplotlib.figure import Figure

from inr.experiments.conv.training import best_filter_error, fit, modulate
from inr.experiments.conv_bottlenecks import gray
from inr.experiments.stats import format_interval, mean_interval
from inr.io.allocator import retain_freed_memory
from inr.io.threads import torch_threads
from inr.networks import ConvDecoder
from inr.run.command import ExperimentParser

SIZE, WIDTH, DEPTH, KERNEL = 32, 16, 4, 3


def decoder(seed: int, relu: bool) -> ConvDecoder:
    torch.manual_seed(seed)
    return ConvDecoder(1, 1, WIDTH, DEPTH, KERNEL, relu=relu)


def shift_study(shifts: list[int], seeds: int, steps: int, lr: float, threshold: float) -> dict[int, dict]:
    """Per shift: per-seed lists of the ReLU decoder's step and ‖Δθ‖ at the threshold (NaN if never
    reached), its final error and ‖Δθ‖, the linear decoder's final error, and the linear floor."""
    x = gray(SIZE)  # (1, H, W)
    out: dict[int, dict] = {}
    for shift in shifts:
        y = modulate(x, shift)
        row = {"hit_step": [], "hit_distance": [], "final_error": [], "final_distance": [], "linear_error": []}
        for seed in range(seeds):
            r = fit(decoder(seed, relu=True), lambda n: n(x[None])[0], y, steps, lr, every=5, threshold=threshold)
            row["hit_step"].append(float(r["hit_step"]))
            row["hit_distance"].append(float(r["hit_distance"]))
            row["final_error"].append(float(r["rel_error"][-1]))
            row["final_distance"].append(float(r["distance"][-1]))
            lin = fit(decoder(seed, relu=False), lambda n: n(x[None])[0], y, steps, lr, every=steps)
            row["linear_error"].append(float(lin["rel_error"][-1]))
        row["linear_floor"] = best_filter_error(x, y, radius=DEPTH * (KERNEL // 2))
        out[shift] = row
    return out


def markdown_table(study: dict[int, dict], steps: int, threshold: float) -> str:
    lines = [
        f"| Δ | ReLU: seeds reaching error < {threshold} | step reached | ‖θ − θ₀‖ there | error after {steps} steps "
        f"| ‖θ − θ₀‖ after {steps} | linear: error after {steps} | floor of any 9×9 linear filter |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for shift, row in sorted(study.items()):
        step, _, reached = mean_interval(row["hit_step"])
        cells = [
            format_interval(*mean_interval(row[k])[:2])
            for k in ("hit_step", "hit_distance", "final_error", "final_distance", "linear_error")
        ]
        label = f"{shift} (Nyquist)" if shift == SIZE // 2 else str(shift)
        lines.append(f"| {label} | {reached}/{len(row['hit_step'])} | " + " | ".join(cells) + f" | {row['linear_floor']:.3f} |")
    return "\n".join(lines)


def plot(study: dict[int, dict], threshold: float, steps: int, out: Path) -> None:
    shifts = sorted(study)
    fig = Figure(figsize=(14, 4), layout="constrained")
    axes = fig.subplots(1, 3)

    def bars(ax, key, label, **kw):
        stats = np.array([mean_interval(study[s][key])[:2] for s in shifts])  # (shifts, 2): mean, half-width
        ax.errorbar(shifts, stats[:, 0], yerr=np.nan_to_num(stats[:, 1]), marker="o", capsize=3, label=label, **kw)

    bars(axes[0], "hit_distance", f"when error < {threshold}")
    bars(axes[0], "final_distance", f"after {steps} steps")
    axes[0].set(ylabel="‖θ − θ₀‖", title="parameter movement (ReLU decoder)")
    bars(axes[1], "hit_step", f"first step with error < {threshold}")
    axes[1].set(ylabel="step", title="steps to the threshold (ReLU decoder)")
    bars(axes[2], "final_error", "ReLU decoder")
    bars(axes[2], "linear_error", "linear decoder")
    axes[2].plot(shifts, [study[s]["linear_floor"] for s in shifts], "k--", label="floor of any 9×9 linear filter")
    axes[2].set(ylabel="‖f − y‖ / ‖y‖", title=f"relative error after {steps} steps")
    for ax in axes:
        ax.set(xscale="symlog", xlabel=f"shift Δ (columns of {SIZE}; {SIZE // 2} = Nyquist)")
        ax.legend(fontsize=8)
    fig.suptitle(f"fitting x·cos(2πΔn/W) from x: mean and 95 % t-interval over {len(study[shifts[0]]['hit_step'])} seeds")
    fig.savefig(out / "conv_shift.png", dpi=110)


def main(argv=None) -> dict[int, dict]:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--out", default="outputs/conv_shift", help="folder of conv_shift.png and conv_shift.json")
    parser.add_argument("--shifts", type=int, nargs="+", default=[0, 1, 2, 4, 8, 12, 15, 16], help="frequency shifts Δ (columns)")
    parser.add_argument("--seeds", type=int, default=10, help="random initialisations per shift")
    parser.add_argument("--steps", type=int, default=300, help="Adam steps per fit")
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam learning rate")
    parser.add_argument("--threshold", type=float, default=0.35, help="relative error that counts as fitted")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    if any(not 0 <= s <= SIZE // 2 for s in args.shifts):
        parser.error(f"shifts must lie in [0, {SIZE // 2}] (Δ and {SIZE} − Δ give the same target)")
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    with torch_threads(args.threads):
        return run(args)


def run(args: argparse.Namespace) -> dict[int, dict]:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    study = shift_study(args.shifts, args.seeds, args.steps, args.lr, args.threshold)
    plot(study, args.threshold, args.steps, out)
    (out / "conv_shift.json").write_text(json.dumps({str(k): v for k, v in study.items()}, indent=1, allow_nan=True))
    print(
        f"mean ± 95 % t-interval over {args.seeds} seeds; a 32×32 grey astronaut, ReLU decoder width {WIDTH}, depth {DEPTH}, k {KERNEL}, Adam lr {args.lr}\n"
    )
    print(markdown_table(study, args.steps, args.threshold))
    print(f"\nfigure: {out / 'conv_shift.png'}")
    return study


if __name__ == "__main__":
    main()
