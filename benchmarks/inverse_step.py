"""Training-step speed of an inverse task (CT through 20 projections) against a hand-written PyTorch loop,
and where the step's time goes.

    python benchmarks/inverse_step.py [--config ct.yaml] [--steps 20] [--repeats 5] [--override --data.init_args.resolution 64]

Variants, interleaved in each repeat (ratios are formed within a repeat, then their median and range):
  - hand loop: the same encoder, network, operator and Adam in plain PyTorch; the fixed grid's encoding is
    computed once (as the framework's cache does), then per step f = net(γ), A(f), mean |A f − y|², backward;
  - the framework as configured (``InverseFitting`` in a real ``Trainer.fit``, no callbacks);
  - the hand loop's two halves alone, with the same shapes: the network's forward + backward (loss on the
    field itself) and the operator's forward + backward (a leaf image through A).
Per-step time is the median gap between consecutive steps (framework: ``on_train_batch_end`` calls).
"""

from __future__ import annotations

import argparse
import statistics
import time

import lightning as L
import torch
from training_step import framework_step, instantiate, median_step


def hand_loop(config: str, steps: int, warmup: int, part: str = "all", extra: tuple = ()) -> float:
    """Median step time of the hand-written loop; ``part`` = all | network | operator."""
    model, dm, _ = instantiate(config, list(extra))
    dm.setup("fit")
    encoder, network, operator = model.encoder, model.network, dm.operator
    y = dm.measurements
    shape, channels = dm.shape, dm.out_channels
    with torch.no_grad():
        features = encoder(dm.grid.coords(dm.train_index))  # (N, m): fixed, encoded once
    image = torch.rand(channels, *shape, requires_grad=True)
    params = list(network.parameters()) if part != "operator" else [image]
    optimizer = torch.optim.Adam(params, lr=1e-3)
    stamps = []
    for _ in range(steps + warmup + 1):
        if part == "operator":
            loss = (operator(image) - y).abs().square().mean()
        else:
            field = network(features)  # (N, C)
            if part == "network":
                loss = field.square().mean()
            else:
                loss = (operator(field.T.reshape(channels, *shape)) - y).abs().square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        stamps.append(time.perf_counter())
    return median_step(stamps, warmup)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="ct.yaml")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--override", nargs=argparse.REMAINDER, default=[], help="config overrides, e.g. --data.init_args.resolution 64"
    )
    args = parser.parse_args()
    extra = tuple(args.override)
    L.seed_everything(0, verbose=False)
    variants = {
        "hand loop": lambda: hand_loop(args.config, args.steps, args.warmup, extra=extra),
        "framework (as configured)": lambda: framework_step(args.config, args.steps, args.warmup, extra=extra),
        "network forward + backward alone": lambda: hand_loop(args.config, args.steps, args.warmup, "network", extra),
        "operator forward + backward alone": lambda: hand_loop(args.config, args.steps, args.warmup, "operator", extra),
    }
    runs = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, fn in variants.items():
            runs[name].append(fn())
    base = runs["hand loop"]
    print(
        f"\n{args.config} {' '.join(extra)}: {torch.get_num_threads()} threads; median of {args.repeats} interleaved runs × {args.steps} steps"
    )
    print("| variant | step (ms) | ratio vs hand loop (range) |\n|---|---:|---|")
    for name, values in runs.items():
        ratios = [t / b for t, b in zip(values, base)]
        print(
            f"| {name} | {statistics.median(values) * 1e3:.1f} | {statistics.median(ratios):.3f} ({min(ratios):.2f}–{max(ratios):.2f}) |"
        )


if __name__ == "__main__":
    main()
